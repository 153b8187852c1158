// Generated hostile requests against a real server on 127.0.0.1:0, both protocol eras on one
// endpoint. hostile-input.test.ts pins the exact answer to each case of a named catalogue; this file
// draws requests from a grammar instead (fast-check): the HTTP methods, the headers the transport
// reads (Accept, Content-Type, MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name,
// Mcp-Param-*, Last-Event-ID, Origin), and JSON-RPC bodies with their fields replaced by arbitrary
// JSON, batches, truncated text and bytes that are not UTF-8. Every answer must keep what any
// input must keep (the brief: "bad input gets a clear error ... and leaves no state behind"):
// - no 5xx: a server error means an input reached a path that threw;
// - a 4xx carries a JSON-RPC error body (`jsonrpc`, `id`, an integer `code`, a `message`), except
//   the statuses whose body the spec leaves empty (below);
// - a 2xx JSON body is JSON-RPC 2.0; an SSE answer to a POST ends by itself;
// - afterwards, with the sessions the run created deleted, no session, stream, modern request,
//   listen stream or concurrency slot is left, no error escaped the process, and the server serves.
// fast-check prints the seed, path and shrunk request of a failure; FUZZ_SEED and FUZZ_PATH replay
// it, FUZZ_RUNS draws more (test/helpers/fuzz.ts).
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { encodeHeaderValue } from '../../src/http/param-headers.js';
import { oauthResourceServer, type ServeOptions } from '../../src/server/index.js';
import { signingKey, TestAuthServer } from '../helpers/auth-server.js';
import { withDeadline } from '../helpers/deadline.js';
import { catchEscapes, fuzzParameters } from '../helpers/fuzz.js';
import { ACCEPT_BOTH, LATEST, open, RawSession, type Reply, send, toolCall, until } from '../helpers/http.js';
import { MODERN, modernBody, modernSend } from '../helpers/modern.js';
import { type Running, startServer } from '../helpers/test-server.js';

/**
 * Runs per server variant, requests sent at once per run, and the time a variant's runs may take in
 * all: fast-check stops drawing at the limit, so a slow machine runs fewer, never hangs
 * (test/helpers/fuzz.ts: FUZZ_RUNS for more).
 */
const RUNS = 100;
const LANES = 4;
const TIME_LIMIT_MS = 6_000;
/** Sessions with nothing running end after this (checked at a quarter of it). */
const IDLE_MS = 2_000;
/** An SSE answer to a POST must end within this (the tools drawn below all answer at once). */
const POST_STREAM_MS = 5_000;

interface Draw {
  method: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
  /** The body's JSON-RPC method, when it has one (an initialize answer names a session to delete). */
  rpcMethod: string | undefined;
  /** The client goes away: right after sending, or once the answer's head arrived. */
  cut: 'none' | 'early' | 'head';
}

/** Header values node's client accepts: visible ASCII and spaces, nothing that frames the request. */
const headerText = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,60}$/);
const anyJson = fc.jsonValue({ maxDepth: 3 });
const absent = fc.constant(undefined);

function definedValues<T>(r: Record<string, T | undefined>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of Object.entries(r)) if (v !== undefined) out[k] = v;
  return out;
}
/**
 * Tool names: `echo` answers at once and `slow` after at most 30 ms (so cut connections leave work in
 * flight); the rest are unknown. None of the test server's tools that wait on the client (`ask`,
 * `poll`, ...) is drawn: a request that legitimately waits is not what this checks.
 */
const toolName = fc.oneof(
  fc.constantFrom('echo', 'echo', 'slow', 'nope', ''),
  headerText.map((s) => `zz${s}`),
);
const version = fc.constantFrom(LATEST, '2025-06-18', '2025-03-26', MODERN, '2024-11-05', 'banana', '');

const rpcMethods = fc.constantFrom(
  'initialize',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'ping',
  'tools/list',
  'tools/call',
  'prompts/list',
  'resources/list',
  'resources/read',
  'logging/setLevel',
  'completion/complete',
  'server/discover',
  'subscriptions/listen',
  'tasks/get',
  'tasks/cancel',
  'no/such/method',
);

