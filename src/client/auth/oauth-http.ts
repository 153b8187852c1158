/**
 * One HTTP exchange of the OAuth client (metadata, registration, token endpoint), bounded the way the transport
 * bounds its own: the URL passes the policy first (url-policy.ts), the answer's head must come and its body keep
 * coming within the transport's `idleTimeoutMs`, and the body is read up to a size limit and no further. A
 * hostile or stalled authorization server therefore fails the flow with a typed `AuthorizationError` instead of
 * holding every request that waits on it, or filling memory with its answer.
 */
import { AuthorizationError, type AuthorizationRefusal } from '../errors.js';
import { AddressRefusedError, BodySilenceError } from '../http-client.js';
import { fetchResponse } from '../http-fetch.js';
import type { FetchLike } from '../options.js';
import type { OAuthUrlPolicy, OAuthUrlUse } from './url-policy.js';

/** An answer read whole. */
export interface OAuthAnswer {
  readonly status: number;
  readonly ok: boolean;
  header(name: string): string | null;
  /** The body as text; undefined when it was larger than the limit (the rest was not read). */
  readonly text: string | undefined;
}

export class OAuthHttp {
  readonly #fetch: FetchLike;
  readonly policy: OAuthUrlPolicy;
  readonly #silenceMs: number;

  constructor(fetchFn: FetchLike, policy: OAuthUrlPolicy, silenceMs: number) {
    this.#fetch = fetchFn;
    this.policy = policy;
    this.#silenceMs = silenceMs;
  }

  /**
   * Sends `init` to `url` (never following a redirect, whose target the policy could not see) and reads the
   * answer. Any failure — refused URL, unreachable server, no head or a stalled or cut body — throws
   * `AuthorizationError` with `failure` as its reason (`url-refused` for the policy).
   */
  async exchange(
    raw: string,
    use: OAuthUrlUse,
    init: RequestInit,
    failure: AuthorizationRefusal,
    limit: number,
  ): Promise<OAuthAnswer> {
    const url = this.policy.check(raw, use);
    const where = `the ${use} ${url.href.slice(0, 200)}`;
    const abort = new AbortController();
    const headTimer = setTimeout(() => abort.abort(), this.#silenceMs);
    let response: Response;
    try {
      response = await this.#fetch(url.href, { ...init, redirect: 'error', signal: abort.signal });
    } catch (error) {
      // On Node without a caller's fetch, the name's addresses were checked at the lookup (http-node-guarded.ts).
      const refused = error instanceof AddressRefusedError ? error : (error as { cause?: unknown })?.cause;
      if (refused instanceof AddressRefusedError) {
        throw new AuthorizationError(
          'url-refused',
          `${where}: ${refused.message}; set insecureOAuthUrls to allow it`,
          error,
        );
      }
      const what = abort.signal.aborted
        ? `sent no answer within ${this.#silenceMs} ms`
        : 'could not be reached';
      throw new AuthorizationError(failure, `${where} ${what}`, error);
    } finally {
      clearTimeout(headTimer);
    }
    let text: string | undefined;
    try {
      text = await fetchResponse(response).text(limit, this.#silenceMs);
    } catch (error) {
      const what =
        error instanceof BodySilenceError
          ? `stopped sending its answer for ${this.#silenceMs} ms`
          : 'cut its answer short';
      throw new AuthorizationError(failure, `${where} ${what} (HTTP ${response.status})`, error);
    }
    return {
      status: response.status,
      ok: response.ok,
      header: (name) => response.headers.get(name),
      text,
    };
  }
}
