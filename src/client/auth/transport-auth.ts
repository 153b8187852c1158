/**
 * What the transport asks of its authorization half, whichever provider the caller passed: the OAuth client
 * (session.ts, for an `OAuthClientProvider`) or the plain token source (token-provider.ts, for SDK v2's minimal
 * `AuthProvider`). context.ts, answer.ts and transport.ts see only this.
 */
import type { Challenge } from './challenge.js';

export interface TransportAuth {
  /** The `Authorization` value for the next request, or undefined without a token. */
  authorization(): Promise<string | undefined>;
  /** A DPoP proof for a request that presents `authorization` (RFC 9449 §7), when it is a DPoP one. */
  proofFor(method: string, url: URL, authorization: string | undefined): Promise<string | undefined>;
  /** A resource server's `use_dpop_nonce` (RFC 9449 §9): true when the request should go once more. */
  rememberNonce(url: URL, nonce: string | null): boolean;
  /**
   * A 401, or a 403 `insufficient_scope`, answered a request sent with `sentToken`. Resolves when a token worth
   * trying is in place; throws the typed error when there is none.
   */
  challenged(
    method: string,
    status: number,
    challenge: Challenge | undefined,
    sentToken: string | undefined,
    wwwAuthenticate: string | undefined,
  ): Promise<void>;
  /** `transport.finishAuth(…)`: completes an authorization-code flow the user agent returned from. */
  finish(response: URL | string): Promise<void>;
}
