// Session rules on real sockets: ids, creation only on a successful initialize, 400/404 lookups,
// DELETE, idle TTL, the session cap, stateless mode and graceful close.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InitializeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type Served, serve } from '../../src/server/index.js';
import { sendingProcess } from '../helpers/answering-process.js';
import { withDeadline } from '../helpers/deadline.js';
import {
  ACCEPT_BOTH,
  assertRefusal,
  initializeBody,
  RawSession,
  rawPost,
  rpc,
  send,
  sleep,
  toolCall,
  until,
} from '../helpers/http.js';
import { stall } from '../helpers/stall.js';
import { type Running, startServer } from '../helpers/test-server.js';

const JSON_HEADERS = { 'content-type': 'application/json', accept: ACCEPT_BOTH };

describe('sessions: ids and lookups', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, streamAfterMs: 10_000 });
  });
  after(() => srv.close());

  test('session ids carry >= 128 bits, are visible ASCII only, and never repeat', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const s = new RawSession(srv.url);
      await s.init();
      const id = s.sid ?? '';
      assert.match(id, /^[\x21-\x7e]+$/);
      // base64url: 6 bits a character; 22 characters = 132 bits.
      assert.ok(id.length >= 22, id);
      ids.add(id);
      assert.equal((await s.delete()).status, 204);
    }
    assert.equal(ids.size, 40);
  });

  for (const [name, params] of [
    [
      'protocolVersion is a number',
      { protocolVersion: 42, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    ],
    ['clientInfo missing', { protocolVersion: '2025-11-25', capabilities: {} }],
    [
      'clientInfo.version missing',
      { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x' } },
    ],
    [
      'capabilities an array',
      { protocolVersion: '2025-11-25', capabilities: [], clientInfo: { name: 'x', version: '1' } },
    ],
    ['params empty', {}],
  ] as const) {
    test(`a rejected initialize (${name}): 400, -32602 with its id and the member named; no session, no server built`, async () => {
      const before = srv.stats().sessions;
      const serversBefore = srv.probe.servers;
      const r = await send(srv.url, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify(rpc('initialize', params, 'bad')),
      });
      assert.equal(r.status, 400);
      assert.equal(r.headers['mcp-session-id'], undefined);
      const b = r.json();
      assert.equal(b.id, 'bad');
      assert.equal(b.error?.code, -32602);
      assert.equal(b.error?.data?.reason, 'invalid-initialize-params');
      assert.match(b.error?.message, /^Invalid params: (params\.\w+|initialize params)/);
      const after = srv.stats().sessions;
      assert.equal(after.active, before.active);
      assert.equal(after.created, before.created);
      assert.equal(srv.probe.servers, serversBefore, 'no server was built for it');
    });
  }

  test('an initialize with every required member and extra ones is left to the server', async () => {
    const r = await send(srv.url, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(
        rpc('initialize', {
          protocolVersion: '2025-11-25',
          capabilities: { experimental: {} },
          clientInfo: { name: 'x', version: '1', title: 'X' },
          extra: true,
        }),
      ),
    });
    assert.equal(r.status, 200);
    assert.ok(r.headers['mcp-session-id']);
  });

  test('a missing Mcp-Session-Id → 400 missing-session-id on POST, GET and DELETE', async () => {
    assertRefusal(
      await send(srv.url, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(rpc('ping')) }),
      400,
      -32000,
      'missing-session-id',
    );
    const g = await send(srv.url, { method: 'GET', headers: { accept: 'text/event-stream' } });
    assertRefusal(g, 400, -32000, 'missing-session-id');
    assertRefusal(await send(srv.url, { method: 'DELETE' }), 400, -32000, 'missing-session-id');
  });

  test('a session-less request for a method MCP does not define (a 2026 client probing server/discover) → 404 -32601 with its own id; nothing is created', async () => {
    const before = srv.stats().sessions;
    for (const id of ['probe-1', 7]) {
      const r = await send(srv.url, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify(rpc('server/discover', {}, id)),
      });
      assert.equal(r.status, 404, r.text);
      assert.match(String(r.headers['content-type']), /^application\/json/);
      const b = r.json();
      assert.equal(b.jsonrpc, '2.0');
      assert.equal(b.id, id);
      assert.equal(b.error.code, -32601);
      assert.match(b.error.message, /server\/discover/);
      assert.equal(r.headers['mcp-session-id'], undefined);
    }
    // A method MCP defines still needs its session; a notification is not answered with -32601.
    assertRefusal(
      await send(srv.url, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(rpc('tools/list')) }),
      400,
      -32000,
      'missing-session-id',
    );
    assertRefusal(
      await send(srv.url, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/whatever' }),
      }),
      400,
      -32000,
      'missing-session-id',
    );
    const after = srv.stats().sessions;
    assert.equal(after.created, before.created);
    assert.equal(after.active, before.active);
  });

  test('an unknown Mcp-Session-Id → 404 session-not-found (-32001) on POST, GET and DELETE', async () => {
    const s = new RawSession(srv.url);
    s.sid = 'AAAAAAAAAAAAAAAAAAAAAAAA';
    assertRefusal(await s.post(rpc('ping')), 404, -32001, 'session-not-found');
    assertRefusal(
      await send(srv.url, {
        method: 'GET',
        headers: { accept: 'text/event-stream', 'mcp-session-id': s.sid },
      }),
      404,
      -32001,
      'session-not-found',
    );
    assertRefusal(await s.delete(), 404, -32001, 'session-not-found');
  });

  test('initialize carrying an Mcp-Session-Id (valid or not) → 400 initialize-with-session, nothing created', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const before = srv.stats().sessions;
    for (const sid of [s.sid ?? '', 'bogus']) {
      const r = await send(srv.url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, 'mcp-session-id': sid },
        body: JSON.stringify(initializeBody()),
      });
      assertRefusal(r, 400, -32600, 'initialize-with-session');
    }
    assert.deepEqual(srv.stats().sessions, before);
  });

  test('a second initialize on a live session is refused', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const r = await s.post(initializeBody());
    assert.equal(r.status, 400);
  });

  test('DELETE → 204 with no body, then the id is 404 everywhere; onSessionEnd-style counters say delete', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const before = srv.stats().sessions.ended.delete;
    const d = await s.delete();
    assert.equal(d.status, 204);
    assert.equal(d.text, '');
    assertRefusal(await s.post(rpc('ping')), 404, -32001, 'session-not-found');
    const g = await s.get();
    await g.finished(5_000, 'GET after DELETE');
    assertRefusal(g, 404, -32001, 'session-not-found');
    assertRefusal(await s.delete(), 404, -32001, 'session-not-found');
    assert.equal(srv.stats().sessions.ended.delete, before + 1);
  });

  test('DELETE while a request is in flight: the waiting POST learns the session is gone (404), streams close', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const started = srv.probe.onStart('slow');
    const pending = s.post(toolCall('slow', { ms: 3_000 }, 'gone'), {}, 5_000);
    await withDeadline(started, 2_000, 'slow started');
    const g = await s.get();
    await g.waitFor((r) => r.events.length > 0, 2_000, 'priming on GET');
    assert.equal((await s.delete()).status, 204);
    assertRefusal(await pending, 404, -32001, 'session-not-found');
    await g.finished(2_000, 'GET closed by DELETE');
    await until(
      () => srv.stats().streams.open.get === 0 && srv.stats().streams.open.post === 0,
      2_000,
      'streams closed',
    );
  });
});

