/**
 * The 2026-07-28 era over real sockets: routing rows and validation steps as the wire shows them
 * (status, code, id echo), stateless answers (no session header, no event ids, no priming),
 * stamping, the outbound filter, lazy JSON/SSE, cancel-on-close and producer backpressure.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ACCEPT_BOTH, initializeBody, open, RawSession, send, toolCall, until } from '../helpers/http.js';
import {
  MODERN,
  modernBody,
  modernHeaders,
  modernOpen,
  modernSend,
  type RunningModern,
  startModernServer,
} from '../helpers/modern.js';

function assertModernError(
  r: { status: number; text: string; headers: Record<string, unknown> },
  status: number,
  code: number,
  id: unknown,
) {
  assert.equal(r.status, status, r.text);
  const b = JSON.parse(r.text);
  assert.equal(b.error?.code, code, r.text);
  assert.deepEqual(b.id, id);
  assert.equal(r.headers['mcp-session-id'], undefined);
}

describe('modern era: routing and validation over the wire', () => {
  let s: RunningModern;
  before(async () => {
    s = await startModernServer();
  });
  after(async () => {
    await s.close();
  });

  test('a modern tools/call is answered statelessly: JSON, resultType, serverInfo, no session header', async () => {
    const body = modernBody('tools/call', { name: 'echo', arguments: { text: 'hi' } }, {}, 'c1');
    const r = await modernSend(s.url, body);
    assert.equal(r.status, 200, r.text);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.equal(r.headers['mcp-session-id'], undefined);
    const m = r.json();
    assert.equal(m.id, 'c1');
    assert.equal(m.result.resultType, 'complete');
    assert.deepEqual(m.result.content, [{ type: 'text', text: 'hi' }]);
    assert.deepEqual(m.result._meta['io.modelcontextprotocol/serverInfo'], {
      name: 'modern-test-server',
      version: '2.0.0',
    });
    assert.equal(s.probe.eras.at(-1), 'modern');
  });

  test('server/discover works as the very first request: modern versions, capabilities, caching fields', async () => {
    const r = await modernSend(s.url, modernBody('server/discover', {}, {}, 'd1'));
    assert.equal(r.status, 200, r.text);
    const res = r.json().result;
    assert.deepEqual(res.supportedVersions, [MODERN]);
    assert.ok(res.capabilities.tools, 'tools capability reported');
    assert.equal(res.instructions, 'Test server for 2026-07-28.');
    assert.equal(res.resultType, 'complete');
    assert.equal(typeof res.ttlMs, 'number');
    assert.ok(['public', 'private'].includes(res.cacheScope));
  });

  test('lists and resources/read carry ttlMs and cacheScope', async () => {
    const l = (await modernSend(s.url, modernBody('tools/list'))).json().result;
    assert.ok(Array.isArray(l.tools));
    assert.deepEqual([typeof l.ttlMs, l.cacheScope, l.resultType], ['number', 'private', 'complete']);
    const rr = await modernSend(s.url, modernBody('resources/read', { uri: 'test://readme' }));
    assert.equal(rr.json().result.contents[0].text, 'hello');
    assert.equal(typeof rr.json().result.ttlMs, 'number');
  });

  test('step 2: an unsupported _meta version is 400/-32022 with data.supported and data.requested', async () => {
    const body = modernBody(
      'tools/list',
      {},
      { 'io.modelcontextprotocol/protocolVersion': '1900-01-01' },
      'v1',
    );
    const r = await modernSend(s.url, body);
    assertModernError(r, 400, -32022, 'v1');
    assert.deepEqual(r.json().error.data, { supported: [MODERN], requested: '1900-01-01' });
  });

  test('step 3: missing or mismatched standard headers are 400/-32020 echoing the id', async () => {
    const body = modernBody('tools/call', { name: 'echo', arguments: { text: 'x' } }, {}, 7);
    const h = modernHeaders(body);
    for (const [label, headers] of [
      ['no Mcp-Method', { ...h, 'mcp-method': undefined }],
      ['wrong Mcp-Method', { ...h, 'mcp-method': 'tools/list' }],
      ['no Mcp-Name', { ...h, 'mcp-name': undefined }],
      ['wrong Mcp-Name', { ...h, 'mcp-name': 'other' }],
      ['bad sentinel', { ...h, 'mcp-name': '=?base64?ZWNobw?=' }],
      ['no version header', { ...h, 'mcp-protocol-version': undefined }],
      ['version header mismatch', { ...h, 'mcp-protocol-version': '2025-11-25' }],
    ] as const) {
      const clean = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<
        string,
        string
      >;
      const r = await send(s.url, { method: 'POST', headers: clean, body: JSON.stringify(body) });
      assertModernError(r, 400, -32020, 7);
      assert.ok(label);
    }
    const ok = await send(s.url, {
      method: 'POST',
      headers: { ...h, 'mcp-name': '=?base64?ZWNobw==?=', 'MCP-METHOD': 'tools/call' },
      body: JSON.stringify(body),
    });
    assert.equal(ok.status, 200, ok.text);
  });

  test('step 4: removed and unknown methods are 404/-32601 echoing the id', async () => {
    for (const m of [
      'initialize',
      'ping',
      'logging/setLevel',
      'resources/subscribe',
      'resources/unsubscribe',
      'no/such',
    ]) {
      const r = await modernSend(s.url, modernBody(m, {}, {}, `m-${m}`));
      assertModernError(r, 404, -32601, `m-${m}`);
    }
  });

  test('step 5: missing clientCapabilities is 400/-32602; missing clientInfo is served', async () => {
    const noCaps = modernBody('tools/list', {}, {}, 'p1');
    delete noCaps.params._meta['io.modelcontextprotocol/clientCapabilities'];
    assertModernError(await modernSend(s.url, noCaps), 400, -32602, 'p1');
    const noInfo = modernBody('tools/list', {}, {}, 'p2');
    delete noInfo.params._meta['io.modelcontextprotocol/clientInfo'];
    assert.equal((await modernSend(s.url, noInfo)).status, 200);
  });

  test('step 7: Mcp-Param-* headers are checked against x-mcp-header declarations', async () => {
    const body = modernBody(
      'tools/call',
      { name: 'region', arguments: { region: 'eu-west', count: 3 } },
      {},
      'r1',
    );
    assertModernError(await modernSend(s.url, body), 400, -32020, 'r1');
    assertModernError(
      await modernSend(s.url, body, { 'mcp-param-region': 'us-east', 'mcp-param-count': '3' }),
      400,
      -32020,
      'r1',
    );
    const ok = await modernSend(s.url, body, { 'Mcp-Param-Region': ' eu-west ', 'mcp-param-count': '3.0' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json().result.content[0].text, 'in eu-west');
    const noCount = modernBody('tools/call', { name: 'region', arguments: { region: 'x' } }, {}, 'r2');
    assert.equal((await modernSend(s.url, noCount, { 'mcp-param-region': 'x' })).status, 200);
  });

  test('row: no _meta field with a modern header is 400/-32602, never served as legacy', async () => {
    const r = await send(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-protocol-version': MODERN },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'n1', method: 'tools/list' }),
    });
    assertModernError(r, 400, -32602, 'n1');
  });

  test('row: initialize with a modern header is 400/-32020; without one it is the legacy handshake', async () => {
    const bad = await send(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-protocol-version': MODERN },
      body: JSON.stringify(initializeBody('2025-11-25', {}, 'i1')),
    });
    assertModernError(bad, 400, -32020, 'i1');
    const ok = await send(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
      body: JSON.stringify(initializeBody('2025-11-25')),
    });
    assert.equal(ok.status, 200);
    assert.equal(typeof ok.headers['mcp-session-id'], 'string');
  });

  test('row: a batch with a modern element is 400/-32600', async () => {
    const r = await send(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
      body: JSON.stringify([modernBody('tools/list')]),
    });
    assertModernError(r, 400, -32600, null);
  });

  test('row: a modern notification is 202 with no body', async () => {
    const r = await send(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-protocol-version': MODERN },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    assert.equal(r.status, 202);
    assert.equal(r.text, '');
  });

  test('row: a request without the field or a modern header stays legacy (session rules unchanged)', async () => {
    const r = await send(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
      body: JSON.stringify(toolCall('echo', { text: 'x' }, 'L1')),
    });
    assert.equal(r.status, 400);
    assert.match(r.text, /Mcp-Session-Id header is required/);
  });

  test('Mcp-Session-Id and Last-Event-ID on a modern request are ignored and never echoed', async () => {
    const body = modernBody('tools/call', { name: 'echo', arguments: { text: 'x' } });
    const r = await modernSend(s.url, body, { 'mcp-session-id': 'bogus', 'last-event-id': 'bogus' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers['mcp-session-id'], undefined);
  });

  test('server-to-client requests fail locally; nothing but the answer reaches the wire', async () => {
    const r = await modernSend(s.url, modernBody('tools/call', { name: 'ask', arguments: {} }, {}, 'a1'));
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.equal(r.json().result.isError, true);
    assert.equal(s.probe.askErrors.length, 1);
  });

  test('unrelated messages (logs, resource updates) are dropped, not streamed', async () => {
    const r = await modernSend(
      s.url,
      modernBody(
        'tools/call',
        { name: 'unrelated', arguments: {} },
        { 'io.modelcontextprotocol/logLevel': 'debug' },
      ),
    );
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.equal(r.json().result.content[0].text, 'done');
  });

  test('CORS: the preflight allows Mcp-Method/Mcp-Name and reflects requested Mcp-Param-* names', async () => {
    const origin = `http://127.0.0.1:${s.port}`;
    const r = await send(s.url, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-method, mcp-name, mcp-param-region, x-other',
      },
    });
    assert.equal(r.status, 204);
    const allow = String(r.headers['access-control-allow-headers']).toLowerCase();
    for (const h of ['mcp-method', 'mcp-name', 'mcp-param-region']) assert.ok(allow.includes(h), h);
    assert.ok(!allow.includes('x-other'));
    assert.match(String(r.headers['access-control-expose-headers']), /Mcp-Method/);
  });
});

describe('modern era: streaming, logging, cancellation, backpressure', () => {
  let s: RunningModern;
  before(async () => {
    s = await startModernServer({ maxQueueBytes: 64 * 1024, highWaterMark: 16 * 1024 });
  });
  after(async () => {
    await s.close();
  });

  test('progress streams on the request’s own SSE stream: no event ids, no priming, X-Accel-Buffering: no', async () => {
    const body = modernBody(
      'tools/call',
      { name: 'tick', arguments: { n: 3, everyMs: 5 } },
      { progressToken: 'pt' },
      't1',
    );
    const r = await modernOpen(s.url, body);
    await r.finished(5_000, 'tick stream');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/event-stream/);
    assert.equal(r.headers['x-accel-buffering'], 'no');
    assert.equal(r.headers['mcp-session-id'], undefined);
    assert.doesNotMatch(r.text, /^id:/m);
    assert.doesNotMatch(r.text, /^retry:/m);
    const msgs = r.messages();
    assert.deepEqual(
      msgs.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress),
      [1, 2, 3],
    );
    const last = msgs.at(-1);
    assert.equal(last.id, 't1');
    assert.equal(last.result.resultType, 'complete');
  });

  test('notifications/message only with a _meta logLevel, filtered by it', async () => {
    const none = await modernSend(s.url, modernBody('tools/call', { name: 'logs', arguments: {} }));
    assert.match(String(none.headers['content-type']), /^application\/json/, 'no log: stays JSON');
    const warn = await modernSend(
      s.url,
      modernBody(
        'tools/call',
        { name: 'logs', arguments: {} },
        { 'io.modelcontextprotocol/logLevel': 'warning' },
      ),
    );
    const levels = warn
      .messages()
      .filter((m) => m.method === 'notifications/message')
      .map((m) => m.params.level);
    assert.deepEqual(levels, ['warning', 'error']);
  });

  test('closing a pending JSON answer cancels: the handler signal aborts, nothing is written', async () => {
    const before = s.served.handler.stats().modern.cancels;
    // A raw request, so the socket can be cut before any response head exists.
    const { request } = await import('node:http');
    const body = modernBody('tools/call', { name: 'wait', arguments: { ms: 30_000 } });
    const req = request(s.url, { method: 'POST', headers: modernHeaders(body), agent: false });
    req.on('error', () => undefined);
    req.end(JSON.stringify(body));
    await until(() => s.served.handler.stats().modern.inflight >= 1, 3_000, 'wait in flight');
    req.destroy();
    await until(() => s.probe.aborted.includes('wait'), 3_000, 'handler aborted');
    assert.ok(s.served.handler.stats().modern.cancels > before);
    assert.equal(s.served.handler.stats().modern.inflight, 0);
    assert.equal(s.served.handler.stats().replayBuffer?.streams ?? 0, 0, 'nothing stored for replay');
    const cancels = /^sluice_modern_cancels_total (\d+)$/m.exec(s.served.handler.metrics())?.[1];
    assert.equal(Number(cancels), s.served.handler.stats().modern.cancels, 'exported to Prometheus');
  });

  test('closing an SSE stream cancels: the signal aborts and later sends go nowhere', async () => {
    s.probe.aborted.length = 0;
    s.probe.sendsAfterAbort = 0;
    const body = modernBody(
      'tools/call',
      { name: 'tick', arguments: { n: 1000, everyMs: 20 } },
      { progressToken: 9 },
    );
    const r = await modernOpen(s.url, body);
    await r.waitFor((x) => x.messages().length >= 2, 5_000, 'some progress');
    const seen = r.messages().length;
    r.destroy();
    await until(() => s.probe.aborted.includes('tick'), 3_000, 'tick aborted');
    await until(() => s.probe.sendsAfterAbort === 1, 3_000, 'late send settled');
    assert.ok(seen >= 2);
    assert.equal(s.served.handler.stats().modern.inflight, 0);
  });

  test('a stalled reader slows the producer instead of being cut; everything arrives once it reads', async () => {
    const overflowBefore = s.served.handler.stats().overflowCloses;
    const n = 300;
    const body = modernBody(
      'tools/call',
      { name: 'flood', arguments: { n, pad: 16 * 1024 } },
      { 'io.modelcontextprotocol/logLevel': 'info' },
      'f1',
    );
    const r = await modernOpen(s.url, body);
    r.res.pause();
    await until(
      () => (s.served.handler.stats().writeStall.count ?? 0) >= 0 && s.served.handler.stats().queue.bytes > 0,
      5_000,
      'queue builds',
    );
    // Bounded while stalled: the queue holds at most maxQueueBytes plus one frame.
    await new Promise((res) => setTimeout(res, 200));
    assert.ok(
      s.served.handler.stats().queue.bytes <= 64 * 1024 + 20 * 1024,
      String(s.served.handler.stats().queue.bytes),
    );
    assert.equal(s.served.handler.stats().overflowCloses, overflowBefore, 'not cut');
    r.res.resume();
    await r.finished(20_000, 'flood stream');
    const msgs = r.messages();
    assert.equal(msgs.filter((m) => m.method === 'notifications/message').length, n);
    assert.equal(msgs.at(-1).id, 'f1');
  });
});

describe('modern era: mixed with a legacy session on one endpoint', () => {
  let s: RunningModern;
  before(async () => {
    s = await startModernServer();
  });
  after(async () => {
    await s.close();
  });

  test('a legacy session with a GET stream and modern requests interleave; nothing crosses eras', async () => {
    const legacy = new RawSession(s.url);
    await legacy.init();
    const g = await legacy.get();
    assert.equal(g.status, 200);
    const modern = await modernOpen(
      s.url,
      modernBody(
        'tools/call',
        { name: 'tick', arguments: { n: 3, everyMs: 5 } },
        { progressToken: 'm' },
        'mx',
      ),
      { 'mcp-session-id': legacy.sid ?? '' },
    );
    const lp = await legacy.postOpen(toolCall('echo', { text: 'legacy' }, 'lx'));
    await modern.finished(5_000, 'modern');
    await lp.finished(5_000, 'legacy');
    assert.equal(modern.headers['mcp-session-id'], undefined);
    assert.doesNotMatch(modern.text, /^id:/m);
    assert.equal(modern.messages().at(-1).id, 'mx');
    assert.equal(lp.status, 200);
    // The modern request's progress never reached the legacy session's GET stream.
    await new Promise((res) => setTimeout(res, 50));
    assert.equal(g.messages().length, 0);
    g.destroy();
    // The legacy session still works after it.
    const again = await legacy.post(toolCall('echo', { text: 'again' }, 'ly'));
    assert.equal(again.status, 200);
    const del = await legacy.delete();
    assert.ok(del.status < 300);
  });

  test('legacy resume still works next to modern traffic (Last-Event-ID replays, ids only on legacy)', async () => {
    const legacy = new RawSession(s.url);
    await legacy.init();
    const p = await legacy.postOpen(toolCall('tick', { n: 3, everyMs: 30 }, 'lr', 'ltok'), {
      accept: 'text/event-stream',
    });
    await p.waitFor((x) => x.messages().length >= 1, 5_000, 'first legacy progress');
    const lastId = p.events.filter((e) => e.data.length > 0).at(-1)?.id;
    assert.ok(lastId, 'legacy events carry ids');
    p.destroy();
    const m = await modernSend(
      s.url,
      modernBody('tools/call', { name: 'echo', arguments: { text: 'between' } }),
    );
    assert.equal(m.status, 200);
    const g = await legacy.get({ 'last-event-id': lastId });
    await g.waitFor((x) => x.messages().some((msg) => msg.id === 'lr'), 5_000, 'resumed result');
    g.destroy();
    await open(s.url, { method: 'DELETE', headers: legacy.headers() }).catch(() => undefined);
  });
});