/** `good` most of the time, `bad` now and then: requests must get past the front checks to reach deeper paths. */
type Often = <T>(good: T, bad: fc.Arbitrary<T>, weight?: number) => fc.Arbitrary<T>;
type Era = 'session' | 'modern';

/**
 * A request is drawn clean (every part well formed, so it reaches the handlers and the streams) or
 * rough (each part now and then wrong, so the checks on the way see every mix of faults).
 */
function chooser(clean: boolean): Often {
  return <T>(good: T, bad: fc.Arbitrary<T>, weight = 6): fc.Arbitrary<T> =>
    clean
      ? fc.constant(good)
      : fc.oneof({ weight, arbitrary: fc.constant(good) }, { weight: 1, arbitrary: bad });
}

/** The 2026-07-28 request `_meta`: right most of the time, each key now and then anything. */
const modernMeta = (often: Often): fc.Arbitrary<Record<string, unknown>> =>
  fc
    .record({
      'io.modelcontextprotocol/protocolVersion': often<unknown>(MODERN, fc.oneof(version, anyJson, absent)),
      'io.modelcontextprotocol/clientCapabilities': often<unknown>({}, fc.oneof(anyJson, absent)),
      'io.modelcontextprotocol/clientInfo': often<unknown>(
        { name: 'fuzz', version: '1' },
        fc.oneof(anyJson, absent),
      ),
      'io.modelcontextprotocol/logLevel': fc.oneof(
        fc.constantFrom('debug', 'error', undefined),
        often(undefined, anyJson),
      ),
      progressToken: fc.oneof(fc.integer(), headerText, absent, often(undefined, anyJson)),
    })
    .map(definedValues);

/** Params for a method: well formed most of the time, anything JSON otherwise. */
function paramsFor(method: string, era: Era, often: Often): fc.Arbitrary<unknown> {
  const good: Record<string, fc.Arbitrary<unknown>> = {
    initialize: fc.record({
      protocolVersion: often<string>(LATEST, version),
      capabilities: often<unknown>({}, anyJson),
      clientInfo: often<unknown>({ name: 'fuzz', version: '1' }, anyJson),
    }),
    'tools/call': fc.record(
      {
        name: toolName,
        arguments: fc.oneof(
          fc.record({ text: often<unknown>('hi', anyJson) }),
          fc.record({ ms: fc.integer({ min: -5, max: 30 }) }),
          anyJson,
        ),
      },
      { requiredKeys: ['name'] },
    ),
    'notifications/cancelled': fc.record({
      requestId: fc.oneof(fc.integer(), fc.string()),
      reason: fc.string(),
    }),
    'resources/read': fc.record({ uri: fc.oneof(fc.constant('test://r/1'), fc.string()) }),
    'tasks/get': fc.record({ taskId: fc.oneof(headerText, anyJson) }),
    'tasks/cancel': fc.record({ taskId: fc.oneof(headerText, anyJson) }),
  };
  const base = good[method] ?? fc.oneof(fc.constant({}), fc.dictionary(fc.string({ maxLength: 8 }), anyJson));
  const meta =
    era === 'modern' ? often<boolean>(true, fc.constant(false)) : often<boolean>(false, fc.constant(true));
  return fc
    .tuple(base, meta, modernMeta(often))
    .map(([params, withMeta, m]) => {
      if (!withMeta || typeof params !== 'object' || params === null || Array.isArray(params)) return params;
      return { ...params, _meta: m };
    })
    .chain((params) => often<unknown>(params, fc.oneof(anyJson, fc.constant(undefined)), 4));
}

