// Field hardening, item 1: the client must not run a tool twice. A proxy that dies after forwarding a
// POST (before any response byte) looks to the client like a stale keep-alive socket; only requests
// marked idempotent (and messages that are not requests) may be sent again (RFC 9110 §9.2.2). The
// test puts a loopback TCP proxy between client and server that forwards a matching request, then
// cuts the client's connection, and counts executions on the server. Once per HTTP adapter: the fetch
// adapter cannot tell a reused socket, so it treats every lost connection as the Node adapter treats a
// stale one (Node's fetch, undici: a `TypeError` whose cause is "other side closed" or ECONNRESET).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  idempotencyMeta,
  type StreamableHttpClientOptions,
  StreamableHttpClientTransport,
} from '../../src/client/index.js';
import { CLIENT_ADAPTERS } from '../helpers/client-adapters.js';
import { withDeadline } from '../helpers/deadline.js';
import { until } from '../helpers/http.js';
import { requestCutProxy } from '../helpers/request-cut-proxy.js';
import { type Running, startServer } from '../helpers/test-server.js';

interface CuttingProxy {
  url: string;
  /** Requests whose bytes contain this string are forwarded, then the client's connection is cut. */
  cut: { match: string; remaining: number };
  readonly cuts: number;
  close(): Promise<void>;
}

async function cuttingProxy(target: Running): Promise<CuttingProxy> {
  const cut = { match: '\u0000never', remaining: 0 };
  const proxy = await requestCutProxy(target, (request) => {
    if (state.cut.remaining <= 0 || !request.includes(state.cut.match)) return false;
    state.cut.remaining--;
    return true;
  });
  const state: CuttingProxy = {
    url: proxy.url,
    cut,
    get cuts() {
      return proxy.cuts();
    },
    close: () => proxy.close(),
  };
  return state;
}

/** A server, the cutting proxy in front of it and an SDK client connected through it; all closed after the test. */
async function throughProxy(
  options: StreamableHttpClientOptions,
): Promise<{ srv: Running; proxy: CuttingProxy; client: Client }> {
  const srv = await startServer({ streamAfterMs: 5_000 });
  after(() => srv.close());
  const proxy = await cuttingProxy(srv);
  after(() => proxy.close());
  const client = new Client({ name: 'stale-test', version: '1' });
  await client.connect(
    new StreamableHttpClientTransport(new URL(proxy.url), { openStandaloneStream: false, ...options }),
  );
  after(() => client.close().catch(() => undefined));
  return { srv, proxy, client };
}

for (const [adapter, options] of Object.entries(CLIENT_ADAPTERS))
  describe(`no duplicate execution through a proxy that dies after forwarding (${adapter} adapter)`, () => {
    test('a non-idempotent tools/call cut on a reused socket runs once and fails with the typed not-idempotent error', async () => {
      const { srv, proxy, client } = await throughProxy(options);
      const calls = 5;
      const outcomes: string[] = [];
      for (let i = 0; i < calls; i++) {
        // A ping first, so the call goes out on a reused keep-alive socket (the retry path).
        await withDeadline(client.ping(), 5_000, 'ping');
        proxy.cut = { match: '"tools/call"', remaining: 4 };
        const outcome = await withDeadline(
          client.callTool({ name: 'echo', arguments: { text: `c${i}` } }, CallToolResultSchema).then(
            () => 'ok',
            (e: unknown) => (e as { code?: string }).code ?? String(e),
          ),
          5_000,
          `call ${i}`,
        );
        outcomes.push(outcome);
      }
      await until(() => (srv.probe.started.get('echo') ?? 0) >= calls, 3_000, 'server saw every call');
      // Give a re-send (if any) time to land before counting.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(srv.probe.started.get('echo'), calls, 'each call executed exactly once');
      assert.deepEqual(outcomes, Array(calls).fill('SLUICE_CLIENT_NOT_IDEMPOTENT'));
    });

    test('idempotent requests (tools/list, a call with an idempotency key) are still re-sent after a cut, under a new wire id', async () => {
      const { srv, proxy, client } = await throughProxy(options);
      await client.ping();
      proxy.cut = { match: '"tools/list"', remaining: 1 };
      const list = await withDeadline(client.listTools(), 5_000, 'tools/list');
      assert.ok(list.tools.some((t) => t.name === 'echo'));
      assert.equal(proxy.cuts, 1);
      await client.ping();
      proxy.cut = { match: '"tools/call"', remaining: 1 };
      const r = await withDeadline(
        client.callTool(
          { name: 'echo', arguments: { text: 'keyed' }, _meta: idempotencyMeta('echo-keyed') },
          CallToolResultSchema,
        ),
        5_000,
        'keyed call',
      );
      assert.equal((r.content as { text: string }[])[0]?.text, 'keyed');
      assert.equal(proxy.cuts, 2);
      // It ran twice (the cut copy and the re-send): allowed, because it is marked idempotent.
      assert.equal(srv.probe.started.get('echo'), 2);
    });
  });
