// The client transport against a hostile server: every answer is drawn (fast-check) — any status,
// any Content-Type, Retry-After and Mcp-Session-Id of any shape, JSON that is right, wrong or not
// JSON, SSE with garbage lines, stray fields, three line-ending styles, events over the size limit,
// duplicate and foreign responses, bodies split at random points, streams that end early, hang or
// are cut — for the POSTs, the resuming GETs and the DELETE alike, over both HTTP adapters.
// client-wire.test.ts pins the exact handling of each named case; this holds every drawn mix to the
// transport's contract (docs/client.md, "Completion, resumption, re-sending" and "Errors"):
// - every request settles exactly once: `send()` rejects with a typed `SluiceClientError`, or one
//   response with its id reaches `onmessage` (the server's, or the transport's own error response);
// - within a deadline (the transport's timeouts are short here): nothing hangs;
// - `onerror` gets only typed errors; `close()` ends everything, and no message arrives after it;
// - no error escapes the process.
// fast-check prints the seed, path and shrunk plan of a failure; FUZZ_SEED and FUZZ_PATH replay it,
// FUZZ_RUNS draws more (test/helpers/fuzz.ts).
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import {
  SluiceClientError,
  type StreamableHttpClientOptions,
  StreamableHttpClientTransport,
} from '../../src/client/index.js';
import { CLIENT_ADAPTERS } from '../helpers/client-adapters.js';
import { withDeadline } from '../helpers/deadline.js';
import { catchEscapes, fuzzParameters } from '../helpers/fuzz.js';
import { until } from '../helpers/http.js';
import { cutAt } from '../helpers/pieces.js';
import { type Scripted, type Seen, scripted } from '../helpers/scripted-server.js';

/** Runs per adapter, and the time they may take in all (test/helpers/fuzz.ts: FUZZ_RUNS for more). */
const RUNS = 40;
const TIME_LIMIT_MS = 6_000;
/** Every request of a run must have settled within this: the timeouts below are all far shorter. */
const SETTLE_MS = 8_000;
/** The transport's limit on one event (its floor is 1 KiB); some drawn events exceed it. */
const MAX_EVENT_BYTES = 2_048;

type EventKind =
  | 'response'
  | 'error-response'
  | 'foreign-response'
  | 'progress'
  | 'server-request'
  | 'garbage-data'
  | 'comment'
  | 'retry'
  | 'huge'
  | 'empty';

interface EventDraw {
  kind: EventKind;
  /** An `id:` field: none, a plausible one, or anything. */
  id: string | undefined;
  /** A stray field the parser must ignore or a `retry:` value of any shape. */
  extra: string | undefined;
}

type BodyDraw =
  | {
      kind: 'json';
      what: 'response' | 'error' | 'foreign' | 'batch' | 'garbage' | 'truncated' | 'empty' | 'huge';
    }
  | { kind: 'sse'; events: EventDraw[]; eol: '\n' | '\r\n' | '\r' };

interface AnswerDraw {
  status: number;
  type: string | undefined;
  headers: Record<string, string>;
  body: BodyDraw;
  /** Where the body is split into writes (fractions of its length), with a short pause between. */
  splits: number[];
  /** How the answer ends: properly, never (the transport's idle timeout must act), or cut. */
  end: 'end' | 'hold' | 'destroy';
}

const headerText = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,40}$/);

const eventDraw: fc.Arbitrary<EventDraw> = fc.record({
  kind: fc.constantFrom<EventKind>(
    'response',
    'response',
    'error-response',
    'foreign-response',
    'progress',
    'server-request',
    'garbage-data',
    'comment',
    'retry',
    'huge',
    'empty',
  ),
  id: fc.oneof(fc.constant(undefined), fc.constantFrom('s1/1/1', 'abc', ''), headerText),
  extra: fc.oneof(
    fc.constant(undefined),
    fc.constantFrom(
      'retry: 5',
      'retry: -1',
      'retry: 1e9',
      'retry: x',
      'event: message',
      'event: other',
      ':x',
      'bogus',
    ),
  ),
});

