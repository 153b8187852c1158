/**
 * A scripted OAuth authorization server and a Sluice resource server in front of the test McpServer, both on
 * 127.0.0.1:0, for the client's OAuth tests. The authorization server checks PKCE S256 for real, redirects at once
 * (a headless user agent follows it with `redirect: 'manual'`), issues opaque tokens, and records every request;
 * the resource server publishes RFC 9728 metadata, checks tokens through Sluice's `authenticate`, and answers 403
 * `insufficient_scope` for `tools/call` when its policy asks for more scope.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { createMcpHandler, type McpHandler } from '../../src/server/index.js';
import { createProbe, type Probe, testServerFactory } from './test-server.js';

interface Issued {
  readonly scope: readonly string[];
  readonly expiresAt: number;
  revoked: boolean;
}

export interface AsOptions {
  /** Lifetime of access tokens, seconds. */
  expiresIn: number;
  /** Issue refresh tokens. */
  refresh: boolean;
  /** Scopes the server will ever grant (a request for others gets only these). */
  grantable: readonly string[];
}

export interface TokenCall {
  readonly grant: string;
  readonly scope: string | undefined;
  readonly resource: string | undefined;
}

export interface ScriptedAs {
  readonly issuer: string;
  readonly options: AsOptions;
  /** Scope parameter of each authorization request, in order. */
  readonly authorizations: (string | undefined)[];
  readonly resources: (string | undefined)[];
  readonly tokenCalls: TokenCall[];
  readonly registrations: number;
  /** Every request URL the server saw (path and query). */
  readonly urls: string[];
  /** Every access and refresh token issued. */
  readonly secrets: string[];
  check(token: string): Issued | undefined;
  revokeAll(): void;
  /** Revokes the access tokens only: a refresh then works. */
  revokeAccess(): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const close = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

export async function startAs(options: Partial<AsOptions> = {}): Promise<ScriptedAs> {
  const opts: AsOptions = { expiresIn: 3600, refresh: true, grantable: ['read', 'write'], ...options };
  const codes = new Map<
    string,
    { challenge: string; scope: readonly string[]; resource: string | undefined }
  >();
  const tokens = new Map<string, Issued>();
  const refreshTokens = new Map<string, readonly string[]>();
  let registrations = 0;
  const state = {
    authorizations: [] as (string | undefined)[],
    resources: [] as (string | undefined)[],
    tokenCalls: [] as TokenCall[],
    urls: [] as string[],
    secrets: [] as string[],
  };
  let issuer = '';
  const issue = (scope: readonly string[], res: ServerResponse): void => {
    const access = `at-${randomBytes(9).toString('hex')}`;
    tokens.set(access, { scope, expiresAt: Date.now() + opts.expiresIn * 1000, revoked: false });
    state.secrets.push(access);
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: opts.expiresIn,
    };
    if (opts.refresh) {
      const refresh = `rt-${randomBytes(9).toString('hex')}`;
      refreshTokens.set(refresh, scope);
      state.secrets.push(refresh);
      body['refresh_token'] = refresh;
    }
    if (scope.length > 0) body['scope'] = scope.join(' ');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', issuer);
      state.urls.push(url.pathname + url.search);
      if (url.pathname === '/.well-known/oauth-authorization-server') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `${issuer}/token`,
            registration_endpoint: `${issuer}/register`,
            response_types_supported: ['code'],
            code_challenge_methods_supported: ['S256'],
            token_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
            authorization_response_iss_parameter_supported: true,
            scopes_supported: [...opts.grantable],
          }),
        );
        return;
      }
      if (url.pathname === '/register' && req.method === 'POST') {
        registrations++;
        const metadata = JSON.parse(await readBody(req)) as Record<string, unknown>;
        res.writeHead(201, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            ...metadata,
            client_id: `client-${registrations}`,
            token_endpoint_auth_method: 'none',
          }),
        );
        return;
      }
      if (url.pathname === '/authorize') {
        const q = url.searchParams;
        const scope = q.get('scope') ?? undefined;
        state.authorizations.push(scope);
        state.resources.push(q.get('resource') ?? undefined);
        const code = `code-${randomBytes(6).toString('hex')}`;
        const granted = (scope?.split(' ') ?? []).filter((s) => opts.grantable.includes(s));
        codes.set(code, {
          challenge: q.get('code_challenge') ?? '',
          scope: granted,
          resource: q.get('resource') ?? undefined,
        });
        const back = new URL(q.get('redirect_uri') ?? '');
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state') ?? '');
        back.searchParams.set('iss', issuer);
        res.writeHead(302, { location: back.href }).end();
        return;
      }
      if (url.pathname === '/token' && req.method === 'POST') {
        const form = new URLSearchParams(await readBody(req));
        const grant = form.get('grant_type') ?? '';
        state.tokenCalls.push({
          grant,
          scope: form.get('scope') ?? undefined,
          resource: form.get('resource') ?? undefined,
        });
        if (grant === 'authorization_code') {
          const entry = codes.get(form.get('code') ?? '');
          codes.delete(form.get('code') ?? '');
          const verifier = form.get('code_verifier') ?? '';
          const computed = createHash('sha256').update(verifier).digest('base64url');
          if (entry === undefined || computed !== entry.challenge) {
            res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
            return;
          }
          issue(entry.scope, res);
          return;
        }
        if (grant === 'refresh_token') {
          const scope = refreshTokens.get(form.get('refresh_token') ?? '');
          if (scope === undefined) {
            res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
            return;
          }
          issue(scope, res);
          return;
        }
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"unsupported_grant_type"}');
        return;
      }
      res.writeHead(404).end();
    })();
  });
  issuer = await listen(server);
  return {
    issuer,
    options: opts,
    ...state,
    get registrations() {
      return registrations;
    },
    check(token) {
      const t = tokens.get(token);
      return t !== undefined && !t.revoked && t.expiresAt > Date.now() ? t : undefined;
    },
    revokeAll() {
      for (const t of tokens.values()) t.revoked = true;
      refreshTokens.clear();
    },
    revokeAccess() {
      for (const t of tokens.values()) t.revoked = true;
    },
    close: () => close(server),
  };
}

