// A server Sluice built for one request (a 2026-07-28 request, a stateless-mode request) has its tables (handlers,
// responses, progress, timeouts: every Map and Set of the Protocol) swapped for shared empty ones once it is closed:
// under V8's pretenuring, and on Node 22 and 24 through the SDK's own old closures, a dead server was kept alive
// through scavenges with all it reached (core/sdk/release.ts; the promoted bytes are bounded in promotion.test.ts). Its tool
// registrations are left as they were (emptying them changed nothing measured). A createServer that hands the
// same server out again then gets a clear refusal, not a server without handlers. Servers of sessions are left
// as they are: an application may keep a session's server past its end.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { RawSession, toolCall } from '../helpers/http.js';
import { modernBody, modernSend } from '../helpers/modern.js';

const ECHO = z.object({ text: z.string() });

interface Internals {
  _registeredTools: Record<string, Record<string, unknown>>;
  server: { _requestHandlers: Map<string, unknown>; _notificationHandlers: Map<string, unknown> };
}
const internals = (s: McpServer): Internals => s as unknown as Internals;

function echoServer(): McpServer {
  const s = new McpServer({ name: 'release', version: '1' });
  s.registerTool('echo', { inputSchema: ECHO }, ({ text }) => ({ content: [{ type: 'text', text }] }));
  return s;
}

/** Waits (bounded) until `s` has been released: its request handler table emptied. */
async function released(s: McpServer): Promise<void> {
  const deadline = Date.now() + 3_000;
  while (internals(s).server._requestHandlers.size > 0) {
    if (Date.now() > deadline) throw new Error('the server was not released within 3 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('a closed per-request server lets go of its tables', () => {
  const open: Served[] = [];
  /** A server whose createServer builds a fresh echo server per call, each kept in `built`. */
  const serveFresh = async (built: McpServer[]): Promise<Served> => {
    const served = await serve({
      port: 0,
      createServer: () => {
        const s = echoServer();
        built.push(s);
        return s;
      },
    });
    open.push(served);
    return served;
  };
  after(async () => {
    for (const s of open) await s.close({ graceMs: 0 });
  });

  test('2026-07-28: emptied once closed; the same server handed out again is refused with SLUICE_UNSUPPORTED_SERVER', async () => {
    const one = echoServer();
    const record = internals(one)._registeredTools['echo'];
    const served = await serve({ port: 0, createServer: () => one });
    open.push(served);
    const first = await withDeadline(
      modernSend(served.url, modernBody('tools/call', { name: 'echo', arguments: { text: 'hi' } })),
      5_000,
      'first call',
    );
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json().result.content[0].text, 'hi');
    await released(one);
    assert.equal(
      internals(one).server._notificationHandlers.size,
      0,
      'its notification handler table is empty',
    );
    assert.ok(record !== undefined);
    assert.equal(internals(one)._registeredTools['echo'], record, 'its registrations are left as they were');
    assert.ok(typeof record['handler'] === 'function', 'the record is untouched');
    // Every table the Protocol holds is swapped for one shared empty table, so the closed server
    // reaches nothing of its request any more; it ignores what is put in it.
    const tables = internals(one).server as unknown as Record<string, unknown>;
    const maps = Object.keys(tables).filter((k) => tables[k] instanceof Map);
    assert.ok(
      maps.includes('_responseHandlers') && maps.includes('_requestHandlerAbortControllers'),
      maps.join(),
    );
    const other = echoServer();
    const served2 = await serve({ port: 0, createServer: () => other });
    open.push(served2);
    const r2 = await modernSend(
      served2.url,
      modernBody('tools/call', { name: 'echo', arguments: { text: 'x' } }),
    );
    assert.equal(r2.status, 200, r2.text);
    await released(other);
    const theirs = internals(other).server as unknown as Record<string, unknown>;
    for (const k of maps) assert.equal(tables[k], theirs[k], `${k}: one shared empty table`);
    const shared = tables['_requestHandlers'] as Map<string, unknown>;
    shared.set('late', () => undefined);
    assert.equal(shared.size, 0, 'a shared table keeps nothing');
    const again = await withDeadline(
      modernSend(served.url, modernBody('tools/call', { name: 'echo', arguments: { text: 'again' } })),
      5_000,
      'second call',
    );
    assert.equal(again.status, 500, again.text);
    assert.match(again.json().error.message, /SLUICE_UNSUPPORTED_SERVER/);
  });

  test('a fresh server per request keeps working, request after request', async () => {
    const built: McpServer[] = [];
    const served = await serveFresh(built);
    for (let i = 0; i < 5; i++) {
      const r = await modernSend(
        served.url,
        modernBody('tools/call', { name: 'echo', arguments: { text: `n${i}` } }),
      );
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json().result.content[0].text, `n${i}`);
    }
    assert.equal(built.length, 5);
    for (const s of built) await released(s);
  });

  test('stateless mode: emptied once closed; the same server handed out again is refused', async () => {
    const one = echoServer();
    const served = await serve({ port: 0, stateless: true, createServer: () => one });
    open.push(served);
    const s = new RawSession(served.url);
    const first = await withDeadline(s.post(toolCall('echo', { text: 'hi' })), 5_000, 'first call');
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json().result.content[0].text, 'hi');
    await released(one);
    const again = await withDeadline(s.post(toolCall('echo', { text: 'again' })), 5_000, 'second call');
    assert.equal(again.status, 500, again.text);
    assert.match(again.json().error.message, /SLUICE_UNSUPPORTED_SERVER/);
  });

  test("a session's server keeps its tables after the session ends", async () => {
    const built: McpServer[] = [];
    const served = await serveFresh(built);
    const s = new RawSession(served.url);
    await s.init();
    assert.equal((await s.post(toolCall('echo', { text: 'hi' }))).json().result.content[0].text, 'hi');
    await s.delete();
    await new Promise((r) => setTimeout(r, 100));
    const [server] = built;
    assert.ok(server !== undefined);
    assert.deepEqual(Object.keys(internals(server)._registeredTools), ['echo']);
    assert.ok(internals(server).server._requestHandlers.size > 0, 'its handlers are kept');
  });
});