/** One JSON-RPC message: a request, a notification, a response, or one with a field gone wrong. */
function message(era: Era, often: Often): fc.Arbitrary<Record<string, unknown>> {
  return rpcMethods.chain((method) =>
    fc
      .record(
        {
          jsonrpc: often<unknown>('2.0', anyJson, 12),
          id: fc.oneof(
            { weight: 6, arbitrary: fc.integer({ min: -5, max: 1_000_000 }) },
            { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
            { weight: 1, arbitrary: often<unknown>(7, fc.constantFrom(null, 1.5, true, [], {}), 1) },
          ),
          method: often<unknown>(method, anyJson, 12),
          params: paramsFor(method, era, often),
          result: often<unknown>({}, anyJson),
          error: fc.record({ code: fc.integer(), message: fc.string() }),
        },
        { requiredKeys: ['jsonrpc', 'id', 'method', 'params'] },
      )
      .chain((m) =>
        // Now and then a response (result or error, no method) instead of a request.
        fc.nat({ max: 9 }).map((k) => {
          const out: Record<string, unknown> = { ...m };
          if (k === 0) {
            delete out['method'];
            delete out['params'];
            delete out['error'];
          } else if (k === 1) {
            delete out['method'];
            delete out['params'];
            delete out['result'];
          } else {
            delete out['result'];
            delete out['error'];
          }
          // Notifications carry no id.
          if (method.startsWith('notifications/') && k > 1) delete out['id'];
          if (out['params'] === undefined) delete out['params'];
          return out;
        }),
      ),
  );
}

function bodyOf(
  era: Era,
  often: Often,
  clean: boolean,
): fc.Arbitrary<{ body: string | Buffer | undefined; rpcMethod: string | undefined }> {
  const one = message(era, often).map((m) => ({ body: JSON.stringify(m), rpcMethod: methodOf(m) }));
  if (clean) return one;
  const none = (b: string | Buffer | undefined) => ({ body: b, rpcMethod: undefined });
  return fc.oneof(
    { weight: 16, arbitrary: one },
    {
      weight: 2,
      arbitrary: fc.array(message(era, often), { maxLength: 4 }).map((ms) => none(JSON.stringify(ms))),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(message(era, often), fc.nat()).map(([m, cut]) => {
        const text = JSON.stringify(m);
        return none(text.slice(0, cut % Math.max(1, text.length)));
      }),
    },
    { weight: 1, arbitrary: anyJson.map((v) => none(JSON.stringify(v))) },
    { weight: 1, arbitrary: fc.string().map(none) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => none(Buffer.from(b))) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((n) => none('['.repeat(n))) },
    { weight: 1, arbitrary: fc.constant(none(undefined)) },
  );
}

function methodOf(m: Record<string, unknown>): string | undefined {
  return typeof m['method'] === 'string' ? m['method'] : undefined;
}

