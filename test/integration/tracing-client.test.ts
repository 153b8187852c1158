/**
 * Client spans with a real OpenTelemetry SDK, end to end against a traced Sluice server: a CLIENT
 * span per request (initialize and list calls included), its context in `_meta` and in the
 * `traceparent` header so the server's span is its child, a caller's own `_meta.traceparent` left
 * alone, and the client metrics through the OpenTelemetry metrics API (`@opentelemetry/sdk-metrics`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { SpanKind } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { type CreateServer, type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { MODERN, modernMeta } from '../helpers/modern.js';
import { api, testTracing, traceparent } from '../helpers/otel.js';

const tracing = testTracing();

/** Collects on demand (no timer). */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

function createEcho(): McpServer {
  const server = new McpServer({ name: 'echo', version: '1.0.0' });
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool('fails', {}, async () => ({ content: [{ type: 'text', text: 'no' }], isError: true }));
  return server;
}

function byKind(name: string, kind: SpanKind): ReadableSpan[] {
  return tracing.spans().filter((s) => s.name === name && s.kind === kind);
}

async function spanOf(name: string, kind: SpanKind): Promise<ReadableSpan> {
  const end = Date.now() + 5_000;
  while (Date.now() < end) {
    const s = byKind(name, kind)[0];
    if (s !== undefined) return s;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no ${SpanKind[kind]} span ${name}: ${tracing.spans().map((s) => `${s.name}/${s.kind}`)}`);
}

describe('client spans, injection, and client metrics', () => {
  let served: Served;
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  before(async () => {
    served = await serve({
      createServer: createEcho as unknown as CreateServer,
      port: 0,
      host: '127.0.0.1',
      tracing: { api, tracer: tracing.provider.getTracer('server') },
    });
  });
  after(async () => {
    await served.close({ graceMs: 100 });
    await meterProvider.shutdown();
  });

  test('one trace: caller span → client span → server span, for initialize, list and call', async () => {
    tracing.reset();
    const client = new Client({ name: 'traced-client', version: '1.0.0' });
    const transport = new StreamableHttpClientTransport(new URL(served.url), {
      tracing: { api, tracer: tracing.provider.getTracer('client'), meter: meterProvider.getMeter('client') },
    });
    const outer = tracing.provider.getTracer('app').startSpan('app-work');
    const ctx = api.trace.setSpan(api.context.active(), outer);
    await api.context.with(ctx, async () => {
      await withDeadline(client.connect(transport), 5_000, 'connect');
      await withDeadline(client.listTools(), 5_000, 'list');
      await withDeadline(client.callTool({ name: 'echo', arguments: { text: 'hi' } }), 5_000, 'call');
      await withDeadline(client.callTool({ name: 'fails', arguments: {} }), 5_000, 'fails');
    });
    outer.end();
    const traceId = outer.spanContext().traceId;
    for (const name of ['initialize', 'tools/list', 'tools/call echo']) {
      const c = await spanOf(name, SpanKind.CLIENT);
      const s = await spanOf(name, SpanKind.SERVER);
      assert.equal(c.spanContext().traceId, traceId, `${name}: client span in the caller's trace`);
      assert.equal(
        c.parentSpanContext?.spanId,
        outer.spanContext().spanId,
        `${name}: child of the caller's span`,
      );
      assert.equal(
        s.parentSpanContext?.spanId,
        c.spanContext().spanId,
        `${name}: server span is the client span's child`,
      );
      // Header and _meta carried the same context: no separate HTTP context to link.
      assert.equal(s.links.length, 0);
      assert.equal(c.attributes['mcp.method.name'], name.split(' ')[0]);
    }
    const call = await spanOf('tools/call echo', SpanKind.CLIENT);
    assert.equal(call.attributes['gen_ai.tool.name'], 'echo');
    assert.equal(call.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(call.attributes['mcp.session.id'], transport.sessionId);
    assert.equal(call.attributes['server.port'], served.port);
    assert.equal(call.attributes['mcp.protocol.version'], '2025-11-25');
    const fails = await spanOf('tools/call fails', SpanKind.CLIENT);
    assert.equal(fails.attributes['error.type'], 'tool_error');

    await transport.close();
    const { resourceMetrics } = await reader.collect();
    const metrics = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const op = metrics.find((m) => m.descriptor.name === 'mcp.client.operation.duration');
    assert.ok(op, 'mcp.client.operation.duration recorded');
    assert.equal(op.descriptor.unit, 's');
    const methods = op.dataPoints.map(
      (p) => `${p.attributes['mcp.method.name']}|${p.attributes['error.type'] ?? ''}`,
    );
    for (const m of ['initialize|', 'tools/list|', 'tools/call|', 'tools/call|tool_error'])
      assert.ok(methods.includes(m), `${m} in ${methods}`);
    const session = metrics.find((m) => m.descriptor.name === 'mcp.client.session.duration');
    assert.ok(session, 'mcp.client.session.duration recorded at close');
    assert.equal(session.dataPoints.length, 1);
  });

  test("a _meta.traceparent the caller set is kept: the server's span is its child", async () => {
    tracing.reset();
    const client = new Client({ name: 'traced-client', version: '1.0.0' });
    const transport = new StreamableHttpClientTransport(new URL(served.url), {
      tracing: { api, tracer: tracing.provider.getTracer('client') },
    });
    await withDeadline(client.connect(transport), 5_000, 'connect');
    try {
      const mine = traceparent(0x5151, 0x5252);
      await withDeadline(
        client.request(
          {
            method: 'tools/call',
            params: { name: 'echo', arguments: { text: 'x' }, _meta: { traceparent: mine } },
          },
          CallToolResultSchema,
        ),
        5_000,
        'call',
      );
      const server = await spanOf('tools/call echo', SpanKind.SERVER);
      const client_ = await spanOf('tools/call echo', SpanKind.CLIENT);
      assert.equal(server.parentSpanContext?.spanId, mine.slice(36, 52));
      assert.equal(server.spanContext().traceId, mine.slice(3, 35));
      // The HTTP header still names the client span: the server links it.
      assert.equal(server.links[0]?.context.spanId, client_.spanContext().spanId);
    } finally {
      await transport.close();
    }
  });

  test('a 2026-07-28 request (per-request _meta, no session) is traced the same way', async () => {
    tracing.reset();
    const client = new Client({ name: 'traced-client', version: '1.0.0' });
    const transport = new StreamableHttpClientTransport(new URL(served.url), {
      tracing: { api, tracer: tracing.provider.getTracer('client') },
    });
    await withDeadline(client.connect(transport), 5_000, 'connect');
    try {
      tracing.reset();
      await withDeadline(
        client.request(
          { method: 'tools/call', params: { name: 'echo', arguments: { text: 'm' }, _meta: modernMeta() } },
          CallToolResultSchema,
        ),
        5_000,
        'modern call',
      );
      const c = await spanOf('tools/call echo', SpanKind.CLIENT);
      const s = await spanOf('tools/call echo', SpanKind.SERVER);
      assert.equal(c.attributes['mcp.protocol.version'], MODERN);
      assert.equal(s.attributes['mcp.protocol.version'], MODERN);
      assert.equal(s.attributes['mcp.session.id'], undefined);
      assert.equal(s.parentSpanContext?.spanId, c.spanContext().spanId);
    } finally {
      await transport.close();
    }
  });

  test('no tracer provider registered: nothing injected, nothing recorded', async () => {
    const seen: unknown[] = [];
    const client = new Client({ name: 'plain', version: '1.0.0' });
    const transport = new StreamableHttpClientTransport(new URL(served.url), {
      tracing: { api },
      fetch: async (url, init) => {
        seen.push({ header: new Headers(init?.headers).get('traceparent'), body: String(init?.body) });
        return fetch(url, init);
      },
    });
    await withDeadline(client.connect(transport), 5_000, 'connect');
    await withDeadline(client.callTool({ name: 'echo', arguments: { text: 'x' } }), 5_000, 'call');
    await transport.close();
    assert.ok(seen.length >= 2);
    for (const s of seen as { header: string | null; body: string }[]) {
      assert.equal(s.header, null);
      assert.ok(!s.body.includes('traceparent'), s.body);
    }
  });
});
