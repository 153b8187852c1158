/**
 * DPoP (RFC 9449), the proof-of-possession MCP's DPoP extension (SEP-1932) uses: one ES256 key per transport, made
 * with Web Crypto (the private key never leaves it: non-extractable), and a fresh proof JWT per HTTP request — to
 * the token endpoint (§5) and, with `ath`, to the resource (§7). Servers that demand a nonce (`use_dpop_nonce`,
 * §8 and §9) get it back in the next proof; nonces are kept per origin.
 */
import type { Challenge } from './challenge.js';
import type { ResourceMetadata } from './metadata.js';
import { base64url, randomToken } from './pkce.js';

const encoder = new TextEncoder();

function b64json(value: unknown): string {
  return base64url(encoder.encode(JSON.stringify(value)));
}

/**
 * Whether the resource server takes DPoP-bound tokens: its challenge offers the `DPoP` scheme (RFC 9449 §7.1)
 * or its metadata lists proof algorithms or requires bound tokens (RFC 9728 §2). An authorization server that
 * offers DPoP is not enough: a resource server that knows only `Bearer` refuses a bound token (the SDK's
 * `requireBearerAuth` does), and the client would be locked out of a server it could have used.
 */
export function resourceTakesDpop(
  challenge: Challenge | undefined,
  metadata: ResourceMetadata | undefined,
): boolean {
  return (
    challenge?.offersDpop === true ||
    metadata?.dpop_bound_access_tokens_required === true ||
    (metadata?.dpop_signing_alg_values_supported?.length ?? 0) > 0
  );
}

export class DpopProver {
  readonly #privateKey: CryptoKey;
  readonly #nonces = new Map<string, string>();
  readonly #now: () => number;
  /** The proofs' protected header, encoded once: the key never changes. */
  readonly #header: string;
  /**
   * The last token's hash (`ath`): one token serves every request for its lifetime, and a SHA-256
   * through Web Crypto costs about 40 µs of CPU in Node (a job on libuv's threads) where the proof's
   * signature costs about 150.
   */
  #ath: { token: string; hash: string } | undefined;

  private constructor(privateKey: CryptoKey, jwk: Record<string, string>, now: () => number) {
    this.#privateKey = privateKey;
    this.#now = now;
    this.#header = b64json({ typ: 'dpop+jwt', alg: 'ES256', jwk });
  }

  /** A new P-256 key pair; only the public half is exported (as the proof's `jwk` header). */
  static async create(now: () => number): Promise<DpopProver> {
    const pair = (await globalThis.crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
      'sign',
      'verify',
    ])) as CryptoKeyPair;
    const exported = await globalThis.crypto.subtle.exportKey('jwk', pair.publicKey);
    const jwk = { kty: 'EC', crv: 'P-256', x: String(exported.x), y: String(exported.y) };
    return new DpopProver(pair.privateKey, jwk, now);
  }

  /** Remembers the nonce a server sent in `DPoP-Nonce` (§8, §9) for the next proofs to its origin. */
  rememberNonce(url: string | URL, nonce: string | null): boolean {
    if (nonce === null || nonce.length === 0 || nonce.length > 1024) return false;
    const origin = new URL(url).origin;
    const changed = this.#nonces.get(origin) !== nonce;
    this.#nonces.set(origin, nonce);
    return changed;
  }

  /**
   * A proof for one request: `htu` is the URL without query and fragment (§4.2), `ath` the hash of the access
   * token when one is presented (§4.2, §7).
   */
  async proof(method: string, url: string | URL, accessToken?: string): Promise<string> {
    const target = new URL(url);
    const htu = `${target.origin}${target.pathname}`;
    const payload: Record<string, unknown> = {
      jti: randomToken(16),
      htm: method,
      htu,
      iat: Math.floor(this.#now() / 1000),
    };
    const nonce = this.#nonces.get(target.origin);
    if (nonce !== undefined) payload['nonce'] = nonce;
    if (accessToken !== undefined) payload['ath'] = await this.#tokenHash(accessToken);
    const input = `${this.#header}.${b64json(payload)}`;
    // Web Crypto's ECDSA signature is r||s, exactly the JWS ES256 form (RFC 7518 §3.4).
    const signature = await globalThis.crypto.subtle.sign(
      { name: 'ECDSA', hash: 'SHA-256' },
      this.#privateKey,
      encoder.encode(input),
    );
    return `${input}.${base64url(new Uint8Array(signature))}`;
  }

  async #tokenHash(token: string): Promise<string> {
    if (this.#ath?.token === token) return this.#ath.hash;
    const digest = await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(token));
    const hash = base64url(new Uint8Array(digest));
    this.#ath = { token, hash };
    return hash;
  }
}
