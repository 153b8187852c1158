/**
 * A grammar of hostile requests to an MCP endpoint, both protocol eras (fast-check), and the judge of
 * each answer: shared by the generated-input tests of one server (test/integration/endpoint-fuzz)
 * and of a cluster (test/cluster/endpoint-fuzz-cluster). What is drawn: the HTTP methods, the headers
 * the transport reads (Accept, Content-Type, MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method,
 * Mcp-Name, Mcp-Param-*, Last-Event-ID, Origin, Authorization), and JSON-RPC bodies with their
 * fields replaced by arbitrary JSON, batches, truncated text and bytes that are not UTF-8. What every
 * answer must keep is in `judge`.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { encodeHeaderValue } from '../../src/http/param-headers.js';
import { ACCEPT_BOTH, LATEST, open, type Reply } from './http.js';
import { MODERN } from './modern.js';
import type { Running } from './test-server.js';

/** An SSE answer to a POST must end within this (the tools drawn below all answer at once). */
const POST_STREAM_MS = 5_000;

export interface Draw {
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

export function draw(port: number, victim: () => string, token?: string): fc.Arbitrary<Draw> {
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
export async function judge(d: Draw, r: Reply): Promise<string | undefined> {
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

/**
 * Whether a server holds nothing a run could have left: no session, open GET or POST stream,
 * 2026-07-28 request, listen stream or concurrency slot, and (a cluster member) no stream copy.
 */
export function nothingLeft(s: ReturnType<Running['stats']>): boolean {
  return (
    s.sessions.active === 0 &&
    s.streams.open.get === 0 &&
    s.streams.open.post === 0 &&
    s.modern.inflight === 0 &&
    s.modern.listenStreams === 0 &&
    s.modern.slotsHeld === 0 &&
    (s.cluster?.replica.bytes ?? 0) === 0
  );
}

/** One drawn request: sent, judged (or cut); resolves with a session an initialize created. */
export async function exchange(url: string, d: Draw): Promise<string | undefined> {
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
