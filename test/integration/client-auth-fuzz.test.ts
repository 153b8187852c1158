// Generated hostile authorization servers against the client's OAuth flow (src/client/auth/). One scripted server
// on 127.0.0.1 plays the MCP server (401 with a drawn challenge, then the answer to a token), its protected
// resource metadata and the authorization server (metadata, registration, token endpoint); fast-check draws what
// each part answers: the right document, an error status, garbage, a wrong shape, 300 KiB, a head that never
// comes, a body that stalls or is cut, an issuer or resource that does not match, or a URL swapped for one a
// hostile server would like the client to reach (cloud metadata, private and link-local addresses in every
// spelling, plain HTTP on the internet, other schemes). The user's return from the authorization server is drawn
// too (right, wrong state, an error, no code, a foreign `iss`).
//
// What must hold on every run:
// - every request settles within a deadline: its response arrives, or `send()` throws a typed SluiceClientError;
// - the client never tries a URL its policy forbids (the test's `fetch` reaches only loopback and records every
//   attempt; a forbidden one fails the run even though it never left the machine);
// - the access token goes only to the MCP server, the client secret and the code only to the token endpoint the
//   metadata named, and no secret ever travels in a URL;
// - nothing escapes the process; `close()` ends everything.
//
// FUZZ_SEED / FUZZ_PATH replay a failure, FUZZ_RUNS hunts longer (test/helpers/fuzz.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { SluiceClientError, StreamableHttpClientTransport } from '../../src/client/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { catchEscapes, fuzzParameters } from '../helpers/fuzz.js';
import { type Answer, Provider, returnFrom, type Script, World } from '../helpers/hostile-as.js';

/** URLs the policy must refuse for a loopback MCP server (`P` is the scripted server's port). */
const FORBIDDEN = [
  'http://169.254.169.254/latest/meta-data/',
  'https://169.254.169.254/',
  'https://[::ffff:a9fe:a9fe]/',
  'https://0xa9fea9fe/',
  'https://2852039166/',
  'http://10.0.0.1/token',
  'https://192.168.1.1/',
  'https://[fd00::1]/',
  'https://[fe80::1]/',
  'http://as.example/token',
  'http://0.0.0.0:P/',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'ftp://127.0.0.1:P/',
  'not a url',
];
/** Allowed, and unreachable here (the test's fetch fails them without touching the network). */
const UNREACHABLE = ['https://as.example/', 'https://8.8.8.8/token'];
/** Allowed and reachable: loopback, where the scripted server answers 404 or the right document. */
const LOOPBACK = ['http://127.0.0.1:P/nowhere', 'http://localhost:P/as', 'http://127.0.0.1:P/as/token'];

const url = fc.constantFrom(...FORBIDDEN, ...UNREACHABLE, ...LOOPBACK);
const answer: fc.Arbitrary<Answer> = fc.oneof(
  { weight: 20, arbitrary: fc.constant({ kind: 'good' as const }) },
  fc.record({ kind: fc.constant('status' as const), status: fc.constantFrom(400, 401, 403, 404, 500, 503) }),
  fc.constant({ kind: 'garbage' as const }),
  fc.record({ kind: fc.constant('shape' as const), body: fc.jsonValue({ maxDepth: 2 }) }),
  fc.constant({ kind: 'huge' as const }),
  fc.constant({ kind: 'stall-head' as const }),
  fc.constant({ kind: 'stall-body' as const }),
  fc.constant({ kind: 'cut' as const }),
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('swap' as const), field: fc.nat(4), url }) },
);
const script: fc.Arbitrary<Script> = fc.record({
  challenge: fc.oneof({ weight: 4, arbitrary: fc.constant('good') }, fc.constant('absent'), url),
  prm: answer,
  asMeta: answer,
  register: answer,
  token: answer,
  redirect: fc.constantFrom(
    'good',
    'good',
    'good-iss',
    'wrong-state',
    'error',
    'no-code',
    'wrong-iss',
    'none',
  ),
  after: fc.constantFrom('ok', 'ok', 'ok', '401', '403'),
  requests: fc.integer({ min: 1, max: 3 }),
});