describe('sessions: enableDelete / enableGetStream off', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, enableDelete: false, enableGetStream: false });
  });
  after(() => srv.close());

  test('DELETE → 405 with Allow: POST; GET → 405; the session survives', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const d = await s.delete();
    assertRefusal(d, 405, -32000, 'method-not-allowed');
    assert.equal(d.headers.allow, 'POST');
    const g = await s.get();
    await g.finished(2_000, 'GET 405');
    assertRefusal(g, 405, -32000, 'method-not-allowed');
    assert.equal(g.headers.allow, 'POST');
    assert.equal((await s.post(rpc('ping'))).status, 200);
  });
});

describe('sessions: idle TTL', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, sessionIdleMs: 250, streamAfterMs: 10_000 });
  });
  after(() => srv.close());

  test('an idle session ends after sessionIdleMs (404 afterwards)', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const idle = srv.stats().sessions.ended.idle;
    await sleep(700);
    assertRefusal(await s.post(rpc('ping')), 404, -32001, 'session-not-found');
    assert.ok(srv.stats().sessions.ended.idle > idle);
  });

  test('activity keeps it alive', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    for (let i = 0; i < 6; i++) {
      await sleep(120);
      assert.equal((await s.post(rpc('ping'))).status, 200, `ping ${i}`);
    }
  });

  test('a request that came in while the server was stalled past the TTL keeps the session alive', async () => {
    // A stall of the server's own process (a long collection, a starved CPU) must not be blamed on the
    // client: its ping came in time. Another process connects and sends it while this one (the
    // server's) stalls for longer than the TTL; when it runs again its due timers (the idle sweep)
    // come before the connection is accepted, and a loop turn before its bytes are read
    // (docs/design.md, "A server's own stall is not blamed on its clients").
    // Started first: starting takes some of the TTL, which would be real idleness.
    const client = await sendingProcess();
    try {
      const s = new RawSession(srv.url);
      await s.init();
      client.send(srv.port, '127.0.0.1', rawPost(srv.port, s.headers(), JSON.stringify(rpc('ping'))));
      stall(1_000);
      assert.match(await client.answer(), /^HTTP\/1\.1 200 /);
      assert.equal((await s.post(rpc('ping'))).status, 200, 'the session is still there');
    } finally {
      // Its pipes would keep this process alive.
      client.close();
    }
  });

  test('a session with a live GET stream does not expire', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const g = await s.get();
    await sleep(800);
    assert.equal(g.ended, false);
    assert.equal((await s.post(rpc('ping'))).status, 200);
    g.destroy();
  });

  test('a session with a request in flight does not expire; it may expire after', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const r = await s.post(toolCall('slow', { ms: 800 }, 'long'), {}, 5_000);
    assert.equal(r.status, 200);
    assert.equal(r.json().result.content[0].text, 'slept 800');
    assert.equal((await s.post(rpc('ping'))).status, 200, 'still alive right after');
    await sleep(700);
    assertRefusal(await s.post(rpc('ping')), 404, -32001, 'session-not-found');
  });
});

