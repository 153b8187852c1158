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
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import fc from 'fast-check';
import { SluiceClientError, StreamableHttpClientTransport } from '../../src/client/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { catchEscapes, fuzzParameters } from '../helpers/fuzz.js';

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

type Answer =
  | { kind: 'good' }
  | { kind: 'status'; status: number }
  | { kind: 'garbage' }
  | { kind: 'shape'; body: unknown }
  | { kind: 'huge' }
  | { kind: 'stall-head' }
  | { kind: 'stall-body' }
  | { kind: 'cut' }
  | { kind: 'swap'; field: number; url: string };

interface Script {
  /** The 401's `resource_metadata`: the right URL, absent, or a drawn one. */
  challenge: 'good' | 'absent' | string;
  prm: Answer;
  asMeta: Answer;
  register: Answer;
  token: Answer;
  redirect: 'good' | 'good-iss' | 'wrong-state' | 'error' | 'no-code' | 'wrong-iss' | 'none';
  /** What /mcp answers a request carrying an issued token. */
  after: 'ok' | '401' | '403';
  requests: number;
}

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
class World {
  origin = '';
  script: Script | undefined;
  readonly seen: { url: string; authorization: string; body: string }[] = [];
  readonly tokens = new Set<string>();
  readonly secrets: { value: string; only: (path: string) => boolean }[] = [];
  tokenEndpoint = '';
  readonly #server = createServer((req, res) => {
    void this.#handle(req, res);
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  reset(s: Script): void {
    this.script = s;
    this.seen.length = 0;
    this.tokens.clear();
    this.secrets.length = 0;
    this.tokenEndpoint = `${this.origin}/as/token`;
  }

  /** The run's answers left stalled. */
  readonly #stalled = new Set<ServerResponse>();

  /**
   * Ends the run's stalled answers, and only those: closing every connection would also close idle keep-alive
   * ones that the next run's `fetch` may already be reusing.
   */
  cutStalled(): void {
    for (const res of this.#stalled) res.socket?.destroy();
    this.#stalled.clear();
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  fill(u: string): string {
    return u.replaceAll(':P/', `:${(this.#server.address() as AddressInfo).port}/`);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const s = this.script;
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    this.seen.push({ url: req.url ?? '', authorization: req.headers.authorization ?? '', body });
    if (s === undefined) return void res.writeHead(503).end();
    const issuer = `${this.origin}/as`;
    if (path === '/mcp') return this.#mcp(req, res, s, body);
    if (path === '/.well-known/oauth-protected-resource/mcp') {
      return this.#answer(
        res,
        s.prm,
        () => ({
          resource: `${this.origin}/mcp`,
          authorization_servers: [issuer],
          scopes_supported: ['read'],
        }),
        ['authorization_servers', 'resource'],
      );
    }
    if (path === '/.well-known/oauth-authorization-server/as') {
      return this.#answer(
        res,
        s.asMeta,
        () => ({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: this.tokenEndpoint,
          registration_endpoint: `${issuer}/register`,
          code_challenge_methods_supported: ['S256'],
          scopes_supported: ['read'],
        }),
        ['token_endpoint', 'authorization_endpoint', 'registration_endpoint', 'issuer'],
      );
    }
    if (path === '/as/register') {
      const secret = `cs-${randomBytes(6).toString('hex')}`;
      return this.#answer(
        res,
        s.register,
        () => {
          this.secrets.push({ value: secret, only: (p) => this.#isTokenEndpoint(p) });
          return {
            client_id: 'client-1',
            client_secret: secret,
            token_endpoint_auth_method: 'client_secret_post',
          };
        },
        [],
      );
    }
    if (this.#isTokenEndpoint(path) && req.method === 'POST') {
      return this.#answer(
        res,
        s.token,
        () => {
          const token = `at-${randomBytes(6).toString('hex')}`;
          this.tokens.add(token);
          this.secrets.push({ value: token, only: (p) => p === '/mcp' });
          return { access_token: token, token_type: 'Bearer', expires_in: 3600 };
        },
        ['token_type', 'access_token'],
      );
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
  }

  #isTokenEndpoint(path: string): boolean {
    try {
      return new URL(this.tokenEndpoint).pathname === path;
    } catch {
      return false;
    }
  }