const bodyDraw: fc.Arbitrary<BodyDraw> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('json' as const),
      what: fc.constantFrom(
        'response',
        'response',
        'error',
        'foreign',
        'batch',
        'garbage',
        'truncated',
        'empty',
        'huge',
      ) as fc.Arbitrary<
        'response' | 'error' | 'foreign' | 'batch' | 'garbage' | 'truncated' | 'empty' | 'huge'
      >,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('sse' as const),
      events: fc.array(eventDraw, { maxLength: 5 }),
      eol: fc.constantFrom<'\n' | '\r\n' | '\r'>('\n', '\r\n', '\r'),
    }),
  },
);

const answerDraw: fc.Arbitrary<AnswerDraw> = fc.record({
  status: fc.oneof(
    { weight: 6, arbitrary: fc.constant(200) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(202, 204, 400, 401, 403, 404, 405, 406, 409, 410, 413, 429, 500, 502, 503),
    },
  ),
  type: fc.constantFrom(
    'application/json',
    'text/event-stream',
    'text/event-stream; charset=utf-8',
    'application/json; charset=utf-8',
    'text/plain',
    'text/html',
    undefined,
  ),
  headers: fc
    .record(
      {
        'retry-after': fc.oneof(
          fc.constantFrom('0', '1', '-3', 'soon', '99999', 'Wed, 21 Oct 2015 07:28:00 GMT'),
          headerText,
        ),
        'mcp-session-id': fc.oneof(fc.constantFrom('sess-1', 'sess-2'), headerText),
        'content-encoding': fc.constantFrom('gzip', 'br', 'identity', 'bogus'),
      },
      { requiredKeys: [] },
    )
    .map((h) => h as Record<string, string>),
  body: bodyDraw,
  splits: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 3 }),
  end: fc.constantFrom<AnswerDraw['end']>('end', 'end', 'end', 'end', 'hold', 'destroy'),
});

/** What one run does: requests sent at once on one transport, and the answers, in arrival order. */
interface Plan {
  requests: { method: string; idempotent: boolean }[];
  answers: AnswerDraw[];
  standalone: boolean;
}

const planDraw: fc.Arbitrary<Plan> = fc.record({
  requests: fc.array(
    fc.record({
      method: fc.constantFrom('initialize', 'tools/call', 'tools/list', 'ping'),
      idempotent: fc.boolean(),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  answers: fc.array(answerDraw, { minLength: 1, maxLength: 6 }),
  standalone: fc.boolean(),
});

function resultFor(method: string): Record<string, unknown> {
  if (method === 'initialize')
    return { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'fuzz', version: '1' } };
  if (method === 'tools/list') return { tools: [] };
  if (method === 'tools/call') return { content: [{ type: 'text', text: 'ok' }] };
  return {};
}

/** The JSON-RPC request a POST carried (its first one, for a batch), if any. */
function requestOf(seen: Seen): { id: unknown; method: string; token: unknown } | undefined {
  const b = seen.body as { id?: unknown; method?: unknown; params?: { _meta?: { progressToken?: unknown } } };
  if (b === undefined || typeof b.method !== 'string' || !('id' in b)) return undefined;
  return { id: b.id, method: b.method, token: b.params?._meta?.progressToken };
}

function jsonText(a: AnswerDraw & { body: { kind: 'json' } }, req: ReturnType<typeof requestOf>): string {
  const id = req?.id ?? 1;
  const ok = { jsonrpc: '2.0', id, result: resultFor(req?.method ?? 'ping') };
  switch (a.body.what) {
    case 'response':
      return JSON.stringify(ok);
    case 'error':
      return JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: 'no' } });
    case 'foreign':
      return JSON.stringify({ ...ok, id: 'not-yours' });
    case 'batch':
      return JSON.stringify([ok, { ...ok, id: 'not-yours' }, ok]);
    case 'garbage':
      return '{"jsonrpc": nope';
    case 'truncated':
      return JSON.stringify(ok).slice(0, 10);
    case 'empty':
      return '';
    case 'huge':
      return JSON.stringify({
        ...ok,
        result: { content: [{ type: 'text', text: 'x'.repeat(MAX_EVENT_BYTES * 2) }] },
      });
  }
}

