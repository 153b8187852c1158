// Operations: Node's timeouts against slow clients vs long streams, authentication on long-lived
// streams (expiry, revalidation, static bearer), Prometheus exposition, diagnostics channels,
// structured logs, and graceful shutdown (handler.close and SIGTERM-style close with the client).
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { connect } from 'node:net';
import { after, describe, test } from 'node:test';
import {
  createMcpHandler,
  InvalidOptionError,
  jsonLogger,
  serve,
  staticBearer,
} from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { assertRefusal, RawSession, rpc, send, sleep, toolCall, until } from '../helpers/http.js';
import { createProbe, startServer, TEST_BINDING, testServerFactory } from '../helpers/test-server.js';

// serve()'s socket timeouts and the diagnostics_channel probe belong to the node:http binding.
const NODE_ONLY = TEST_BINDING === 'fetch' ? 'node:http binding only (fetch run)' : false;

/** Resolves when the server closes a raw socket that sent `bytes`; rejects after ms. */
function closedAfter(port: number, bytes: string, ms: number, label: string): Promise<number> {
  const started = Date.now();
  return withDeadline(
    new Promise<number>((resolve, reject) => {
      const s = connect(port, '127.0.0.1', () => s.write(bytes));
      s.on('data', () => undefined);
      s.on('close', () => resolve(Date.now() - started));
      s.on('error', reject);
    }),
    ms,
    label,
  );
}

describe("Node's server timeouts", () => {
  test('slow headers and slow bodies are cut; a stream outlives requestTimeout', {
    skip: NODE_ONLY,
  }, async () => {
    const srv = await startServer({ headersTimeoutMs: 300, requestTimeoutMs: 600, keepaliveMs: 150 });
    after(() => srv.close());
    const headersCut = await closedAfter(
      srv.port,
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n',
      3_000,
      'slow headers',
    );
    assert.ok(headersCut < 2_000, `slow headers held the socket for ${headersCut} ms`);
    const bodyCut = await closedAfter(
      srv.port,
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"',
      3_000,
      'slow body',
    );
    assert.ok(bodyCut < 2_500, `slow body held the socket for ${bodyCut} ms`);

    const s = new RawSession(srv.url);
    await s.init();
    const get = await s.get();
    await sleep(1_500);
    assert.equal(get.ended, false, 'the GET stream was cut although only the request has a timeout');
    assert.ok(get.comments.length >= 3, `keepalives seen: ${get.comments.length}`);
    get.destroy();
  });

  test('impossible timeout combinations are refused up front', async () => {
    await assert.rejects(
      serve({
        createServer: testServerFactory(createProbe()),
        port: 0,
        headersTimeoutMs: 5_000,
        requestTimeoutMs: 1_000,
      }),
      /headersTimeoutMs <= requestTimeoutMs/,
    );
  });

  test('misuse and failures come out typed: InvalidOptionError, the not-found and internal-error refusals', async () => {
    assert.throws(
      () => createMcpHandler({} as never),
      (e: unknown) => e instanceof InvalidOptionError && e.code === 'SLUICE_INVALID_OPTION',
    );
    const srv = await serve({ createServer: testServerFactory(createProbe()), port: 0 });
    after(() => srv.close());
    assertRefusal(await send(srv.url.replace(/\/mcp$/, '/elsewhere')), 404, -32601, 'not-found');
    const failing = await startServer({
      authenticate: () => {
        throw new Error('verifier down');
      },
    });
    after(() => failing.close());
    assertRefusal(await new RawSession(failing.url).post(rpc('ping')), 500, -32603, 'internal-error');
  });
});

