/**
 * Where DPoP proof ids are spent (RFC 9449 §11.1: a proof is accepted once within its window). Each
 * resource server remembers the ids it accepted in its own process; with several instances behind
 * one balancer that alone lets a captured proof be played again at another instance. A
 * `ProofReplayStore` is the place every instance spends them: `sluice serve --redis` and a handler
 * given both `oauth` and `cluster` use the cluster's Redis (cluster/proof-replays.ts) without being
 * asked; another deployment can pass its own as `proofReplays`.
 */
/** The part of a request a store may read. */
export interface ProofRequest {
  header(name: string): string | undefined;
}

export interface ProofReplayStore {
  /**
   * Spends proof `jti` of key `jkt` for `ttlMs` (until its `iat` leaves the freshness window).
   * Resolves true when it was not spent before (accept the proof), false when it was (a replay).
   * Rejects when it cannot tell: the request is then refused with 503, never let through unchecked.
   */
  spend(jkt: string, jti: string, ttlMs: number): Promise<boolean>;
  /**
   * Whether `req`'s proof was checked, and spent, by a trusted peer before it reached this instance
   * (a cluster's forwarded request): then it is not checked again. Only for a store that makes sure
   * such a request is refused, before anything is served, when that claim is false.
   */
  checkedUpstream?(req: ProofRequest): boolean;
  /**
   * The key every instance makes and checks DPoP nonces with (`dpopNonce`, dpop-nonce.ts) when the
   * option gives none; undefined while it is not known yet. A cluster's is derived from its secret.
   */
  nonceKey?(): string | undefined;
}