/** Mirrors of the body's method and name as a 2026-07-28 client sends them, or a wrong mirror. */
function mirrorHeaders(
  text: string | Buffer | undefined,
  era: Era,
  often: Often,
): fc.Arbitrary<Record<string, string>> {
  let parsed: unknown;
  try {
    parsed = typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const m = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {};
  const method = (m as { method?: unknown }).method;
  const params = (m as { params?: { name?: unknown } }).params;
  const name = typeof params === 'object' && params !== null ? params.name : undefined;
  const rightMethod = typeof method === 'string' ? encodeHeaderValue(method) : undefined;
  const rightName = typeof name === 'string' ? encodeHeaderValue(name) : undefined;
  return fc
    .record({
      'mcp-method':
        era === 'modern'
          ? often(rightMethod, fc.oneof(headerText, absent))
          : often(undefined, headerText, 12),
      'mcp-name':
        era === 'modern' ? often(rightName, fc.oneof(headerText, absent)) : often(undefined, headerText, 12),
      'mcp-param-text': often(undefined, headerText, 10),
    })
    .map(definedValues);
}

/**
 * The Authorization header, when the server is an OAuth resource server: the valid token most of the
 * time, otherwise a malformed, tampered or foreign one (each a refusal with its own reason).
 */
function authorization(often: Often, token: string): fc.Arbitrary<string | undefined> {
  const [head, payload, signature] = token.split('.') as [string, string, string];
  return often<string | undefined>(
    `Bearer ${token}`,
    fc.oneof(
      fc.constantFrom(
        undefined,
        'Bearer ',
        'Bearer two tokens',
        'Basic dXNlcjpwYXNz',
        `DPoP ${token}`,
        // A signature that does not match, a payload that is not the one signed, no signature.
        `Bearer ${head}.${payload}.${signature.slice(0, -4)}AAAA`,
        `Bearer ${head}.${Buffer.from('{"aud":"x"}').toString('base64url')}.${signature}`,
        `Bearer ${head}.${payload}.`,
      ),
      headerText.map((t) => `Bearer ${t}`),
    ),
  );
}

function draw(port: number, victim: () => string, token?: string): fc.Arbitrary<Draw> {
  return fc.tuple(fc.constantFrom<Era>('session', 'modern'), fc.boolean()).chain(([e, clean]) => {
    const often = chooser(clean);
    return fc
      .tuple(
        often('POST', fc.constantFrom('GET', 'GET', 'DELETE', 'PUT', 'OPTIONS', 'PATCH'), 4),
        bodyOf(e, often, clean),
        fc.constantFrom<Draw['cut']>('none', 'none', 'none', 'none', 'none', 'none', 'early', 'head'),
        fc.record({
          accept: often<string | undefined>(
            ACCEPT_BOTH,
            fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html', undefined),
          ),
          'content-type': often<string | undefined>(
            'application/json',
            fc.constantFrom(
              'application/json; charset=utf-8',
              'application/json; charset=latin1',
              'text/plain',
              undefined,
            ),
          ),
          'mcp-protocol-version': often<string | undefined>(
            e === 'modern' ? MODERN : LATEST,
            fc.oneof(version, fc.constant(undefined)),
          ),
          'mcp-session-id': often<string | undefined>(
            e === 'session' ? '$victim' : undefined,
            fc.oneof(
              headerText,
              fc.constant('x'.repeat(4096)),
              fc.constant('$victim'),
              fc.constant(undefined),
            ),
          ),
          'last-event-id': often<string | undefined>(undefined, headerText),
          origin: often<string | undefined>(
            undefined,
            fc.constantFrom(`http://127.0.0.1:${port}`, 'http://evil.example', 'null'),
          ),
          authorization: token === undefined ? fc.constant(undefined) : authorization(often, token),
        }),
      )
      .chain(([method, b, cut, headers]) =>
        mirrorHeaders(b.body, e, often).map((mirrors) => {
          const h = { ...definedValues(headers), ...mirrors };
          if (h['mcp-session-id'] === '$victim') h['mcp-session-id'] = victim();
          // A clean initialize is the handshake itself: no session yet, the version in the body.
          if (clean && b.rpcMethod === 'initialize' && e === 'session') {
            delete h['mcp-session-id'];
            delete h['mcp-protocol-version'];
          }
          const body = method === 'GET' ? undefined : b.body;
          // Framed, as any client frames a body: node's client sends a DELETE or OPTIONS body with
          // neither Content-Length nor chunking, which is not an HTTP request at all.
          if (body !== undefined) h['content-length'] = String(Buffer.byteLength(body));
          // A cut DELETE might or might not end the session the other draws use: never cut one.
          return {
            method,
            headers: h,
            body,
            rpcMethod: b.rpcMethod,
            cut: method === 'DELETE' ? 'none' : cut,
          };
        }),
      );
  });
}

/** Statuses whose body the spec or HTTP leaves empty: accepted notifications and responses, CORS preflight. */
const EMPTY_OK = new Set([202, 204]);

function checkJsonRpc(value: unknown, where: string): void {
  const items = Array.isArray(value) ? value : [value];
  for (const v of items) {
    assert.equal(typeof v, 'object', `${where}: a JSON-RPC message is an object`);
    const m = v as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } };
    assert.equal(m.jsonrpc, '2.0', `${where}: jsonrpc 2.0`);
    if (m.error !== undefined) {
      assert.ok(Number.isInteger(m.error.code), `${where}: an integer error code`);
      assert.equal(typeof m.error.message, 'string', `${where}: an error message`);
    }
  }
}