describe('authentication on long-lived streams', () => {
  test('static bearer: 401 with a challenge naming the resource metadata, 200 with the token', async () => {
    const srv = await startServer({
      authenticate: staticBearer('s3cret-token'),
      resourceMetadataUrl: 'https://mcp.example/.well-known/oauth-protected-resource',
    });
    after(() => srv.close());
    const none = await new RawSession(srv.url).post(toolCall('echo', { text: 'x' }));
    assertRefusal(none, 401, -32000, 'unauthorized');
    assert.equal(
      none.headers['www-authenticate'],
      'Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource"',
    );
    const wrong = new RawSession(srv.url, { authorization: 'Bearer nope-nope-nope' });
    await assert.rejects(wrong.init(), /401/);
    const right = new RawSession(srv.url, { authorization: 'Bearer s3cret-token' });
    await right.init();
    assert.equal((await right.post(toolCall('echo', { text: 'hi' }))).status, 200);
    assert.equal(srv.stats().refusals.auth, 2);
    assert.throws(
      () => staticBearer('short'),
      (e: unknown) => e instanceof InvalidOptionError && e.code === 'SLUICE_INVALID_OPTION',
    );
  });

  test('a stream ends when its credential expires, after an event id and a retry hint; a fresh token resumes it', async () => {
    let lifetimeMs = 400;
    const srv = await startServer({
      authenticate: (req) =>
        req.headers.authorization === 'Bearer t'
          ? { principal: 'alice', expiresAt: Date.now() + lifetimeMs }
          : null,
    });
    after(() => srv.close());
    const s = new RawSession(srv.url, { authorization: 'Bearer t' });
    await s.init();
    const get = await s.get();
    await get.finished(3_000, 'GET stream ended at expiry');
    const lastId = get.events.at(-1)?.id;
    assert.ok(lastId !== undefined && lastId.length > 0, 'the client holds an event id to resume from');
    assert.ok(get.retries.length >= 1, 'a retry hint came before the end');
    assert.equal(srv.stats().authStreamEnds, 1);
    lifetimeMs = 60_000;
    const resumed = await s.get({ 'last-event-id': lastId });
    assert.equal(resumed.status, 200);
    await sleep(600);
    assert.equal(resumed.ended, false, 'the resumed stream lives with the fresh credential');
    resumed.destroy();
  });

  test('revalidateMs re-runs authenticate and closes the stream on revocation', async () => {
    const revoked = new Set<string>();
    const srv = await startServer({
      revalidateMs: 100,
      authenticate: (req) => {
        const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
        return token.length > 0 && !revoked.has(token) ? { principal: 'bob' } : null;
      },
    });
    after(() => srv.close());
    const s = new RawSession(srv.url, { authorization: 'Bearer tok-1' });
    await s.init();
    const get = await s.get();
    await sleep(350);
    assert.equal(get.ended, false, 'still valid: the stream stays');
    revoked.add('tok-1');
    await get.finished(2_000, 'stream closed after revocation');
    assert.equal(srv.stats().authStreamEnds, 1);
    assertRefusal(await s.post(toolCall('echo', { text: 'x' })), 401, -32000, 'unauthorized');
  });
});

