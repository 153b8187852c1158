/**
 * The scripted world of test/integration/client-auth-fuzz.test.ts: one server on 127.0.0.1 that plays an MCP server
 * (401 with the drawn challenge, then the answer to an issued token), its protected resource metadata and its
 * authorization server (metadata, registration, token endpoint), each answering as the run's script says, and
 * recording what it was sent; plus the in-memory provider whose "user" returns as the script says.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HeadlessProvider } from './oauth-fixture.js';

export type Answer =
  | { kind: 'good' }
  | { kind: 'status'; status: number }
  | { kind: 'garbage' }
  | { kind: 'shape'; body: unknown }
  | { kind: 'huge' }
  | { kind: 'stall-head' }
  | { kind: 'stall-body' }
  | { kind: 'cut' }
  | { kind: 'swap'; field: number; url: string };

export interface Script {
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

export class World {
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

/** The fixture's in-memory provider, whose "user" does not follow the authorization URL but returns as drawn. */
export class Provider extends HeadlessProvider {
  authorizationUrl: URL | undefined;
  override redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
}

export function returnFrom(world: World, provider: Provider, redirect: Script['redirect']): URL {
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