/** Checks one answer and lets it go; returns a session an initialize created, if any. */
async function judge(d: Draw, r: Reply): Promise<string | undefined> {
  const where = `${d.method} ${JSON.stringify(d.headers)} ${String(d.body).slice(0, 300)} → ${r.status}`;
  assert.ok(r.status < 500, `no server error: ${where}`);
  const type = r.headers['content-type'] ?? '';
  if (r.isSse) {
    // A GET stream and subscriptions/listen stay open by design; any other SSE answer ends by itself.
    if (d.method === 'GET' || d.rpcMethod === 'subscriptions/listen') {
      r.destroy();
      return undefined;
    }
    await r.finished(POST_STREAM_MS, `SSE answer of ${where}`);
    for (const m of r.messages()) checkJsonRpc(m, `event of ${where}`);
  } else {
    await r.finished(POST_STREAM_MS, `body of ${where}`);
    if (r.status >= 400 && !EMPTY_OK.has(r.status)) {
      assert.ok(type.startsWith('application/json'), `a JSON-RPC error body: ${where} (${type}) ${r.text}`);
      const b = JSON.parse(r.text) as { error?: unknown; id?: unknown };
      checkJsonRpc(b, where);
      assert.ok(b.error !== undefined, `an error: ${where}`);
      assert.ok('id' in b, `an id (null when unknown): ${where}`);
    } else if (type.startsWith('application/json') && r.text.length > 0) {
      checkJsonRpc(JSON.parse(r.text), where);
    } else if (r.status >= 200 && r.status < 300) {
      assert.ok(EMPTY_OK.has(r.status) && r.text.length === 0, `an empty 202/204 or a JSON body: ${where}`);
    }
  }
  const sid = r.headers['mcp-session-id'];
  return r.status === 200 && typeof sid === 'string' && d.rpcMethod === 'initialize' ? sid : undefined;
}

/** One drawn request: sent, judged (or cut); resolves with a session an initialize created. */
async function exchange(url: string, d: Draw): Promise<string | undefined> {
  if (d.cut === 'early') {
    await sendAndLeave(url, d);
    return undefined;
  }
  const r = await open(url, {
    method: d.method,
    headers: d.headers,
    ...(d.body === undefined ? {} : { body: d.body }),
  });
  if (d.cut === 'head') {
    r.destroy();
    assert.ok(r.status < 500, `no server error: ${d.method} ${JSON.stringify(d.headers)} → ${r.status}`);
    return undefined;
  }
  return judge(d, r);
}

/** Sends the request and goes away a moment later, without waiting for an answer. */
function sendAndLeave(url: string, d: Draw): Promise<void> {
  return new Promise<void>((resolve) => {
    const req = httpRequest(url, { method: d.method, headers: d.headers, agent: false });
    req.once('error', () => resolve());
    req.once('close', () => resolve());
    req.end(d.body, () => setImmediate(() => req.destroy()));
  });
}

/**
 * The server variants the same draws run against: as configured by default; with hibernation at
 * 0 ms (each session's server is dropped after every answer, so most requests wake one);
 * stateless (a server per request, no session ever created); and as an OAuth resource server trusting
 * a real authorization server (oidc-provider), with the Authorization header drawn too.
 */
const VARIANTS: readonly { name: string; options: Omit<ServeOptions, 'createServer'>; oauth?: true }[] = [
  { name: 'default', options: {} },
  { name: 'hibernating at once', options: { hibernateAfterMs: 0 } },
  { name: 'stateless', options: { stateless: true } },
  { name: 'OAuth resource server', options: {}, oauth: true },
];

