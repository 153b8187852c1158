/**
 * statelessSafe(createServer): 2026-07-28 requests of one principal share one served server.
 * Concurrent requests with colliding JSON-RPC ids each get their own answer and their own progress
 * events; a cancelled request aborts only its handler; x-mcp-header checks and list changes work as
 * with a server per request; legacy sessions still get a server each; principals get a server each.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { type CreateServer, type Served, serve, statelessSafe } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { type Loose, RawSession, toolCall, until } from '../helpers/http.js';
import {
  buildModernServer,
  type ModernProbe,
  modernBody,
  modernOpen,
  modernSend,
} from '../helpers/modern.js';

describe('modern era: a shared server per principal (statelessSafe)', () => {
  let s: Served;
  const probe: ModernProbe = { aborted: [], sendsAfterAbort: 0, servers: 0, eras: [], askErrors: [] };
  const principals: (string | undefined)[] = [];
  before(async () => {
    const createServer: CreateServer = (ctx) => {
      principals.push(ctx.principal);
      probe.eras.push(ctx.era);
      return buildModernServer(probe) as unknown as ReturnType<CreateServer>;
    };
    s = await serve({
      createServer: statelessSafe(createServer),
      port: 0,
      host: '127.0.0.1',
      authenticate: (req) => {
        const p = req.headers['x-user'];
        return { principal: typeof p === 'string' ? p : 'anon' };
      },
    });
  });
  after(async () => {
    await s.close();
  });

  test('concurrent calls with the same id each get their own answer; one server built', async () => {
    const before = probe.servers;
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        modernSend(s.url, modernBody('tools/call', { name: 'echo', arguments: { text: `t${i}` } }, {}, 1)),
      ),
    );
    replies.forEach((r, i) => {
      assert.equal(r.status, 200);
      assert.equal(r.json().id, 1);
      assert.equal(r.json().result.content[0].text, `t${i}`);
    });
    assert.ok(probe.servers - before <= 1, `${probe.servers - before} servers built for 20 calls`);
  });

  test('progress goes to the request it belongs to; same ids, different tokens', async () => {
    const call = (token: string) =>
      modernSend(
        s.url,
        modernBody(
          'tools/call',
          { name: 'tick', arguments: { n: 5, everyMs: 5 } },
          { progressToken: token },
          'same',
        ),
      );
    const [a, b] = await Promise.all([call('A'), call('B')]);
    for (const [r, token] of [
      [a, 'A'],
      [b, 'B'],
    ] as const) {
      assert.equal(r.status, 200);
      const ms = r.messages();
      const progress = ms.filter((m: Loose) => m.method === 'notifications/progress');
      assert.deepEqual(
        progress.map((m: Loose) => [m.params.progressToken, m.params.progress]),
        [1, 2, 3, 4, 5].map((p) => [token, p]),
      );
      assert.equal(ms.at(-1).id, 'same');
      assert.equal(ms.at(-1).result.content[0].text, 'ticked 5');
    }
  });

  test('closing one response cancels only that handler', async () => {
    const aborted = probe.aborted.length;
    const slow = await modernOpen(
      s.url,
      modernBody('tools/call', { name: 'wait', arguments: { ms: 10_000 } }, {}, 'w'),
    );
    const other = modernSend(
      s.url,
      modernBody('tools/call', { name: 'echo', arguments: { text: 'ok' } }, {}, 'w'),
    );
    await until(() => s.handler.stats().modern.inflight >= 1, 3_000, 'wait running');
    slow.destroy();
    await until(() => probe.aborted.length === aborted + 1, 3_000, 'the wait handler aborted');
    assert.equal((await other).json().result.content[0].text, 'ok');
  });

  test('x-mcp-header declarations are still enforced', async () => {
    const r = await modernSend(
      s.url,
      modernBody('tools/call', { name: 'region', arguments: { region: 'eu' } }),
      { 'mcp-param-region': 'us' },
    );
    assert.equal(r.status, 400);
  });

  test('each principal gets its own server; legacy sessions get a server each', async () => {
    const n = principals.length;
    await modernSend(s.url, modernBody('tools/call', { name: 'echo', arguments: { text: 'x' } }), {
      'x-user': 'alice',
    });
    await modernSend(s.url, modernBody('tools/call', { name: 'echo', arguments: { text: 'y' } }), {
      'x-user': 'alice',
    });
    assert.deepEqual(principals.slice(n), ['alice']);
    const built = probe.servers;
    const legacy = new RawSession(s.url);
    await legacy.init();
    const r = await legacy.post(toolCall('echo', { text: 'l' }, 'l1'));
    assert.equal(r.status, 200);
    assert.equal(probe.servers, built + 1, 'the legacy session built its own server');
    assert.notEqual(probe.eras.at(-1), 'modern');
    await legacy.delete();
  });
});

describe('a shared server the application closes', () => {
  let s: Served;
  const built: McpServer[] = [];
  before(async () => {
    const createServer = statelessSafe((() => {
      const m = new McpServer({ name: 'closable', version: '1' });
      m.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
        content: [{ type: 'text', text }],
      }));
      // Never answers by itself: only the server's close ends it.
      m.registerTool('wait', {}, () => new Promise<never>(() => undefined));
      built.push(m);
      return m;
    }) as unknown as CreateServer);
    s = await serve({ createServer, port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await s.close();
  });

  test('its calls in flight get an error at once, and the next call gets a fresh server', async () => {
    const first = await modernSend(
      s.url,
      modernBody('tools/call', { name: 'echo', arguments: { text: 'a' } }),
    );
    assert.equal(first.status, 200, first.text);
    assert.equal(built.length, 1);
    const waiting = modernSend(s.url, modernBody('tools/call', { name: 'wait', arguments: {} }, {}, 'w'));
    await until(() => s.handler.stats().modern.inflight === 1, 3_000, 'the wait call in flight');
    await built[0]?.close();
    const r = await withDeadline(waiting, 3_000, 'the call on the closed server is answered');
    assert.equal(r.json().id, 'w');
    assert.equal(r.json().error.code, -32603);
    const next = await modernSend(
      s.url,
      modernBody('tools/call', { name: 'echo', arguments: { text: 'b' } }),
    );
    assert.equal(next.status, 200, next.text);
    assert.equal(next.json().result.content[0].text, 'b');
    assert.equal(built.length, 2, 'a fresh server was built');
  });
});
