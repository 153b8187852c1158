/**
 * One trace across a cluster: three `sluice serve --redis --otel` processes (each exporting its spans
 * over OTLP/HTTP JSON to a receiver this test runs on loopback) and a traced Sluice client in this
 * process. A request sent to an instance that does not own the session is forwarded; the trace
 * shows the client's span, the receiving instance's hop span (`sluice.forward`, a child of the
 * client span through the HTTP header) and the owner's server span (a child of the client span
 * through `_meta`, linked to the hop), all with one trace id. Then the same behind nginx round-robin.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SpanKind } from '@opentelemetry/api';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { type ClusterFixture, startClusterFixture } from '../helpers/cluster-fixture.js';
import { withDeadline } from '../helpers/deadline.js';
import { findNginx } from '../helpers/nginx.js';
import { api, testTracing } from '../helpers/otel.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { findRedis } from '../helpers/redis.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const missing =
  findRedis() === undefined
    ? 'SKIPPED: redis-server not installed — .ci/run installs it'
    : findNginx() === undefined
      ? 'SKIPPED: nginx not installed — .ci/run installs it'
      : false;

const tracing = testTracing();

function clientOf(
  url: string,
  sessionId?: string,
): { client: Client; transport: StreamableHttpClientTransport } {
  const client = new Client({ name: 'traced', version: '1.0.0' });
  const transport = new StreamableHttpClientTransport(new URL(url), {
    tracing: { api, tracer: tracing.provider.getTracer('client') },
    ...(sessionId === undefined ? {} : { sessionId }),
    openStandaloneStream: false,
  });
  return { client, transport };
}

/** Calls echo under a fresh app span; returns the client span of that call. */
async function tracedEcho(client: Client, text: string) {
  const app = tracing.provider.getTracer('app').startSpan(`app ${text}`);
  await api.context.with(api.trace.setSpan(api.context.active(), app), () =>
    withDeadline(client.callTool({ name: 'echo', arguments: { text } }), 10_000, `echo ${text}`),
  );
  app.end();
  const span = tracing
    .spans()
    .find((s) => s.kind === SpanKind.CLIENT && s.spanContext().traceId === app.spanContext().traceId);
  assert.ok(span, `client span of ${text}`);
  return span;
}

function serverSpanOf(spans: ReceivedSpan[], traceId: string): ReceivedSpan | undefined {
  return spans.find((s) => s.traceId === traceId && s.name === 'tools/call echo' && s.kind === 2);
}

describe('one trace across cluster instances (OTLP/HTTP exporter, JSON)', { skip: missing }, () => {
  let fx: ClusterFixture;
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
    const register = pathToFileURL(join(repoRoot(), 'dist', 'test', 'helpers', 'otel-register.js')).href;
    fx = await startClusterFixture({
      leaseMs: 1_500,
      args: ['--otel'],
      env: { NODE_OPTIONS: `--import=${register}`, SLUICE_TEST_OTLP_URL: receiver.url },
    });
  });
  after(async () => {
    await fx?.stop();
    await receiver?.close();
  });

  test('client → non-owner (hop span) → owner (server span), one trace id', async () => {
    const [m0, m1] = fx.members;
    assert.ok(m0 !== undefined && m1 !== undefined);
    const a = clientOf(m0.url);
    await withDeadline(a.client.connect(a.transport), 10_000, 'initialize at member 0');
    const sid = a.transport.sessionId;
    assert.ok(sid !== undefined);
    const b = clientOf(m1.url, sid);
    await withDeadline(b.client.connect(b.transport), 10_000, 'attach at member 1');
    try {
      const call = await tracedEcho(b.client, 'hop');
      const traceId = call.spanContext().traceId;
      await receiver.until(
        (spans) =>
          serverSpanOf(spans, traceId) !== undefined &&
          spans.some((s) => s.traceId === traceId && s.name === 'sluice.forward'),
        15_000,
        'hop and server spans exported',
      );
      const hop = receiver.spans.find((s) => s.traceId === traceId && s.name === 'sluice.forward');
      const server = serverSpanOf(receiver.spans, traceId);
      assert.ok(hop !== undefined && server !== undefined);
      assert.equal(hop.kind, 3, 'the hop is a CLIENT span (OTLP kind 3)');
      assert.equal(hop.parentSpanId, call.spanContext().spanId, 'hop: child of the client span (header)');
      assert.equal(hop.attributes['server.port'], Number(new URL(m0.url).port), 'hop: to the owner');
      assert.equal(server.parentSpanId, call.spanContext().spanId, 'owner: child of the client span (_meta)');
      assert.deepEqual(server.links, [{ traceId, spanId: hop.spanId }], 'owner: linked to the hop');
      assert.equal(server.attributes['mcp.session.id'], sid);
      assert.equal(server.attributes['gen_ai.tool.name'], 'echo');
      assert.ok(
        receiver.contentTypes.every((c) => c.startsWith('application/json')),
        String(receiver.contentTypes),
      );
    } finally {
      await b.transport.close();
      await a.transport.close().catch(() => undefined);
    }
  });

  test('behind nginx round-robin: every call one trace; forwarded calls show their hop', async () => {
    const c = clientOf(fx.url);
    await withDeadline(c.client.connect(c.transport), 10_000, 'initialize through nginx');
    try {
      let hops = 0;
      for (let i = 0; i < 6; i++) {
        const call = await tracedEcho(c.client, `rr-${i}`);
        const traceId = call.spanContext().traceId;
        await receiver.until(
          (spans) => serverSpanOf(spans, traceId) !== undefined,
          15_000,
          `server span ${i}`,
        );
        const server = serverSpanOf(receiver.spans, traceId) as ReceivedSpan;
        assert.equal(server.parentSpanId, call.spanContext().spanId);
        // A forwarded call's owner span links the hop (exported by another process, maybe later).
        const link = server.links[0];
        if (link !== undefined) {
          await receiver.until(
            (spans) => spans.some((x) => x.spanId === link.spanId),
            15_000,
            `hop span ${i}`,
          );
          const hop = receiver.spans.find((x) => x.spanId === link.spanId) as ReceivedSpan;
          hops++;
          assert.equal(hop.name, 'sluice.forward');
          assert.equal(hop.traceId, traceId);
          assert.equal(hop.parentSpanId, call.spanContext().spanId);
        }
      }
      // Round-robin over three instances with no affinity: most calls land on a non-owner.
      assert.ok(hops >= 2, `forwarded calls traced: ${hops}`);
    } finally {
      await c.transport.close();
    }
  });
});
