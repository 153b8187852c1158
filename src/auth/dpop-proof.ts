/**
 * DPoP-bound access tokens at the resource server (RFC 9449 §7): a request that presents its token with
 * `Authorization: DPoP <token>` carries one `DPoP` proof JWT, signed by the key the token is bound to
 * (`cnf.jkt`, §6). The proof is checked as §4.3 lists, for this request (`htm`, `htu`) and this token
 * (`ath`), fresh (`iat`) and never seen before (`jti`, within the freshness window). A bound token sent
 * as a plain Bearer token is refused (§7.2): whoever holds it without the key must not use it.
 *
 * Authorization servers that offer DPoP (oidc-provider, MCP's DPoP extension, SEP-1932) bind the tokens
 * of every client that asks, and Sluice's own client asks whenever the authorization server advertises it.
 */
import type { JWK, ProtectedHeaderParameters } from 'jose';
import { BoundedMap } from '../flow/bounded-map.js';
import type { Denial } from './challenge.js';
import type { DpopNonces } from './dpop-nonce.js';
import { loadJose } from './jose-lazy.js';
import { ProofKeys } from './proof-keys.js';
import type { ProofReplayStore, ProofRequest } from './proof-replays.js';

/** How far a proof's `iat` may be from now (RFC 9449 §11.1 leaves the window to the server). */
export const DPOP_PROOF_WINDOW_S = 300;
/**
 * Proof ids remembered against replay. Never forgotten before they expire: when this many are live,
 * new proofs are declined (503) until the oldest expire, rather than letting a replay through.
 */
export const DPOP_MAX_REMEMBERED = 100_000;

export interface DpopOptions {
  /** The resource's URL: every MCP request targets it, so it is the `htu` (query and fragment ignored). */
  readonly resource: string;
  readonly algorithms: readonly string[];
  readonly now: () => number;
  /** Live proof ids remembered at most. @defaultValue DPOP_MAX_REMEMBERED */
  readonly maxRemembered?: number;
  /** Where every instance spends proof ids, beside this process's own memory (proof-replays.ts). */
  readonly replays?: ProofReplayStore | undefined;
  /** With server-provided nonces (§9): a proof must carry a good one. */
  readonly nonces?: DpopNonces | undefined;
}

/** §9: the proof has no nonce of ours, or an old one: the client is to send it again with the current one. */
export interface NonceNeeded {
  readonly useNonce: true;
}

/** The shared store did not answer: whether this proof was spent elsewhere is unknown. */
export interface ProofStoreDown {
  readonly storeDown: true;
}

/** The replay cache is full of live proof ids: this proof cannot be checked for replay now. */
export interface ProofsCrowded {
  readonly crowded: true;
  /** Seconds until the oldest remembered id expires. */
  readonly retryAfterS: number;
}

/**
 * The 503 for a proof that could not be checked for replay: RFC 9449 §11.1, a proof is not accepted
 * unchecked. `retryAfterS` when the shared store did not answer.
 */
export function uncheckedProof(why: ProofsCrowded | ProofStoreDown, retryAfterS: number): Denial {
  return 'storeDown' in why
    ? {
        status: 503,
        reason: 'dpop-replay-unavailable',
        message: 'Service Unavailable: DPoP proofs cannot be checked for replay now; try again',
        headers: { 'retry-after': String(retryAfterS) },
      }
    : {
        status: 503,
        reason: 'dpop-replay-cache-full',
        message: 'Service Unavailable: too many DPoP proofs to remember; try again',
        headers: { 'retry-after': String(why.retryAfterS) },
      };
}

/** The JWK thumbprint a token is bound to (`cnf.jkt`, RFC 9449 §6.1), if it is bound. */
export function boundThumbprint(claims: Readonly<Record<string, unknown>>): string | undefined {
  const cnf = claims['cnf'];
  if (typeof cnf !== 'object' || cnf === null) return undefined;
  const jkt = (cnf as { jkt?: unknown }).jkt;
  return typeof jkt === 'string' ? jkt : undefined;
}

/**
 * Whether the token names any confirmation (`cnf`, RFC 7800 §3.1), such as a certificate thumbprint
 * (`x5t#S256`, RFC 8705 §3.1): a bound token, whatever its method.
 */
export function hasConfirmation(claims: Readonly<Record<string, unknown>>): boolean {
  const cnf = claims['cnf'];
  return typeof cnf === 'object' && cnf !== null && Object.keys(cnf).length > 0;
}

/** RFC 3986 §6.2.2/§6.2.3 normalization as URL parsing does it, without query and fragment. */
function target(uri: string): string | undefined {
  try {
    const u = new URL(uri);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return undefined;
  }
}

export class DpopProofChecker {
  readonly #o: DpopOptions;
  readonly #htu: string | undefined;
  /**
   * jti → when it may be forgotten (ms). Insertion order is expiry order, give or take the window.
   * Read from its oldest end on every proof: a Map would walk its deleted slots each time (flow/bounded-map.ts).
   */
  readonly #seen: BoundedMap<string, number>;
  readonly #max: number;
  readonly #keys = new ProofKeys();

