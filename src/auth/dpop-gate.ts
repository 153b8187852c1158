/**
 * The resource server's DPoP step (RFC 9449 §7, §9, §11.1), between verifying a token and accepting
 * it: how the token is presented against how it is bound, the proof checked once per request, the
 * server's nonce asked for and handed out. Every refusal here is told in a `DPoP` challenge (§7.1)
 * after an error-free `Bearer` one, which keeps `resource_metadata` first for clients that read only
 * the first challenge.
 */

import { randomToken } from '../security/random.js';
import { type Denial, dpopChallenge } from './challenge.js';
import { DpopNonces } from './dpop-nonce.js';
import { boundThumbprint, DpopProofChecker, uncheckedProof } from './dpop-proof.js';
import type { ResolvedOAuthOptions } from './options.js';
import type { ProofRequest } from './proof-replays.js';

export interface GateRequest extends ProofRequest {
  readonly method?: string | undefined;
}

/** What the gate lets through: the headers the accepted answer carries (the next nonce). */
export interface Passed {
  readonly headers: Readonly<Record<string, string>> | undefined;
}

const NOTHING: Passed = { headers: undefined };

export class DpopGate {
  readonly #o: ResolvedOAuthOptions;
  readonly #metadataUrl: string;
  readonly #proofs: DpopProofChecker;
  readonly #nonces: DpopNonces | undefined;
  /** Requests whose proof was accepted (#checkProof); gone with the request. */
  readonly #proven = new WeakMap<GateRequest, string>();

  constructor(o: ResolvedOAuthOptions, metadataUrl: string) {
    this.#o = o;
    this.#metadataUrl = metadataUrl;
    const n = o.dpopNonce;
    if (n !== undefined) {
      // The given key; else the one every member of a cluster shares; else this process's own (its
      // nonces are good only here).
      const store = o.proofReplays;
      const fixed = n.key ?? (store?.nonceKey === undefined ? randomToken(32) : undefined);
      this.#nonces = new DpopNonces({
        resource: o.resource,
        windowS: n.windowS,
        key: fixed !== undefined ? () => fixed : () => store?.nonceKey?.(),
        now: o.now,
      });
    }
    this.#proofs = new DpopProofChecker({
      resource: o.resource,
      algorithms: o.algorithms,
      now: o.now,
      replays: o.proofReplays,
      nonces: this.#nonces,
    });
  }

  /**
   * A verified token of `claims`, presented as `scheme` with `token`: passed, or refused. RFC 9449 §7:
   * a bound token needs its proof; §7.2: it is not a bearer token. An unbound token presented as
   * DPoP has no key to check a proof against, so it is refused too. (A token bound by another
   * method is the caller's to refuse first.)
   */
  async check(
    req: GateRequest,
    scheme: 'bearer' | 'dpop',
    token: string,
    claims: Readonly<Record<string, unknown>>,
  ): Promise<Passed | Denial> {
    const jkt = boundThumbprint(claims);
    if (jkt === undefined) {
      if (scheme === 'dpop')
        return this.#deny('invalid_token', 'the token is not DPoP-bound: present it as a Bearer token');
      return NOTHING;
    }
    if (scheme === 'bearer')
      return this.#deny(
        'invalid_token',
        'the token is DPoP-bound: present it with the DPoP scheme and a proof',
      );
    const why = await this.#checkProof(req, token, jkt);
    if (typeof why === 'string') return this.#deny('invalid_dpop_proof', why);
    if (why !== undefined && 'useNonce' in why) return this.#askNonce();
    if (why !== undefined) return uncheckedProof(why, this.#o.retryAfterS);
    // §9 (as §8.2): every accepted answer hands out the current nonce, so a client that reads it
    // moves to the next window's without a refusal.
    const nonce = await this.#nonces?.current();
    return nonce === undefined ? NOTHING : { headers: { 'dpop-nonce': nonce } };
  }

  /**
   * The proof of `req`, checked once per request. The core re-runs `authenticate` with the same
   * request object while a long-lived stream it opened lasts (`revalidateMs`): that re-checks the
   * token, but the proof's freshness, nonce and single use (§4.3 steps 9-11, §11.1) concern the
   * request's arrival, so checking it again would refuse every such stream as a replay. Another
   * request presenting the same proof is still a replay.
   */
  async #checkProof(req: GateRequest, token: string, jkt: string) {
    const proof = req.header('dpop');
    const proven = `${jkt} ${token} ${proof ?? ''}`;
    if (this.#proven.get(req) === proven) return undefined;
    const why = await this.#proofs.check(proof, req.method ?? '', token, jkt, req);
    if (why === undefined) this.#proven.set(req, proven);
    return why;
  }

  /** §9: 401 `use_dpop_nonce` with the nonce to use; 503 while there is no key to make one. */
  async #askNonce(): Promise<Denial> {
    const nonce = await this.#nonces?.current();
    if (nonce === undefined) return uncheckedProof({ storeDown: true }, this.#o.retryAfterS);
    const d = this.#deny('use_dpop_nonce', 'the DPoP proof needs the nonce in DPoP-Nonce');
    return { ...d, headers: { ...d.headers, 'dpop-nonce': nonce } };
  }

  /** A DPoP presentation refused: 401 `token-dpop`, told in a DPoP challenge (§7.1). */
  #deny(error: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce', description: string): Denial {
    const challenge = dpopChallenge({
      resourceMetadata: this.#metadataUrl,
      scopes: this.#o.scopes,
      error,
      description,
      algorithms: this.#o.algorithms,
    });
    return {
      status: 401,
      reason: error === 'use_dpop_nonce' ? 'dpop-nonce' : 'token-dpop',
      message: `Unauthorized: ${description}`,
      headers: { 'www-authenticate': challenge },
    };
  }
}