describe('sessions: maxSessions', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, maxSessions: 2 });
  });
  after(() => srv.close());

  test('initialize beyond the cap → 503 too-many-sessions + Retry-After; room again after a DELETE', async () => {
    const a = new RawSession(srv.url);
    const b = new RawSession(srv.url);
    await a.init();
    await b.init();
    const r = await send(srv.url, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(initializeBody()),
    });
    assertRefusal(r, 503, -32000, 'too-many-sessions');
    assert.match(String(r.headers['retry-after']), /^\d+$/);
    assert.equal(srv.stats().sessions.active, 2);
    assert.equal(srv.stats().sessions.capRefusals, 1);
    await a.delete();
    const c = new RawSession(srv.url);
    await c.init();
    assert.equal(srv.stats().sessions.active, 2);
  });
});

describe('sessions: maxSessions under a burst of slow initializations', () => {
  let served: Served;
  before(async () => {
    served = await serve({
      port: 0,
      keepaliveMs: 0,
      maxSessions: 3,
      createServer: () => {
        const m = new McpServer({ name: 'slow-init', version: '1' });
        const inner = m.server as unknown as { _oninitialize(r: unknown): Promise<unknown> };
        // An initialize that takes a while (e.g. an async auth or config lookup in the server).
        m.server.setRequestHandler(InitializeRequestSchema, async (req) => {
          await sleep(100);
          return (await inner._oninitialize(req)) as never;
        });
        return m as never;
      },
    });
  });
  after(() => served.close());

  test('20 concurrent initialize requests never create more than maxSessions sessions', {}, async () => {
    const rs = await Promise.all(
      Array.from({ length: 20 }, () =>
        send(served.url, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(initializeBody()) }),
      ),
    );
    const ok = rs.filter((r) => r.status === 200).length;
    const refused = rs.filter((r) => r.status === 503).length;
    assert.equal(ok + refused, 20);
    assert.ok(
      served.handler.stats().sessions.active <= 3,
      `active sessions: ${served.handler.stats().sessions.active}`,
    );
    assert.ok(ok <= 3, `${ok} initialize requests succeeded`);
  });
});

