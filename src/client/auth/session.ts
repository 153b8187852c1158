/**
 * The transport's OAuth client (MCP 2025-11-25 / 2026-07-28 basic/authorization): the one place that decides
 * which access token goes out, refreshes it before it expires, and runs the authorization flow when the server
 * challenges — one flow at a time, however many requests hit 401 together (the others wait for it and go again
 * with its token). The provider is an SDK v1 `OAuthClientProvider`, used as the SDK's own transport uses it: it
 * stores tokens, client information and the PKCE verifier, and sends the user to the authorization URL.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { AuthorizationError, UnauthorizedError } from '../errors.js';
import { defaultOAuthFetch } from '../http-default.js';
import type { ClientClock, FetchLike } from '../options.js';
import type { Challenge } from './challenge.js';
import { ClientRegistry } from './clients.js';
import { DpopProver, resourceTakesDpop } from './dpop.js';
import { type Discovery, discover } from './metadata.js';
import { OAuthHttp } from './oauth-http.js';
import { authorizationCode, type Pending, PendingAuthorizations } from './pending.js';
import { randomToken, s256 } from './pkce.js';
import { finalScope, initialScope, stepUpScope } from './scopes.js';
import { tokenRequest } from './token.js';
import { OAuthUrlPolicy } from './url-policy.js';

/** What the transport gives its OAuth client. */
export interface OAuthSessionOptions {
  readonly provider: OAuthClientProvider;
  readonly serverUrl: URL;
  /** The caller's `fetch`; undefined means `defaultOAuthFetch` (on Node, resolved addresses are checked too). */
  readonly fetch: FetchLike | undefined;
  readonly clock: ClientClock;
  /** Resolves to the redirect URI the authorization server sent the user agent to (see the transport option). */
  readonly waitForAuthorizationResponse: (() => Promise<URL | string>) | undefined;
  /** Ask for DPoP-bound tokens when both servers take them (the transport's `dpop` option). */
  readonly dpop: boolean;
  /** The transport's `insecureOAuthUrls`: lift the URL policy of url-policy.ts. */
  readonly insecureUrls: boolean;
  /** The transport's `idleTimeoutMs`: the longest silence of an authorization server's answer. */
  readonly silenceMs: number;
}

/** Refresh when less than this share of the token's lifetime is left (at most REFRESH_MARGIN_MS before expiry). */
const REFRESH_SHARE = 0.1;
const REFRESH_MARGIN_MS = 60_000;

export class OAuthSession {
  readonly #o: OAuthSessionOptions;
  readonly #clients: ClientRegistry;
  readonly #http: OAuthHttp;
  #discovery: Discovery | undefined;
  #requestedScope: string | undefined;
  readonly #pending = new PendingAuthorizations();
  /** The flow or refresh in progress; every caller that needs one joins it. */
  #running: Promise<void> | undefined;
  #refreshAt: number | undefined;
  /** The DPoP key, made when an authorization server first advertises DPoP (RFC 9449 §5.1). */
  #dpop: DpopProver | undefined;

  constructor(options: OAuthSessionOptions) {
    this.#o = options;
    const policy = new OAuthUrlPolicy(options.serverUrl, options.insecureUrls);
    const fetchFn = options.fetch ?? defaultOAuthFetch((url) => policy.addressGuard(url));
    this.#http = new OAuthHttp(fetchFn, policy, options.silenceMs);
    this.#clients = new ClientRegistry(options.provider, this.#http);
  }

