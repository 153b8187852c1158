/**
 * Nonces the resource server hands out for DPoP proofs (RFC 9449 §9): with `dpopNonce` set, a proof
 * must carry one it was given lately, so a proof cannot be made ahead of time by whoever held the key
 * for a moment, and its freshness no longer rests on the client's clock alone (§11.1).
 *
 * Stateless: a nonce is its time window and an HMAC of the window and the resource under a key, so
 * any instance holding the key accepts any instance's nonce and nothing is stored. A nonce is good in
 * its window and the next (between `windowS` and twice that), and one window early on an instance
 * whose clock is behind the one that made it (instances' clocks differ; only the key makes a nonce,
 * so this lets no one make one). Every accepted answer carries the current nonce in `DPoP-Nonce`
 * (§9, as §8.2 for the authorization server), so a client that reads it never sees the
 * `use_dpop_nonce` refusal again. Web Crypto only: the
 * resource server also runs in the fetch binding's runtimes.
 */

import { base64url } from '../security/random.js';

/** `DPoP-Nonce` (§8.1): a nonce is 1*NQCHAR; ours are base36 digits, a dot and base64url. */
const SHAPE = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{22})$/;

export type NonceVerdict = 'current' | 'previous' | 'refused';

/** Equal strings of one length, compared in time independent of where they differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export interface DpopNonceOptions {
  readonly resource: string;
  readonly windowS: number;
  /** The HMAC key; undefined while it is not known yet (a cluster that has not joined). */
  readonly key: () => string | undefined;
  readonly now: () => number;
}

export class DpopNonces {
  readonly #o: DpopNonceOptions;
  /** The imported key, for the key text it was imported from. */
  #imported: { text: string; key: Promise<CryptoKey> } | undefined;
  /**
   * The nonces of the last windows asked for, by window, for the key text they were made with: a
   * nonce is checked by comparing it with the one this server would make for its window, made once
   * (an HMAC through Web Crypto costs some 80 µs of CPU; a comparison nothing).
   */
  readonly #made = new Map<number, { text: string; nonce: Promise<string> }>();

  constructor(o: DpopNonceOptions) {
    this.#o = o;
  }

  #window(): number {
    return Math.floor(this.#o.now() / 1000 / this.#o.windowS);
  }

  async #mac(keyText: string, window: number): Promise<string> {
    if (this.#imported?.text !== keyText) {
      const raw = new TextEncoder().encode(keyText);
      const key = crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      this.#imported = { text: keyText, key };
    }
    const data = new TextEncoder().encode(`sluice-dpop-nonce\n${this.#o.resource}\n${window}`);
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', await this.#imported.key, data));
    return base64url(mac, 0, 16);
  }

  /** The nonce of `window` under `keyText`, made once while that window is now's or beside it. */
  #nonceOf(keyText: string, window: number): Promise<string> {
    const made = this.#made.get(window);
    if (made !== undefined && made.text === keyText) return made.nonce;
    const nonce = this.#mac(keyText, window).then((mac) => `${window.toString(36)}.${mac}`);
    this.#made.set(window, { text: keyText, nonce });
    // Only the window before now, now's and the next are ever asked for again: at most three kept.
    const now = this.#window();
    for (const w of this.#made.keys()) if (w < now - 1 || w > now + 1) this.#made.delete(w);
    return nonce;
  }

  /** The nonce to hand out now; undefined while there is no key. */
  current(): Promise<string | undefined> {
    const keyText = this.#o.key();
    return keyText === undefined ? Promise.resolve(undefined) : this.#nonceOf(keyText, this.#window());
  }

  /** Whether a proof's `nonce` claim is one of ours: of this window, the one before, or the next. */
  async check(nonce: unknown): Promise<NonceVerdict> {
    const keyText = this.#o.key();
    if (keyText === undefined || typeof nonce !== 'string') return 'refused';
    const m = SHAPE.exec(nonce);
    if (m === null) return 'refused';
    const window = Number.parseInt(m[1] as string, 36);
    const now = this.#window();
    if (window < now - 1 || window > now + 1) return 'refused';
    if (!sameText(await this.#nonceOf(keyText, window), nonce)) return 'refused';
    return window === now - 1 ? 'previous' : 'current';
  }
}