describe('sessions: stateless', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, stateless: true });
  });
  after(() => srv.close());

  test('initialize gets no Mcp-Session-Id; requests work without one; nothing is kept', async () => {
    const r = await send(srv.url, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(initializeBody()),
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers['mcp-session-id'], undefined);
    assert.equal(r.json().result.protocolVersion, '2025-11-25');
    const e = await send(srv.url, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(toolCall('echo', { text: 'sl' }, 'x')),
    });
    assert.equal(e.status, 200);
    assert.equal(e.headers['mcp-session-id'], undefined);
    assert.equal(e.json().result.content[0].text, 'sl');
    assert.equal(srv.stats().sessions.active, 0);
    assert.deepEqual(srv.stats().streams.open, { post: 0, get: 0 });
  });

  test('a streamed answer works statelessly (events without ids, nothing to resume)', async () => {
    const s = new RawSession(srv.url);
    const r = await s.postOpen(toolCall('progress', { n: 2, delayMs: 5 }, 'sp', 'st'));
    assert.equal(r.headers['content-type'], 'text/event-stream');
    await r.finished(5_000, 'stateless stream');
    assert.deepEqual(
      r.messages().map((m) => m.id ?? m.params.progress),
      [1, 2, 'sp'],
    );
    assert.ok(r.events.every((e) => e.id === undefined));
    await until(() => srv.stats().streams.open.post === 0, 2_000, 'stream closed');
  });

  test('an Mcp-Session-Id header is ignored', async () => {
    const r = await send(srv.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'mcp-session-id': 'whatever' },
      body: JSON.stringify(rpc('ping')),
    });
    assert.equal(r.status, 200);
  });

  test('a batch: run without a version header or with 2025-03-26; 400 batch-not-allowed with a later one', async () => {
    // 2025-06-18 removed JSON-RPC batches (basic/transports: the body MUST be a single message); a
    // stateless request has no session, so its MCP-Protocol-Version header is its revision.
    const batch = JSON.stringify([rpc('ping', undefined, 'b1'), toolCall('echo', { text: 'b' }, 'b2')]);
    for (const version of [undefined, '2025-03-26']) {
      const headers =
        version === undefined ? JSON_HEADERS : { ...JSON_HEADERS, 'mcp-protocol-version': version };
      const r = await send(srv.url, { method: 'POST', headers, body: batch });
      assert.equal(r.status, 200, `${version}: ${r.text}`);
      assert.equal(r.json().length, 2);
    }
    const started = srv.probe.started.get('echo') ?? 0;
    for (const version of ['2025-06-18', '2025-11-25']) {
      const r = await send(srv.url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, 'mcp-protocol-version': version },
        body: batch,
      });
      assertRefusal(r, 400, -32600, 'batch-not-allowed');
    }
    assert.equal(srv.probe.started.get('echo') ?? 0, started, 'nothing ran');
  });

  test('GET and DELETE → 405 with Allow: POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await send(srv.url, { method, headers: { accept: 'text/event-stream' } });
      assertRefusal(r, 405, -32000, 'method-not-allowed');
      assert.equal(r.headers.allow, 'POST');
    }
  });
});

describe('graceful close', () => {
  test('close({graceMs}) lets a short request finish, refuses new initialize with 503, ends streams with a retry hint', async () => {
    const srv = await startServer({ keepaliveMs: 0, retryMs: 777, streamAfterMs: 10_000 });
    try {
      const s = new RawSession(srv.url);
      await s.init();
      const g = await s.get();
      await g.waitFor((r) => r.events.length > 0, 2_000, 'GET priming');
      const started = srv.probe.onStart('slow');
      const pending = s.post(toolCall('slow', { ms: 300 }, 'short'));
      await withDeadline(started, 2_000, 'slow started');
      const closing = srv.served.handler.close({ graceMs: 3_000 });
      const refused = await send(srv.url, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify(initializeBody()),
      });
      assertRefusal(refused, 503, -32000, 'shutting-down');
      assert.ok(refused.headers['retry-after'] !== undefined);
      const r = await pending;
      assert.equal(r.status, 200);
      assert.equal(r.json().result.content[0].text, 'slept 300');
      const report = await withDeadline(closing, 5_000, 'close');
      assert.deepEqual(report, { sessions: 1, cutRequests: 0, drained: true });
      await g.finished(2_000, 'GET ended by close');
      assert.match(g.text, /retry: 777\n\n$/);
      assert.equal(srv.stats().sessions.active, 0);
    } finally {
      await srv.close();
    }
  });

  test('a request longer than graceMs is cut; its SSE stream ends with a retry hint', async () => {
    const srv = await startServer({ keepaliveMs: 0, retryMs: 555, mode: 'sse' });
    try {
      const s = new RawSession(srv.url);
      await s.init();
      const r = await s.postOpen(toolCall('slow', { ms: 5_000 }, 'cut'));
      await r.waitFor((x) => x.events.length > 0, 2_000, 'priming');
      const report = await withDeadline(srv.served.handler.close({ graceMs: 100 }), 3_000, 'close');
      assert.deepEqual(report, { sessions: 1, cutRequests: 1, drained: false });
      await r.finished(2_000, 'stream cut');
      assert.match(r.text, /retry: 555\n\n$/);
      assert.equal(r.messages().length, 0);
    } finally {
      await srv.close();
    }
  });
});