  constructor(o: DpopOptions) {
    this.#o = o;
    this.#htu = target(o.resource);
    this.#max = o.maxRemembered ?? DPOP_MAX_REMEMBERED;
    this.#seen = new BoundedMap<string, number>(this.#max);
  }

  /**
   * Checks `proof` (the `DPoP` header value) for a request of `method` presenting `token`, bound to
   * `jkt`. Returns why it is refused, or undefined when it is good (its `jti` is then spent).
   * `req` is handed to the shared store, when there is one.
   */
  async check(
    proof: string | undefined,
    method: string,
    token: string,
    jkt: string,
    req?: ProofRequest,
  ): Promise<string | ProofsCrowded | ProofStoreDown | NonceNeeded | undefined> {
    // Checked and spent by the peer that relayed this request (proof-replays.ts).
    if (req !== undefined && this.#o.replays?.checkedUpstream?.(req) === true) return undefined;
    if (proof === undefined || proof === '') return 'a DPoP-bound token needs a DPoP proof';
    // §4.3 (1): exactly one proof; repeated headers arrive joined with ", ".
    if (proof.includes(',')) return 'more than one DPoP proof';
    const jose = await loadJose();
    let header: ProtectedHeaderParameters;
    try {
      header = jose.decodeProtectedHeader(proof);
    } catch {
      return 'the DPoP proof is not a JWT';
    }
    if (header.typ !== 'dpop+jwt') return 'the DPoP proof must have typ dpop+jwt';
    if (typeof header.alg !== 'string' || !this.#o.algorithms.includes(header.alg)) {
      return 'the DPoP proof algorithm is not accepted';
    }
    const jwk = header.jwk as JWK | undefined;
    if (jwk === undefined || typeof jwk !== 'object' || 'd' in jwk)
      return 'the DPoP proof must carry a public jwk';
    let payload: Record<string, unknown>;
    let thumbprint: string;
    try {
      const k = await this.#keys.keyFor(jwk, header.alg, jkt);
      thumbprint = k.thumbprint;
      if ('verify' in k.check) {
        // node:crypto on Node (proof-signature.ts): the same checks as jwtVerify's, at half its cost.
        const verdict = k.check.verify(proof, header, Math.floor(this.#o.now() / 1000));
        if ('refused' in verdict) return verdict.refused;
        payload = verdict.payload;
      } else {
        ({ payload } = await jose.jwtVerify(proof, k.check.key, {
          typ: 'dpop+jwt',
          algorithms: [header.alg],
        }));
      }
    } catch {
      return 'the DPoP proof signature does not verify';
    }
    if (thumbprint !== jkt) return 'the DPoP proof key is not the token’s key';
    if (payload['htm'] !== method) return 'the DPoP proof is for another method';
    if (typeof payload['htu'] !== 'string' || target(payload['htu']) !== this.#htu) {
      return 'the DPoP proof is for another URL';
    }
    if (payload['ath'] !== (await this.#keys.tokenHash(token))) return 'the DPoP proof is for another token';
    const now = this.#o.now();
    const iat = payload['iat'];
    if (typeof iat !== 'number' || Math.abs(now / 1000 - iat) > DPOP_PROOF_WINDOW_S) {
      return 'the DPoP proof is not fresh';
    }
    const jti = payload['jti'];
    if (typeof jti !== 'string' || jti === '' || jti.length > 256) return 'the DPoP proof needs a jti';
    // §4.3 (10), §9: checked before the proof is spent, so the client's next proof, with the
    // nonce, is not taken for a replay of this one.
    if (this.#o.nonces !== undefined && (await this.#o.nonces.check(payload['nonce'])) === 'refused')
      return { useNonce: true };
    this.#forgetExpired(now);
    if (this.#seen.has(jti)) return 'the DPoP proof was used before';
    const shared = this.#o.replays;
    // With a shared store, this memory only saves round trips: when full, the store alone decides.
    const room = this.#seen.size < this.#max;
    if (!room && shared === undefined) {
      // §11.1: a proof must not be accepted twice within its window. Evicting a live id (what the
      // map's bound would do) would let a client that sends #max proofs replay any earlier one.
      const oldest = this.#seen.get(this.#seen.oldestKey() as string) ?? now;
      return { crowded: true, retryAfterS: Math.max(1, Math.ceil((oldest - now) / 1000)) };
    }
    // Replayable while `iat` is within the window of now: until iat + window, then refused as stale.
    const until = Math.max(now, iat * 1000) + DPOP_PROOF_WINDOW_S * 1000;
    if (shared !== undefined) {
      // Checked here first (a replay to this instance is refused without a round trip, and even
      // while the store is down), then spent where every instance looks.
      let fresh: boolean;
      try {
        fresh = await shared.spend(jkt, jti, until - now);
      } catch {
        return { storeDown: true };
      }
      // Two requests of this process with one proof may both have waited on the store.
      if (!fresh || this.#seen.has(jti)) return 'the DPoP proof was used before';
      if (this.#seen.size >= this.#max) return undefined;
    }
    this.#seen.set(jti, until);
    return undefined;
  }

  #forgetExpired(now: number): void {
    // Insertion order is expiry order give or take the window (iat varies by up to ±window): an
    // expired id behind a live one waits for it, held at most twice the window.
    this.#seen.dropOldestWhile((until) => until <= now);
  }
}