export interface ResourceServer {
  readonly url: string;
  readonly probe: Probe;
  /** Every request URL the server saw. */
  readonly urls: string[];
  /** Status of every answered request, in order. */
  readonly statuses: number[];
  /** `METHOD status` of every answered request, in order. */
  readonly answers: string[];
  /** Scopes `tools/call` needs (403 insufficient_scope without them). */
  toolScopes: readonly string[];
  close(): Promise<void>;
}

/** The test McpServer behind Sluice, tokens checked against `as`. `resource` overrides the metadata's identifier. */
export async function startResource(as: ScriptedAs, resource?: string): Promise<ResourceServer> {
  const probe = createProbe();
  let origin = '';
  let handler: McpHandler | undefined;
  const rs: ResourceServer = {
    url: '',
    probe,
    urls: [],
    statuses: [],
    answers: [],
    toolScopes: [],
    close: async () => {
      await handler?.close({ graceMs: 0 });
      await close(server);
    },
  };
  const server = createServer((req, res) => {
    void (async () => {
      rs.urls.push(req.url ?? '');
      res.on('finish', () => {
        rs.statuses.push(res.statusCode);
        rs.answers.push(`${req.method ?? ''} ${res.statusCode}`);
      });
      if (req.url === '/.well-known/oauth-protected-resource/mcp') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            resource: resource ?? `${origin}/mcp`,
            authorization_servers: [as.issuer],
            scopes_supported: ['read'],
          }),
        );
        return;
      }
      if (handler === undefined) return;
      if (req.method !== 'POST') {
        handler(req, res);
        return;
      }
      const parsed = JSON.parse(await readBody(req)) as { method?: string };
      const header = req.headers.authorization ?? '';
      const issued = as.check(header.startsWith('Bearer ') ? header.slice(7) : '');
      const missing = rs.toolScopes.filter((s) => !issued?.scope.includes(s));
      if (issued !== undefined && parsed.method === 'tools/call' && missing.length > 0) {
        res
          .writeHead(403, {
            'content-type': 'application/json',
            'www-authenticate': `Bearer error="insufficient_scope", scope="${rs.toolScopes.join(' ')}", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
          })
          .end('{"error":"insufficient_scope"}');
        return;
      }
      handler(req, res, parsed);
    })();
  });
  origin = await listen(server);
  handler = createMcpHandler({
    createServer: testServerFactory(probe),
    // Re-checks the token of open streams: a revoked one ends them (the client then resumes).
    revalidateMs: 100,
    authenticate: (view) => {
      const header = view.headers.authorization;
      const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : '';
      const issued = as.check(token);
      return issued === undefined ? null : { principal: 'alice', expiresAt: issued.expiresAt };
    },
    resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp`,
  });
  (rs as { url: string }).url = `${origin}/mcp`;
  return rs;
}

/** An in-memory provider whose "browser" fetches the authorization URL and keeps the redirect it is sent to. */
export class HeadlessProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  stored: OAuthTokens | undefined;
  #verifier = '';
  #redirect: Promise<URL> | undefined;
  redirects = 0;

  get redirectUrl(): string {
    return 'http://127.0.0.1:1/callback';
  }

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'sluice-test', redirect_uris: [this.redirectUrl] };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.stored;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.stored = tokens;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }

  redirectToAuthorization(url: URL): void {
    this.redirects++;
    this.#redirect = fetch(url, { redirect: 'manual' }).then(async (response) => {
      await response.body?.cancel();
      return new URL(response.headers.get('location') ?? '', url);
    });
  }

  /** What `waitForAuthorizationResponse` returns. */
  response(): Promise<URL> {
    const r = this.#redirect;
    this.#redirect = undefined;
    return r ?? Promise.reject(new Error('no authorization started'));
  }
}