function sseText(body: BodyDraw & { kind: 'sse' }, req: ReturnType<typeof requestOf>): string {
  const id = req?.id ?? 1;
  const eol = body.eol;
  let out = '';
  for (const e of body.events) {
    const lines: string[] = [];
    if (e.id !== undefined) lines.push(`id: ${e.id}`);
    if (e.extra !== undefined) lines.push(e.extra);
    const data = (m: unknown): void => {
      lines.push(`data: ${JSON.stringify(m)}`);
    };
    switch (e.kind) {
      case 'response':
        data({ jsonrpc: '2.0', id, result: resultFor(req?.method ?? 'ping') });
        break;
      case 'error-response':
        data({ jsonrpc: '2.0', id, error: { code: -32000, message: 'failed' } });
        break;
      case 'foreign-response':
        data({ jsonrpc: '2.0', id: 'not-yours', result: {} });
        break;
      case 'progress':
        data({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: req?.token ?? 1, progress: 1 },
        });
        break;
      case 'server-request':
        data({ jsonrpc: '2.0', id: 'srv-1', method: 'ping' });
        break;
      case 'garbage-data':
        lines.push('data: {not json');
        break;
      case 'comment':
        lines.push(': keepalive');
        break;
      case 'retry':
        lines.push('retry: 3');
        break;
      case 'huge':
        lines.push(`data: ${'y'.repeat(MAX_EVENT_BYTES * 2)}`);
        break;
      case 'empty':
        break;
    }
    out += lines.join(eol) + eol + eol;
  }
  return out;
}

/** Answers a request as drawn: head, the body in pieces, then the drawn end. */
function answer(res: ServerResponse, seen: Seen, a: AnswerDraw, held: Set<ServerResponse>): void {
  const req = requestOf(seen);
  const text =
    a.body.kind === 'json'
      ? jsonText(a as AnswerDraw & { body: { kind: 'json' } }, req)
      : sseText(a.body, req);
  const head: Record<string, string> = { ...a.headers };
  if (a.type !== undefined) head['content-type'] = a.type;
  res.writeHead(a.status, head);
  // The head always goes out: a server that never answers at all is bounded by the Client's request
  // timeout and the adapters' 300 s head wait, not by anything this test could wait for.
  res.flushHeaders();
  const bytes = Buffer.from(text);
  const pieces = cutAt(
    bytes,
    a.splits.map((f) => Math.floor(f * bytes.length)),
  );
  const next = (i: number): void => {
    if (res.destroyed) return;
    if (i < pieces.length) {
      res.write(pieces[i] as Buffer);
      setTimeout(() => next(i + 1), 1);
      return;
    }
    // A 204 has no body, so the client has its whole answer with the head: "holding" it would only
    // keep node's server from answering the next request on that keep-alive connection (a server
    // that never answers, which the comment on flushHeaders above rules out).
    if (a.end === 'end' || a.status === 204) res.end();
    else if (a.end === 'destroy') res.destroy();
    else held.add(res);
  };
  next(0);
}

/** One option set per HTTP adapter: short timeouts so that every path the draws open ends quickly. */
const SHORT: StreamableHttpClientOptions = {
  initialReconnectDelayMs: 2,
  maxReconnectDelayMs: 10,
  maxReconnectAttempts: 2,
  idleTimeoutMs: 150,
  stableConnectionMs: 1_000,
  maxRetryAfterMs: 20,
  closeTimeoutMs: 500,
  standaloneReadyWaitMs: 50,
  maxEventBytes: MAX_EVENT_BYTES,
};