describe('metrics and observability', () => {
  test('a refused initialize is counted as failed-init and leaves no session', async () => {
    const srv = await startServer();
    after(() => srv.close());
    const r = await send(srv.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      // Well-formed in the members Sluice checks (jsonrpc/initialize-params.ts), so a server is
      // built; the SDK refuses the mistyped capability (an error in a 200 answer).
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: { sampling: 5 },
          clientInfo: { name: 'x', version: '1' },
        },
      }),
    });
    assert.equal(r.status, 200);
    assert.ok(r.json().error !== undefined, r.text);
    assert.equal(r.headers['mcp-session-id'], undefined);
    const st = srv.stats();
    assert.equal(st.sessions.active, 0);
    assert.equal(st.sessions.created, 0);
    assert.equal(st.sessions.ended['failed-init'], 1);
  });

  test('Prometheus exposition: families, per-method modes and durations, bounded labels, /metrics route', async () => {
    const srv = await startServer({ metricsPath: '/metrics' });
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    assert.equal((await s.post(toolCall('echo', { text: 'x' }))).status, 200);
    const sse = await s.postOpen(toolCall('progress', { n: 3, delayMs: 1 }, 'p1', 'tok'));
    await sse.finished(5_000, 'progress answer');
    await s.post({ jsonrpc: '2.0', id: 'u1', method: 'made/up/method' });
    const text = srv.served.handler.metrics();
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
      assert.match(
        line,
        /^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+]+$/,
        `bad line: ${line}`,
      );
    }
    assert.match(text, /^sluice_sessions_active 1$/m);
    assert.match(text, /^sluice_responses_total\{method="tools\/call",mode="json"\} 1$/m);
    assert.match(text, /^sluice_responses_total\{method="tools\/call",mode="sse"\} 1$/m);
    assert.match(text, /^sluice_responses_total\{method="other",mode="json"\} 1$/m);
    assert.match(text, /^sluice_request_duration_seconds_count\{method="tools\/call"\} 2$/m);
    assert.match(text, /^sluice_request_duration_seconds_bucket\{method="tools\/call",le="\+Inf"\} 2$/m);
    assert.doesNotMatch(text, /made\/up/);
    const route = await send(srv.url.replace(/\/mcp$/, '/metrics'));
    assert.equal(route.status, 200);
    assert.match(String(route.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(route.text, /^sluice_sessions_created_total 1$/m);
  });

  test('diagnostics channels report session and stream lifecycle with hashed ids', {
    skip: NODE_ONLY,
  }, async () => {
    const seen: { channel: string; e: Record<string, unknown> }[] = [];
    const names = ['sluice:session:start', 'sluice:session:end', 'sluice:stream:open', 'sluice:stream:close'];
    const subs = names.map((channel) => {
      const fn = (e: unknown): void => {
        seen.push({ channel, e: e as Record<string, unknown> });
      };
      diagnostics.subscribe(channel, fn);
      return () => diagnostics.unsubscribe(channel, fn);
    });
    after(() => {
      for (const u of subs) u();
    });
    const srv = await startServer();
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const get = await s.get();
    await get.waitFor((r) => r.text.length > 0, 2_000, 'GET first bytes');
    assert.equal((await s.delete()).status, 204);
    await get.finished(2_000, 'GET ended by DELETE');
    await until(() => seen.some((x) => x.channel === 'sluice:stream:close'), 2_000, 'stream close event');
    const by = (c: string) => seen.filter((x) => x.channel === c).map((x) => x.e);
    const start = by('sluice:session:start')[0];
    assert.ok(start !== undefined);
    assert.match(String(start['session']), /^[0-9a-f]{8}$/);
    assert.notEqual(start['session'], s.sid);
    assert.equal(start['protocolVersion'], '2025-11-25');
    assert.deepEqual(
      by('sluice:stream:open').map((e) => [e['stream'], e['kind']]),
      [[0, 'get']],
    );
    assert.deepEqual(
      by('sluice:stream:close').map((e) => e['reason']),
      ['server'],
    );
    // The whole close event: the open event's fields, then the reason (event-stream.ts, probe.ts).
    assert.deepEqual(by('sluice:stream:close')[0], {
      session: start['session'],
      stream: 0,
      kind: 'get',
      cursor: undefined,
      replayed: undefined,
      reason: 'server',
    });
    assert.deepEqual(Object.keys(by('sluice:stream:close')[0] ?? {}), [
      'session',
      'stream',
      'kind',
      'cursor',
      'replayed',
      'reason',
    ]);
    assert.deepEqual(
      by('sluice:session:end').map((e) => e['reason']),
      ['delete'],
    );
  });

  test('JSON-line logs name sessions by hash only', async () => {
    const lines: string[] = [];
    const srv = await startServer({ logger: jsonLogger({ write: (l: string) => lines.push(l) }) });
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    await s.delete();
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      events.map((e) => e['event']),
      ['session.start', 'session.end'],
    );
    assert.ok(
      lines.every((l) => !l.includes(String(s.sid))),
      'a raw session id reached the log',
    );
    assert.ok(events.every((e) => typeof e['ts'] === 'string' && e['level'] === 'info'));
  });
});

describe('graceful shutdown', () => {
  test('close({graceMs}) lets a short request finish, refuses new sessions with 503, reports what it cut', async () => {
    const srv = await startServer({ streamAfterMs: 100 });
    const s = new RawSession(srv.url);
    await s.init();
    const short = s.post(toolCall('slow', { ms: 300 }, 'short'), {}, 5_000);
    const long = await s.postOpen(toolCall('slow', { ms: 20_000 }, 'long'));
    await long.waitFor((r) => r.events.length > 0, 2_000, 'long request streaming (priming)');
    const closing = srv.served.handler.close({ graceMs: 700 });
    const refused = await new RawSession(srv.url).post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    assertRefusal(refused, 503, -32000, 'shutting-down');
    assert.equal(refused.headers['retry-after'], '1');
    const done = await short;
    assert.equal(
      done.messages().at(-1)?.result?.content?.[0]?.text ?? done.json().result.content[0].text,
      'slept 300',
    );
    const report = await withDeadline(closing, 3_000, 'close');
    assert.deepEqual(report, { sessions: 1, cutRequests: 1, drained: false });
    await long.finished(2_000, 'long stream ended at the deadline');
    assert.ok(long.retries.length >= 2, 'a retry hint before the end (priming carries the first)');
    await srv.close();
  });
});