/** The scripted world: one server, the script of the current run, and what it saw. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** A URL as the WHATWG parser writes it (`https://0xa9fea9fe/` is `https://169.254.169.254/`); else as given. */
function normal(raw: string): string {
  try {
    return new URL(raw).href;
  } catch {
    return raw;
  }
}

describe('the OAuth client against generated hostile authorization servers', () => {
  const world = new World();
  const escapes = catchEscapes();
  before(async () => {
    await world.start();
    escapes.start();
  });
  after(async () => {
    escapes.stop();
    await world.close();
  });

  test('every request settles, typed; no forbidden URL is tried; secrets go only where they belong', async (t) => {
    /** How the runs' requests ended: `answered`, or the error's reason (or code), for the diagnostic line. */
    const tally = new Map<string, number>();
    const count = (key: string): void => {
      tally.set(key, (tally.get(key) ?? 0) + 1);
    };
    /** Hosts of the pool's allowed, unreachable URLs: https to them is allowed (and fails in the test's fetch). */
    const unreachable = new Set(UNREACHABLE.map((u) => new URL(u).host));
    /** Not HTTP(S), or off loopback and not an allowed https host of the pool: the policy should have refused it. */
    const refusable = (raw: string): boolean => {
      const href = normal(raw);
      if (!href.startsWith('http://') && !href.startsWith('https://')) return true;
      const u = new URL(href);
      if (LOOPBACK_HOSTS.has(u.hostname)) return false;
      return !(u.protocol === 'https:' && unreachable.has(u.host));
    };
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(script, async (s) => {
        runs++;
        world.reset(s);
        const provider = new Provider();
        const attempts: string[] = [];
        const fetchFn = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
          const raw = input instanceof Request ? input.url : String(input);
          attempts.push(raw);
          if (refusable(raw) || !LOOPBACK_HOSTS.has(new URL(raw).hostname)) {
            return Promise.reject(new TypeError(`test fetch: ${raw} is not on loopback`));
          }
          return fetch(input, init);
        };
        const errors: unknown[] = [];
        const answered = new Set<unknown>();
        const transport = new StreamableHttpClientTransport(`${world.origin}/mcp`, {
          authProvider: provider,
          fetch: fetchFn,
          idleTimeoutMs: 250,
          maxStepUps: 1,
          dpop: false,
          ...(s.redirect === 'none'
            ? {}
            : { waitForAuthorizationResponse: async () => returnFrom(world, provider, s.redirect) }),
        });
        transport.onmessage = (m) => {
          if ('id' in m) answered.add(m.id);
        };
        transport.onerror = (e) => errors.push(e);
        try {
          await transport.start();
          const ids = Array.from({ length: s.requests }, (_, i) => i + 1);
          const outcomes = await withDeadline(
            Promise.allSettled(
              ids.map((id) => transport.send({ jsonrpc: '2.0', id, method: 'tools/list', params: {} })),
            ),
            10_000,
            'the requests of one run',
          );
          for (const [i, o] of outcomes.entries()) {
            if (o.status === 'rejected') {
              assert.ok(o.reason instanceof SluiceClientError, `request ${i + 1} threw ${String(o.reason)}`);
              count((o.reason as { reason?: string }).reason ?? o.reason.code);
            } else {
              count('answered');
              assert.ok(answered.has(i + 1), `request ${i + 1} was accepted but its response never came`);
            }
          }
        } finally {
          await transport.close();
          world.cutStalled();
        }
        for (const e of errors) assert.ok(e instanceof Error, `onerror got ${String(e)}`);
        const tried = attempts.filter(refusable);
        assert.deepEqual(tried, [], `the client tried URLs its policy forbids: ${tried.join(' ')}`);
        for (const seen of world.seen) {
          const path = seen.url.split('?')[0] ?? '';
          for (const secret of world.secrets) {
            assert.ok(!seen.url.includes(secret.value), `a secret in the URL ${seen.url}`);
            const carried = seen.authorization.includes(secret.value) || seen.body.includes(secret.value);
            assert.ok(!carried || secret.only(path), `a secret sent to ${path}`);
          }
        }
      }),
      fuzzParameters(40, 8_000),
    );
    t.diagnostic(`${runs} runs; requests ended: ${[...tally].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    assert.ok(runs >= 5, `only ${runs} runs`);
    assert.deepEqual(escapes.escaped, []);
  });
});