for (const [adapter, adapterOptions] of Object.entries(CLIENT_ADAPTERS)) {
  describe(`client transport against drawn hostile answers (${adapter} adapter)`, () => {
    let server: Scripted;
    let plan: Plan = { requests: [], answers: [], standalone: false };
    const held = new Set<ServerResponse>();
    const lastStatus = new Map<string, number>();
    const escapes = catchEscapes();

    before(async () => {
      escapes.start();
      // The k-th request of a run (POST, GET or DELETE) gets the run's k-th answer, cycling.
      server = await scripted((_req, res, seen, all) => {
        const k = all.length - 1;
        const a = plan.answers[k % plan.answers.length];
        if (a === undefined) {
          res.writeHead(500).end();
          return;
        }
        const req = requestOf(seen);
        // The status the last POST of each request got (a re-sent copy's id carries a suffix).
        if (seen.method === 'POST' && req !== undefined)
          lastStatus.set(String(req.id).replace(/\.sluice-resend-\d+$/, ''), a.status);
        answer(res, seen, a, held);
      });
    });

    after(async () => {
      await server.close();
      escapes.stop();
    });

    test('every request settles once, with a typed error or one response; close ends everything', async () => {
      await fc.assert(
        fc.asyncProperty(planDraw, async (p) => {
          plan = p;
          server.seen.length = 0;
          lastStatus.clear();
          const transport = new StreamableHttpClientTransport(new URL(server.url), {
            ...SHORT,
            ...adapterOptions,
            openStandaloneStream: p.standalone,
            isIdempotent: (r) =>
              p.requests.find((q, i) => `${q.method}-${i}` === String(r.id))?.idempotent ?? false,
          });
          const responses = new Map<string, number>();
          const errors: unknown[] = [];
          let closed = false;
          const late: unknown[] = [];
          transport.onmessage = (m: JSONRPCMessage) => {
            if (closed) late.push(m);
            if ('id' in m && !('method' in m))
              responses.set(String(m.id), (responses.get(String(m.id)) ?? 0) + 1);
          };
          transport.onerror = (e) => errors.push(e);
          await transport.start();
          const thrown = new Map<string, unknown>();
          const ids = p.requests.map((q, i) => `${q.method}-${i}`);
          try {
            await withDeadline(
              Promise.all(
                p.requests.map(async (q, i) => {
                  const id = ids[i] as string;
                  const params =
                    q.method === 'initialize'
                      ? {
                          protocolVersion: '2025-11-25',
                          capabilities: {},
                          clientInfo: { name: 'f', version: '1' },
                        }
                      : q.method === 'tools/call'
                        ? { name: 'x', arguments: {}, _meta: { progressToken: id } }
                        : {};
                  try {
                    await transport.send({ jsonrpc: '2.0', id, method: q.method, params } as JSONRPCMessage);
                  } catch (e) {
                    thrown.set(id, e);
                  }
                }),
              ),
              SETTLE_MS,
              'every send() returned or threw',
            );
            // Each request settles: thrown from send(), or a response with its id, exactly once. A
            // request answered 202 stays pending by design: its response may still come on the
            // standalone GET stream (docs/client.md); close() ends it with the rest.
            const owed = (): string[] =>
              ids.filter((id) => !thrown.has(id) && !responses.has(id) && lastStatus.get(id) !== 202);
            await until(() => owed().length === 0, SETTLE_MS, 'every request settled', 5).catch(
              (e: unknown) => {
                throw new Error(`${String(e)}; owed: ${owed().join(', ')}`);
              },
            );
            for (const id of ids) {
              if (!thrown.has(id) && !responses.has(id)) continue;
              const e = thrown.get(id);
              if (e !== undefined) {
                assert.ok(
                  e instanceof SluiceClientError,
                  `${id}: send() threw a typed error, got ${String(e)}`,
                );
                assert.equal(responses.get(id), undefined, `${id}: thrown and answered`);
              } else {
                assert.equal(responses.get(id), 1, `${id}: exactly one response`);
              }
            }
            for (const e of errors) assert.ok(e instanceof Error, `onerror got an Error, got ${String(e)}`);
          } finally {
            await withDeadline(transport.close(), 5_000, 'close()');
            closed = true;
            for (const r of held) r.destroy();
            held.clear();
          }
          await new Promise((r) => setTimeout(r, 20));
          assert.deepEqual(late, [], 'no message after close()');
        }),
        fuzzParameters(RUNS, TIME_LIMIT_MS),
      );
      assert.deepEqual(escapes.escaped, [], 'no error escaped');
    });
  });
}