  #mcp(req: IncomingMessage, res: ServerResponse, s: Script, body: string): void {
    const auth = req.headers.authorization ?? '';
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!this.tokens.has(token) || s.after === '401') {
      const metadata =
        s.challenge === 'absent'
          ? ''
          : `, resource_metadata="${s.challenge === 'good' ? `${this.origin}/.well-known/oauth-protected-resource/mcp` : this.fill(s.challenge)}"`;
      res
        .writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': `Bearer realm="mcp"${metadata}`,
        })
        .end('{"error":"unauthorized"}');
      return;
    }
    if (s.after === '403') {
      res
        .writeHead(403, {
          'content-type': 'application/json',
          'www-authenticate': 'Bearer error="insufficient_scope", scope="read admin"',
        })
        .end('{"error":"insufficient_scope"}');
      return;
    }
    const id = (JSON.parse(body) as { id?: unknown }).id;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [] } }));
  }

  /** Writes `a` for a document whose right form `good()` builds; `swappable` are the fields a swap may replace. */
  #answer(res: ServerResponse, a: Answer, good: () => Record<string, unknown>, swappable: string[]): void {
    const json = { 'content-type': 'application/json' };
    switch (a.kind) {
      case 'good':
        return void res.writeHead(200, json).end(JSON.stringify(good()));
      case 'status':
        return void res.writeHead(a.status, json).end('{"error":"invalid_request","error_description":"no"}');
      case 'garbage':
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not here</html>');
      case 'shape':
        return void res.writeHead(200, json).end(JSON.stringify(a.body));
      case 'huge':
        return void res.writeHead(200, json).end(JSON.stringify({ ...good(), pad: 'x'.repeat(300 * 1024) }));
      case 'stall-head':
        this.#stalled.add(res);
        return;
      case 'stall-body':
        this.#stalled.add(res);
        res.writeHead(200, json);
        res.write('{"issuer":');
        return;
      case 'cut':
        res.writeHead(200, { ...json, 'content-length': '4096' });
        res.write('{"access_token":"');
        setImmediate(() => res.socket?.destroy());
        return;
      case 'swap': {
        const doc = good();
        const field = swappable[a.field % Math.max(1, swappable.length)];
        if (field === undefined) return void res.writeHead(200, json).end(JSON.stringify(doc));
        const value = this.fill(a.url);
        if (field === 'token_endpoint') this.tokenEndpoint = value;
        doc[field] = field === 'authorization_servers' ? [value] : value;
        return void res.writeHead(200, json).end(JSON.stringify(doc));
      }
    }
  }
}

/** An in-memory provider; the "user" returns from the authorization server as the script says. */
class Provider implements OAuthClientProvider {
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';
  authorizationUrl: URL | undefined;
  get redirectUrl(): string {
    return 'http://127.0.0.1:1/callback';
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'fuzz', redirect_uris: [this.redirectUrl] };
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.#client = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }
  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }
  codeVerifier(): string {
    return this.#verifier;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
}

function returnFrom(world: World, provider: Provider, redirect: Script['redirect']): URL {
  const state = provider.authorizationUrl?.searchParams.get('state') ?? '';
  const code = `code-${randomBytes(6).toString('hex')}`;
  world.secrets.push({ value: code, only: (p) => new URL(world.tokenEndpoint, world.origin).pathname === p });
  const back = new URL(provider.redirectUrl);
  const q = back.searchParams;
  if (redirect === 'error') q.set('error', 'access_denied');
  else if (redirect !== 'no-code') q.set('code', code);
  q.set('state', redirect === 'wrong-state' ? 'not-the-state' : state);
  if (redirect === 'good-iss') q.set('iss', `${world.origin}/as`);
  if (redirect === 'wrong-iss') q.set('iss', 'https://evil.example');
  return back;
}

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
