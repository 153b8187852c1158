/**
 * A DPoP proof's signature checked through node:crypto, on Node, for the ECDSA algorithms (ES256, the
 * one clients use, and ES384/ES512). Why: jose verifies through Web Crypto in every runtime, and on
 * Node `subtle.verify` runs each check as a job on the thread pool: an ES256 check cost 96–117 µs of
 * CPU there against 61–64 µs for `crypto.verify` on the calling thread, and jose's `jwtVerify` with its
 * header decode 125–163 µs against 62–69 µs for what this file does (scratch loops, Node 20, 2026-12-07).
 * A proof is checked on every request that presents a bound token, so that is most of what DPoP costs
 * the resource server.
 *
 * What is checked is what `jwtVerify` checks for a proof, no less (RFC 7515 §5.2, RFC 7519 §7.2, RFC
 * 9449 §4.3): three base64url parts, nothing else in them, each in its canonical encoding; no `crit`
 * (no extension is understood, §4.1.11) and no `b64` (RFC 7797 needs `crit`); an R‖S signature of the
 * curve's size (RFC 7518 §3.4) over the first two parts as sent, by a key of the algorithm's curve; a
 * claims set that is a JSON object; `exp` and `nbf`, when present, numbers that hold now. The rest of
 * the proof's checks (typ, alg, htm, htu, ath, iat, jti, nonce) are dpop-proof.ts's, on both paths.
 *
 * Anywhere else (Bun, Deno, workerd, a browser, Node before 20.16 without `process.getBuiltinModule`),
 * and for the other algorithms, {@link nodeProofVerifier} answers undefined and jose checks the proof.
 * node:crypto is reached through `process.getBuiltinModule`, not an import, so `sluice/fetch` still
 * bundles for runtimes without node:* (test/unit/fetch-neutral.test.ts).
 */
import type { JWK } from 'jose';

/** A proof's claims set when its signature verifies, else why not. */
export type ProofVerdict = { readonly payload: Record<string, unknown> } | { readonly refused: string };

/** Checks one proof (the compact JWS as sent) against the key it was made for; `nowS` in seconds. */
export type ProofVerifier = (
  proof: string,
  header: Readonly<Record<string, unknown>>,
  nowS: number,
) => ProofVerdict;

/** What this file uses of node:crypto's KeyObject and functions (declared here: auth imports no node:*). */
interface NodeKey {
  readonly type: string;
  readonly asymmetricKeyType?: string | undefined;
  readonly asymmetricKeyDetails?: { readonly namedCurve?: string | undefined } | undefined;
}

interface NodeCrypto {
  createPublicKey(key: { key: JWK; format: 'jwk' }): NodeKey;
  verify(
    algorithm: string,
    data: Uint8Array,
    key: { key: NodeKey; dsaEncoding: 'ieee-p1363' },
    signature: Uint8Array,
  ): boolean;
}

interface NodeGlobals {
  process?: {
    versions?: { node?: string; bun?: string; deno?: string };
    getBuiltinModule?: (id: string) => unknown;
  };
  Buffer?: typeof Buffer;
}

/** RFC 7518 §3.4: the hash, the curve (as Node names it) and the R‖S size of each ECDSA algorithm. */
const ECDSA: Readonly<Record<string, { hash: string; curve: string; bytes: number }>> = {
  ES256: { hash: 'sha256', curve: 'prime256v1', bytes: 64 },
  ES384: { hash: 'sha384', curve: 'secp384r1', bytes: 96 },
  ES512: { hash: 'sha512', curve: 'secp521r1', bytes: 132 },
};

const BASE64URL = /^[A-Za-z0-9_-]+$/;

let node: { crypto: NodeCrypto; buffer: typeof Buffer } | null | undefined;

/** node:crypto and Buffer on Node itself (not Bun or Deno, whose node:crypto may differ); else null. */
function nodeCrypto(): typeof node {
  if (node !== undefined) return node;
  const g = globalThis as NodeGlobals;
  const v = g.process?.versions;
  const crypto =
    v?.node !== undefined && v.bun === undefined && v.deno === undefined
      ? (g.process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined)
      : undefined;
  node = crypto !== undefined && g.Buffer !== undefined ? { crypto, buffer: g.Buffer } : null;
  return node;
}

/** `part` decoded, or undefined when it is not the canonical base64url of what it decodes to. */
function decode(part: string, buffer: typeof Buffer): Buffer | undefined {
  if (!BASE64URL.test(part)) return undefined;
  const bytes = buffer.from(part, 'base64url');
  // Node's decoder skips what is not base64url and ignores the last character's spare bits: only the
  // encoding the signer produced is taken, so one proof has one spelling.
  return bytes.toString('base64url') === part ? bytes : undefined;
}

/**
 * The node:crypto check for proofs signed with `jwk` under `alg`, or undefined where it does not apply
 * (then jose checks them). Throws when `jwk` is not a public key of the algorithm's curve, as jose's
 * import would.
 */
export function nodeProofVerifier(jwk: JWK, alg: string): ProofVerifier | undefined {
  const spec = ECDSA[alg];
  const n = nodeCrypto();
  if (spec === undefined || n === null || n === undefined) return undefined;
  if (jwk.kty !== 'EC' || 'd' in jwk) throw new TypeError('not an EC public key');
  // What Web Crypto's import refuses for a verifying key (WebCrypto §"importKey", JWK): jose's path would.
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new TypeError('not a signing key');
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify')))
    throw new TypeError('not a verifying key');
  const key = n.crypto.createPublicKey({ key: jwk, format: 'jwk' });
  if (
    key.type !== 'public' ||
    key.asymmetricKeyType !== 'ec' ||
    key.asymmetricKeyDetails?.namedCurve !== spec.curve
  )
    throw new TypeError(`not a key for ${alg}`);
  const { crypto, buffer } = n;
  return (proof, header, nowS) => {
    if ('crit' in header || 'b64' in header)
      return { refused: 'the DPoP proof has a header this server does not understand' };
    const first = proof.indexOf('.');
    const second = proof.indexOf('.', first + 1);
    if (first <= 0 || second <= first + 1 || proof.indexOf('.', second + 1) !== -1)
      return { refused: 'the DPoP proof is not a JWS' };
    const payloadPart = proof.slice(first + 1, second);
    const signature = decode(proof.slice(second + 1), buffer);
    const claims = decode(payloadPart, buffer);
    if (
      signature === undefined ||
      claims === undefined ||
      decode(proof.slice(0, first), buffer) === undefined
    )
      return { refused: 'the DPoP proof is not a JWS' };
    if (signature.length !== spec.bytes) return { refused: 'the DPoP proof signature does not verify' };
    const signed = buffer.from(proof.slice(0, second), 'latin1');
    if (!crypto.verify(spec.hash, signed, { key, dsaEncoding: 'ieee-p1363' }, signature))
      return { refused: 'the DPoP proof signature does not verify' };
    let payload: unknown;
    try {
      payload = JSON.parse(claims.toString('utf8'));
    } catch {
      return { refused: 'the DPoP proof claims are not JSON' };
    }
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
      return { refused: 'the DPoP proof claims are not a JSON object' };
    const p = payload as Record<string, unknown>;
    // RFC 7519 §4.1.4/§4.1.5, as jwtVerify applies them (no clock tolerance).
    if ('exp' in p && (typeof p['exp'] !== 'number' || p['exp'] <= nowS))
      return { refused: 'the DPoP proof has expired' };
    if ('nbf' in p && (typeof p['nbf'] !== 'number' || p['nbf'] > nowS))
      return { refused: 'the DPoP proof is not yet valid' };
    return { payload: p };
  };
}
