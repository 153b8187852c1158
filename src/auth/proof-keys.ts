/**
 * What a DPoP proof's key costs, paid once per key instead of once per request. Every proof carries
 * its public key (RFC 9449 §4.2 `jwk`), and a client signs every request with the same one, but
 * verifying through jose's `EmbeddedJWK` imports that key again for each proof, and the thumbprint
 * (RFC 7638) and the token's hash (`ath`) were recomputed through Web Crypto each time. Measured
 * (Node 20, ES256, bench/auth/dpop-proofs.ts): about 600 µs of CPU per proof, most of it the import
 * and the two digests, against about 180 µs with the key, its thumbprint and the token's hash
 * remembered. Keys and hashes are remembered least recently used first out, a bounded number of each.
 *
 * A key is remembered by its key material and the algorithm it is used with (the members RFC 7638
 * hashes, plus `alg`): two JWKs that differ only in other members (`kid`, `use`) are one key.
 */
import type { JWK } from 'jose';
import { BoundedMap } from '../flow/bounded-map.js';
import { base64url } from '../security/random.js';
import { loadJose } from './jose-lazy.js';
import { nodeProofVerifier, type ProofVerifier } from './proof-signature.js';

/** Keys, and token hashes, remembered at most. */
export const PROOF_CACHE_ENTRIES = 1000;

export interface ProofKey {
  /** RFC 7638 thumbprint, SHA-256, base64url: what a bound token's `cnf.jkt` names. */
  readonly thumbprint: string;
  /** How its proofs are checked: through node:crypto where proof-signature.ts applies, else by jose with this key. */
  readonly check: { readonly verify: ProofVerifier } | { readonly key: CryptoKey };
}

async function sha256(text: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))));
}

export class ProofKeys {
  readonly #keys: BoundedMap<string, Promise<ProofKey>>;
  readonly #hashes: BoundedMap<string, string>;

  constructor(entries = PROOF_CACHE_ENTRIES) {
    this.#keys = new BoundedMap(entries);
    this.#hashes = new BoundedMap(entries);
  }

  /**
   * `jwk` imported for `alg`, with its thumbprint. Rejects when it is not a usable public key (the
   * caller refuses the proof then). Only a key whose thumbprint is `expected` (the token's `cnf.jkt`)
   * is remembered: a client holding one good token cannot fill the cache with keys of its making.
   */
  keyFor(jwk: JWK, alg: string, expected: string): Promise<ProofKey> {
    const id = JSON.stringify([alg, jwk.kty, jwk.crv, jwk.x, jwk.y, jwk.e, jwk.n]);
    const known = this.#keys.touch(id);
    if (known !== undefined) return known;
    const made = (async (): Promise<ProofKey> => {
      const jose = await loadJose();
      const verify = nodeProofVerifier(jwk, alg);
      let check: ProofKey['check'];
      if (verify !== undefined) check = { verify };
      else {
        const key = await jose.importJWK(jwk, alg);
        // As jose's EmbeddedJWK: only an asymmetric public key. A secret one (`oct`) would let anyone
        // who reads the proof sign with it.
        if (key instanceof Uint8Array || key.type !== 'public') throw new TypeError('not a public key');
        check = { key };
      }
      return { check, thumbprint: await jose.calculateJwkThumbprint(jwk, 'sha256') };
    })();
    this.#keys.set(id, made);
    const forget = (): void => {
      if (this.#keys.get(id) === made) this.#keys.delete(id);
    };
    made.then((k) => {
      if (k.thumbprint !== expected) forget();
    }, forget);
    return made;
  }

  /** Keys remembered now (imports under way included). */
  get remembered(): number {
    return this.#keys.size;
  }

  /** base64url(SHA-256(token)): a proof's `ath` for it (RFC 9449 §4.2). */
  async tokenHash(token: string): Promise<string> {
    const known = this.#hashes.touch(token);
    if (known !== undefined) return known;
    const h = await sha256(token);
    this.#hashes.set(token, h);
    return h;
  }
}
