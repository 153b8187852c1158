/**
 * SDK v2's minimal `AuthProvider` (`@modelcontextprotocol/client`: `token()` before every request,
 * `onUnauthorized(ctx)` on a 401, then the request once more), accepted by Sluice's transport as the SDK v2
 * `StreamableHTTPClientTransport` accepts it, so the transport stays a drop-in for code written against v2.
 * The transport's own guarantees still hold: one `onUnauthorized` at a time however many requests hit 401 together
 * (the others wait for it and go again), a POST re-sent once, a resuming GET resumed with its Last-Event-ID.
 * There is no flow to run here, so a 403 `insufficient_scope` cannot step up: it is a `ForbiddenError`.
 */
import { ForbiddenError, InvalidOptionError, UnauthorizedError } from '../errors.js';
import type { FetchLike } from '../http-client.js';
import type { Challenge } from './challenge.js';
import type { TransportAuth } from './transport-auth.js';

/** What `onUnauthorized` is told (the shape of SDK v2's `UnauthorizedContext`). */
export interface UnauthorizedContext {
  /** The 401, with its `WWW-Authenticate` (its body has been read by the transport and is empty here). */
  response: Response;
  /** The MCP endpoint. */
  serverUrl: URL;
  /** The transport's `fetch` (or the global one), for requests the provider makes. */
  fetchFn: FetchLike;
}

/** SDK v2's `AuthProvider`: a bearer token per request, and a chance to renew it after a 401. */
export interface TokenAuthProvider {
  /** The current bearer token, or undefined. Called before every request. */
  token(): Promise<string | undefined>;
  /** Called on a 401; afterwards the request goes once more with `token()`. Without it a 401 fails the request. */
  onUnauthorized?(ctx: UnauthorizedContext): Promise<void>;
}

export interface TokenProviderAuthOptions {
  readonly provider: TokenAuthProvider;
  readonly serverUrl: URL;
  readonly fetch: FetchLike;
}

export class TokenProviderAuth implements TransportAuth {
  readonly #o: TokenProviderAuthOptions;
  /** The `onUnauthorized` in progress; every 401 that arrives meanwhile waits for it. */
  #running: Promise<void> | undefined;

  constructor(options: TokenProviderAuthOptions) {
    this.#o = options;
  }

  async authorization(): Promise<string | undefined> {
    if (this.#running !== undefined) await this.#running.catch(() => undefined);
    const token = await this.#o.provider.token();
    return token === undefined || token === '' ? undefined : `Bearer ${token}`;
  }

  proofFor(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  rememberNonce(): boolean {
    return false;
  }

  async challenged(
    method: string,
    status: number,
    _challenge: Challenge | undefined,
    sentToken: string | undefined,
    wwwAuthenticate: string | undefined,
  ): Promise<void> {
    if (status !== 401) throw new ForbiddenError(method, '', wwwAuthenticate);
    const provider = this.#o.provider;
    if (provider.onUnauthorized === undefined) {
      throw new UnauthorizedError(method, '', wwwAuthenticate, 'no-auth-provider');
    }
    // Another request already renewed the token: this one just goes again.
    if (this.#running === undefined && (await provider.token()) !== sentToken) return;
    // Checked after that await, with none before starting: two 401s never start two renewals.
    if (this.#running !== undefined) {
      await this.#running;
      return;
    }
    const headers = new Headers();
    if (wwwAuthenticate !== undefined) headers.set('www-authenticate', wwwAuthenticate);
    const running = provider.onUnauthorized({
      response: new Response(null, { status: 401, headers }),
      serverUrl: new URL(this.#o.serverUrl.href),
      fetchFn: this.#o.fetch,
    });
    this.#running = running;
    try {
      await running;
    } finally {
      if (this.#running === running) this.#running = undefined;
    }
  }

  finish(): Promise<void> {
    return Promise.reject(
      new InvalidOptionError('finishAuth needs an OAuthClientProvider as authProvider, not a token provider'),
    );
  }
}

/** An `OAuthClientProvider` (v1 or v2) has `tokens()`; SDK v2's minimal `AuthProvider` has `token()`. */
export function isTokenAuthProvider(p: object): p is TokenAuthProvider {
  return (
    typeof (p as { tokens?: unknown }).tokens !== 'function' &&
    typeof (p as { token?: unknown }).token === 'function'
  );
}