for (const variant of VARIANTS) {
  describe(`generated hostile requests, both eras (${variant.name})`, () => {
    let srv: Running;
    let as: TestAuthServer | undefined;
    /** The valid token's header when the server is a resource server, sent by every request of ours. */
    let auth: Record<string, string> = {};
    let token: string | undefined;
    const escapes = catchEscapes();

    before(async () => {
      escapes.start();
      if (variant.oauth === true)
        as = await TestAuthServer.start({ keys: [await signingKey('fuzz')], scopes: ['mcp'] });
      const issuer = as?.issuer;
      srv = await startServer({
        keepaliveMs: 0,
        // An initialize whose client left after the answer was written leaves a session nobody
        // knows the id of: it ends by the idle timeout, short here so the test sees it happen.
        sessionIdleMs: IDLE_MS,
        // No initialize rate limit: the run may create sessions quickly (each is deleted at the end).
        clientLimits: { initializePerSecond: 1_000_000, initializeBurst: 1_000_000 },
        ...variant.options,
        ...(issuer === undefined
          ? {}
          : {
              oauth: (endpoint: string) =>
                oauthResourceServer({ resource: endpoint, authorizationServers: [issuer], scopes: ['mcp'] }),
            }),
      });
      if (as !== undefined) {
        token = await as.token(srv.url, 'mcp');
        auth = { authorization: `Bearer ${token}` };
      }
    });

    after(async () => {
      await srv.close();
      await as?.stop();
      escapes.stop();
    });

    test('every answer keeps the invariants, and nothing is left behind', async () => {
      const stateless = variant.options.stateless === true;
      const victim = new RawSession(srv.url, auth);
      const created = new Set<string>();
      const openVictim = async (): Promise<void> => {
        // Stateless: initialize is answered, but no session exists to aim requests at.
        if (stateless) return;
        await victim.init();
        created.add(victim.sid ?? '');
      };
      await openVictim();
      await fc.assert(
        fc.asyncProperty(
          // A few requests at once: races between a session's requests, its DELETE and its streams.
          fc.array(
            draw(srv.port, () => victim.sid ?? 'none', token),
            { minLength: 1, maxLength: LANES },
          ),
          async (draws) => {
            const victimBefore = victim.sid;
            await Promise.all(
              draws.map(async (d) => {
                const sid = await exchange(srv.url, d);
                if (sid !== undefined) created.add(sid);
              }),
            );
            // A drawn DELETE may have ended the session the session-era draws use: open another.
            const gone = draws.some(
              (d) => d.method === 'DELETE' && d.headers['mcp-session-id'] === victimBefore,
            );
            // (The old one, if it lives on, is in `created` and is deleted at the end.)
            if (gone) await openVictim();
          },
        ),
        fuzzParameters(RUNS, TIME_LIMIT_MS),
      );

      // What the run created goes away (and what a cut initialize created ends by idling out); then
      // nothing may be left.
      for (const sid of created) {
        const r = await send(srv.url, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': sid } });
        assert.ok(r.status === 200 || r.status === 204 || r.status === 404, `DELETE ${sid}: ${r.status}`);
      }
      await until(
        () => {
          const s = srv.stats();
          return (
            s.sessions.active === 0 &&
            s.streams.open.get === 0 &&
            s.streams.open.post === 0 &&
            s.modern.inflight === 0 &&
            s.modern.listenStreams === 0 &&
            s.modern.slotsHeld === 0
          );
        },
        IDLE_MS * 3,
        'no session, stream, modern request, listen stream or slot left',
      ).catch((e: unknown) => {
        const s = srv.stats();
        throw new Error(
          `${String(e)}: ${JSON.stringify({ sessions: s.sessions.active, streams: s.streams.open, modern: s.modern })}`,
        );
      });
      assert.deepEqual(escapes.escaped, [], 'no error escaped the server');
      // Every handler that began has ended, by finishing or by being cancelled.
      const slow = (l: string): boolean => l.startsWith('slow:');
      const ended = srv.probe.finished.filter(slow).length + srv.probe.aborted.filter(slow).length;
      assert.equal(ended, srv.probe.started.get('slow') ?? 0, 'every slow call that began has ended');

      // And it still serves both eras.
      const modern = await withDeadline(
        modernSend(srv.url, modernBody('tools/call', { name: 'echo', arguments: { text: 'modern' } }), auth),
        5_000,
        'modern echo',
      );
      assert.equal(modern.status, 200);
      assert.match(modern.text, /modern/);
      if (stateless) return;
      const fresh = new RawSession(srv.url, auth);
      await fresh.init();
      const echo = await fresh.post(toolCall('echo', { text: 'after' }));
      assert.equal(echo.status, 200);
      assert.match(echo.text, /after/);
      await fresh.delete();
    });
  });
}