  /** The access token to send, refreshed first when it is about to expire. */
  async accessToken(): Promise<string | undefined> {
    if (this.#running !== undefined) await this.#running.catch(() => undefined);
    const now = this.#o.clock.now();
    if (this.#refreshAt !== undefined && now >= this.#refreshAt) {
      this.#refreshAt = undefined;
      await this.#single(async () => {
        await this.#refresh().catch(() => false);
      }).catch(() => undefined);
    }
    const tokens = await this.#o.provider.tokens();
    return tokens?.access_token;
  }

  /**
   * The `Authorization` value for a request (`Bearer …`, or `DPoP …` for a DPoP-bound token), refreshed first
   * when about to expire; undefined without a token.
   */
  async authorization(): Promise<string | undefined> {
    const token = await this.accessToken();
    if (token === undefined) return undefined;
    const type = (await this.#o.provider.tokens())?.token_type;
    return this.#dpop !== undefined && type?.toLowerCase() === 'dpop' ? `DPoP ${token}` : `Bearer ${token}`;
  }

  /** A DPoP proof for a request that carries `authorization` (undefined unless it is a DPoP one). */
  async proofFor(method: string, url: URL, authorization: string | undefined): Promise<string | undefined> {
    if (this.#dpop === undefined || authorization?.startsWith('DPoP ') !== true) return undefined;
    return this.#dpop.proof(method, url, authorization.slice(5));
  }

  /**
   * A resource server's nonce (RFC 9449 §9), from its `use_dpop_nonce` refusal or any answer's
   * `DPoP-Nonce`: true when it is new (there is something to retry with).
   */
  rememberNonce(url: URL, nonce: string | null): boolean {
    return this.#dpop?.rememberNonce(url, nonce) ?? false;
  }

  /**
   * A 401, or a 403 with `insufficient_scope`, answered a request sent with `sentToken`. Resolves once a token
   * worth trying is in place; throws a typed error when there is none (`UnauthorizedError` with reason
   * `authorization-required` when the user has to authorize first).
   */
  async challenged(
    method: string,
    status: number,
    challenge: Challenge | undefined,
    sentToken: string | undefined,
  ): Promise<void> {
    // Wait for the flow or refresh in progress (an authorization flow's failure is this request's too), then
    // look at the token it left. A refresh that failed (revoked refresh token, `invalid_grant`) resolves and
    // leaves the token this request was refused with: going again with it would only earn a second 401 and
    // lose the request (`rejected-after-authorization`) without the user ever being asked, so this request
    // then runs the flow itself (MCP basic/authorization §"Token Handling"; RFC 6749 §6).
    while (this.#running !== undefined) await this.#running;
    const current = (await this.#o.provider.tokens())?.access_token;
    // The token changed since this request went out (another request's flow or refresh): it goes again with the
    // new one. A 403 `insufficient_scope` too: the new token may be another request's step-up and carry the
    // scope; a second user prompt for the same step-up is what this avoids (§"Scope Challenge Handling"). If it
    // does not carry it, the next 403 steps up, still within `maxStepUps`.
    if (current !== undefined && current !== sentToken) return;
    await this.#single(() => this.#authorize(method, status, challenge));
  }

  /**
   * Completes an authorization the user agent returned from. A `URL` is the redirect URI as the authorization
   * server sent it: `state`, `error` and RFC 9207 `iss` are checked. A string is the `code` alone, as the SDK
   * transport's `finishAuth(code)` takes it (the caller has checked `state`; `iss` cannot be checked).
   */
  async finish(response: URL | string): Promise<void> {
    const pending = this.#pending.find(response) ?? (await this.#restorePending());
    const forget = (): void => this.#pending.delete(pending);
    const code = typeof response === 'string' ? response : authorizationCode(response, pending, forget);
    forget();
    const params = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: pending.redirectUri,
      code_verifier: pending.verifier,
    });
    if (pending.resource !== undefined) params.set('resource', pending.resource);
    const tokens = await tokenRequest(
      this.#http,
      this.#o.provider,
      pending.discovery.server,
      pending.client,
      params,
      this.#dpop,
    );
    await this.#save(tokens);
  }

  async #single(work: () => Promise<void>): Promise<void> {
    if (this.#running !== undefined) return this.#running;
    const running = work();
    this.#running = running;
    try {
      await running;
    } finally {
      if (this.#running === running) this.#running = undefined;
    }
  }

  async #authorize(method: string, status: number, challenge: Challenge | undefined): Promise<void> {
    const o = this.#o;
    const provider = o.provider;
    const previous = await this.#clients.storedIssuer();
    const discovery = await discover(this.#http, o.serverUrl, challenge?.resourceMetadata);
    const migrated = previous !== undefined && previous !== discovery.issuer;
    if (migrated) await provider.invalidateCredentials?.('tokens');
    const stepUp = status === 403;
    const scopes = stepUp
      ? stepUpScope(this.#requestedScope, challenge?.scope)
      : initialScope(challenge?.scope, discovery.resourceMetadata?.scopes_supported);
    const scope = finalScope(scopes, discovery.server.scopes_supported, this.#clients.wantsRefresh());
    const resource = await this.#resourceParameter(discovery);
    this.#discovery = discovery;
    if (
      this.#dpop === undefined &&
      o.dpop &&
      discovery.server.dpop_signing_alg_values_supported?.includes('ES256') === true &&
      resourceTakesDpop(challenge, discovery.resourceMetadata)
    ) {
      this.#dpop = await DpopProver.create(() => this.#o.clock.now());
    }
    // Saved before a client is chosen, so a provider that keys credentials by issuer files a new registration
    // under the new issuer.
    await this.#saveDiscovery(discovery);

    if (!stepUp && !migrated && (await this.#refresh().catch(() => false))) return;

    // A non-interactive grant the provider prepares (client credentials, JWT bearer: SDK auth-extensions).
    const prepared = await provider.prepareTokenRequest?.(scope);
    if (prepared !== undefined && prepared.get('grant_type') !== 'authorization_code') {
      const client = await this.#clients.clientFor(discovery, previous, true);
      if (client === undefined)
        throw new AuthorizationError('no-client', `no client for ${discovery.issuer}`);
      if (resource !== undefined) prepared.set('resource', resource);
      await this.#save(
        await tokenRequest(this.#http, provider, discovery.server, client, prepared, this.#dpop),
      );
      this.#requestedScope = scope;
      return;
    }

    const methods = discovery.server.code_challenge_methods_supported;
    if (!discovery.defaultEndpoints && methods?.includes('S256') !== true) {
      throw new AuthorizationError(
        'pkce-unsupported',
        `${discovery.issuer} does not advertise S256 in code_challenge_methods_supported; PKCE cannot be assured`,
      );
    }
    const redirect = provider.redirectUrl;
    if (redirect === undefined) {
      throw new AuthorizationError(
        'redirect-unavailable',
        'the auth provider has no redirectUrl and prepared no other grant',
      );
    }
    const client = await this.#clients.clientFor(discovery, previous, true);
    if (client === undefined) throw new AuthorizationError('no-client', `no client for ${discovery.issuer}`);
    const verifier = randomToken(32);
    const state = (await provider.state?.()) ?? randomToken(16);
    const redirectUri = String(redirect);
    const url = this.#http.policy.check(discovery.server.authorization_endpoint, 'authorization endpoint');
    const q = url.searchParams;
    q.set('response_type', 'code');
    q.set('client_id', client.client_id);
    q.set('code_challenge', await s256(verifier));
    q.set('code_challenge_method', 'S256');
    q.set('redirect_uri', redirectUri);
    q.set('state', state);
    if (scope !== undefined) q.set('scope', scope);
    // RFC 8707: the resource exactly as the metadata publishes it — not re-serialized through URL, which would
    // append "/" to a pathless identifier.
    if (resource !== undefined) q.set('resource', resource);
    await provider.saveCodeVerifier(verifier);
    this.#requestedScope = scope;
    this.#pending.add({ discovery, client, verifier, state, redirectUri, resource });
    await provider.redirectToAuthorization(url);
    const wait = o.waitForAuthorizationResponse;
    if (wait === undefined) {
      throw new UnauthorizedError(method, '', undefined, 'authorization-required');
    }
    const answer = await wait();
    await this.finish(typeof answer === 'string' ? new URL(answer) : answer);
  }

  /** `finishAuth` in a process that did not start the flow: rebuilt from what the provider stored. */
  async #restorePending(): Promise<Pending> {
    const provider = this.#o.provider;
    const state = await provider.discoveryState?.();
    const server = state?.authorizationServerMetadata as Discovery['server'] | undefined;
    const client = await provider.clientInformation();
    const redirect = provider.redirectUrl;
    if (state === undefined || server === undefined || client === undefined || redirect === undefined) {
      throw new AuthorizationError(
        'no-pending-authorization',
        'finishAuth was called with no authorization in progress',
      );
    }
    const resourceMetadata = state.resourceMetadata as Discovery['resourceMetadata'];
    const discovery: Discovery = {
      resourceMetadataUrl: state.resourceMetadataUrl,
      resourceMetadata,
      issuer: state.authorizationServerUrl,
      server,
      defaultEndpoints: false,
    };
    return {
      discovery,
      client,
      verifier: await provider.codeVerifier(),
      state: undefined,
      redirectUri: String(redirect),
      resource: await this.#resourceParameter(discovery),
    };
  }

  /** The RFC 8707 `resource`: the metadata's identifier byte for byte, or what the provider's own check returns. */
  async #resourceParameter(discovery: Discovery): Promise<string | undefined> {
    const published = discovery.resourceMetadata?.resource;
    const check = this.#o.provider.validateResourceURL;
    if (check === undefined) return published;
    const chosen = await check.call(this.#o.provider, this.#o.serverUrl, published);
    if (chosen === undefined) return undefined;
    if (published !== undefined && new URL(published).href === chosen.href) return published;
    return chosen.href;
  }

  async #saveDiscovery(discovery: Discovery): Promise<void> {
    await this.#o.provider.saveDiscoveryState?.({
      authorizationServerUrl: discovery.issuer,
      ...(discovery.resourceMetadataUrl !== undefined
        ? { resourceMetadataUrl: discovery.resourceMetadataUrl }
        : {}),
      ...(discovery.resourceMetadata !== undefined
        ? { resourceMetadata: discovery.resourceMetadata as never }
        : {}),
      authorizationServerMetadata: discovery.server as never,
    });
  }

  /** Refreshes with the stored refresh token (RFC 6749 §6); false when there is none or no client for it. */
  async #refresh(): Promise<boolean> {
    const provider = this.#o.provider;
    const tokens = await provider.tokens();
    const refreshToken = tokens?.refresh_token;
    if (refreshToken === undefined) return false;
    const discovery = this.#discovery ?? (await discover(this.#http, this.#o.serverUrl, undefined));
    this.#discovery = discovery;
    const client = await this.#clients.clientFor(discovery, await this.#clients.storedIssuer(), false);
    if (client === undefined) return false;
    const params = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken });
    const resource = await this.#resourceParameter(discovery);
    if (resource !== undefined) params.set('resource', resource);
    let fresh: OAuthTokens;
    try {
      fresh = await tokenRequest(this.#http, provider, discovery.server, client, params, this.#dpop);
    } catch (error) {
      // RFC 6749 §5.2: `invalid_grant` is final for this refresh token (revoked, expired, already rotated). Drop
      // it, keeping the access token while it lasts, so the next flow goes to the user instead of repeating a
      // refresh that cannot work. Any other failure (unreachable, 5xx) may pass: the token is kept.
      const cause = error instanceof AuthorizationError ? (error.cause as { error?: unknown }) : undefined;
      if (cause?.error === 'invalid_grant') {
        const { refresh_token: _dead, ...rest } = tokens as OAuthTokens;
        await provider.saveTokens(rest as OAuthTokens);
      }
      throw error;
    }
    // RFC 6749 §6: a response without a new refresh token leaves the old one valid.
    await this.#save(fresh.refresh_token === undefined ? { ...fresh, refresh_token: refreshToken } : fresh);
    return true;
  }

  async #save(tokens: OAuthTokens): Promise<void> {
    await this.#o.provider.saveTokens(tokens);
    const now = this.#o.clock.now();
    const lifetime = tokens.expires_in;
    if (lifetime === undefined) {
      this.#refreshAt = undefined;
      return;
    }
    const ms = lifetime * 1000;
    const expiresAt = now + ms;
    this.#refreshAt =
      tokens.refresh_token !== undefined
        ? expiresAt - Math.min(REFRESH_MARGIN_MS, ms * REFRESH_SHARE)
        : undefined;
  }
}
