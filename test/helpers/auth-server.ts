/**
 * A real OAuth 2.1 / OpenID authorization server for the tests: oidc-provider on 127.0.0.1, issuing
 * access tokens for a resource indicator (RFC 8707; its `resourceIndicators` feature) as JWTs or
 * opaque tokens, with client credentials, dynamic registration, introspection, revocation and
 * refresh tokens on. Its signing keys are the test's, so tests can also sign tokens the server never
 * issued (expired, foreign audience, another key) and restart it with rotated keys on the same port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { Agent, fetch } from 'undici';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  /** The private JWK (with kid, alg, use) as oidc-provider takes it. */
  jwk: JWK;
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, jwk };
}

export interface AuthServerOptions {
  /** Signing keys, the first one signs. */
  keys: SigningKey[];
  /** Scopes every resource offers. */
  scopes: string[];
  /** 'jwt' (default) or 'opaque' access tokens. */
  accessTokenFormat?: 'jwt' | 'opaque';
  /** Reuse a port (a restart with rotated keys keeps the issuer). @defaultValue 0 */
  port?: number;
  /** Access token lifetime in seconds. @defaultValue 3600 */
  accessTokenTtlS?: number;
  /** The user every authorization-code flow logs in as; the test is the user agent (see
   * {@link HeadlessBrowser} in headless-browser.ts). @defaultValue 'alice' */
  accountId?: string;
}

export interface Client {
  client_id: string;
  client_secret: string;
}

/** A confidential client registered at start: client credentials, for minting tokens in tests. */
export const TEST_CLIENT: Client = {
  client_id: 'sluice-test',
  client_secret: 'sluice-test-secret-0123456789',
};
/** The resource server's own client, for introspection. */
export const RS_CLIENT: Client = { client_id: 'sluice-rs', client_secret: 'sluice-rs-secret-0123456789ab' };

interface InteractionPrompt {
  name: string;
  details: { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
}

/**
 * The user's side of an authorization request, without a form: the login prompt logs `accountId` in,
 * the consent prompt grants exactly what the request asked for (its scopes, for its resource indicator).
 * oidc-provider then redirects the user agent back to the authorization endpoint, which answers with
 * the redirect to the client.
 */
async function interact(
  provider: Provider,
  accountId: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const prompt = details.prompt as InteractionPrompt;
  if (prompt.name === 'login') {
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  const grant =
    typeof details.grantId === 'string'
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId, clientId: String(details.params['client_id']) });
  if (grant === undefined) throw new Error('the interaction names a grant that does not exist');
  const oidcScopes = prompt.details.missingOIDCScope ?? [];
  if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
  for (const [indicator, scopes] of Object.entries(prompt.details.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

export class TestAuthServer {
  readonly issuer: string;
  readonly port: number;
  readonly #server: Server;
  /** The test's own connections to this server, closed with it (a restart on the same port must not
   * meet a pooled socket of the previous instance). */
  readonly #agent = new Agent();

  private constructor(issuer: string, port: number, server: Server) {
    this.issuer = issuer;
    this.port = port;
    this.#server = server;
  }

  static async start(o: AuthServerOptions): Promise<TestAuthServer> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.port ?? 0, '127.0.0.1', () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const issuer = `http://127.0.0.1:${port}`;
    const clientBase = {
      grant_types: ['client_credentials', 'authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'client_secret_basic',
    };
    const accountId = o.accountId ?? 'alice';
    const provider = new Provider(issuer, {
      clients: [
        { ...clientBase, ...TEST_CLIENT },
        { ...RS_CLIENT, grant_types: [], response_types: [], redirect_uris: [] },
      ],
      jwks: { keys: o.keys.map((k) => k.jwk) },
      scopes: ['openid', 'offline_access', ...o.scopes],
      ttl: {
        ClientCredentials: (_ctx: unknown, token: { resourceServer?: { accessTokenTTL?: number } }) =>
          token.resourceServer?.accessTokenTTL ?? 600,
      },
      // A client registered for the refresh_token grant gets refresh tokens; oidc-provider's default also
      // wants `offline_access` granted, which it drops unless the request says `prompt=consent` (OpenID
      // Connect Core §11), a parameter an MCP client has no reason to send.
      issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(grant: string): boolean }) =>
        client.grantTypeAllowed('refresh_token'),
      features: {
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        revocation: { enabled: true },
        registration: { enabled: true },
        devInteractions: { enabled: false },
        resourceIndicators: {
          enabled: true,
          // Any absolute resource gets a token: the tests also want tokens for someone else's.
          getResourceServerInfo: (_ctx: unknown, resourceIndicator: string) => ({
            scope: o.scopes.join(' '),
            audience: resourceIndicator,
            accessTokenTTL: o.accessTokenTtlS ?? 3600,
            accessTokenFormat: o.accessTokenFormat ?? 'jwt',
            ...(o.accessTokenFormat === 'opaque' ? {} : { jwt: { sign: { alg: 'RS256' } } }),
          }),
        },
      },
    });
    // oidc-provider logs its own warnings about development settings; they are expected here.
    provider.on('server_error', () => undefined);
    const callback = provider.callback();
    server.on('request', (req, res) => {
      if (req.url?.startsWith('/interaction/') === true) {
        interact(provider, accountId, req, res).catch((error: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
        });
        return;
      }
      callback(req, res);
    });
    return new TestAuthServer(issuer, port, server);
  }

  /** A token for `resource` by client credentials (RFC 6749 §4.4, RFC 8707 `resource`). */
  async token(resource: string, scope: string, client: Client = TEST_CLIENT): Promise<string> {
    const res = await fetch(`${this.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }).toString(),
      signal: AbortSignal.timeout(5000),
      dispatcher: this.#agent,
    });
    const body = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
    if (res.status !== 200 || typeof body.access_token !== 'string') {
      throw new Error(`token request: ${res.status} ${body.error ?? ''} ${body.error_description ?? ''}`);
    }
    return body.access_token;
  }

  /** Dynamic client registration (RFC 7591) of a confidential client-credentials client. */
  async register(): Promise<Client> {
    const res = await fetch(`${this.issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      }),
      signal: AbortSignal.timeout(5000),
      dispatcher: this.#agent,
    });
    const body = (await res.json()) as Partial<Client> & { error?: string };
    if (res.status !== 201 || typeof body.client_id !== 'string' || typeof body.client_secret !== 'string') {
      throw new Error(`registration: ${res.status} ${body.error ?? ''}`);
    }
    return { client_id: body.client_id, client_secret: body.client_secret };
  }

  /** RFC 7009 revocation. */
  async revoke(token: string, client: Client = TEST_CLIENT): Promise<void> {
    const res = await fetch(`${this.issuer}/token/revocation`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
      signal: AbortSignal.timeout(5000),
      dispatcher: this.#agent,
    });
    if (res.status !== 200) throw new Error(`revocation: ${res.status} ${await res.text()}`);
  }

  #stopped: Promise<void> | undefined;

  /** Stops listening and drops every connection: the authorization server is down. Idempotent. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      await this.#agent.close();
      await new Promise<void>((resolve) => {
        this.#server.close(() => resolve());
        this.#server.closeAllConnections();
      });
    })();
    return this.#stopped;
  }
}
