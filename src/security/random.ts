/**
 * Unguessable tokens (session ids, task ids, hop nonces) from the platform CSPRNG, Web Crypto's
 * `getRandomValues` (Node >= 20 and every browser-like runtime), drawn from a pool refilled 4 KiB at
 * a time. Measured on the 2026-07-28 task path: a `randomBytes(32)` per task id was 3 % of the
 * server's CPU; a refill per 128 ids costs a fraction of that. The bytes are the CSPRNG's either
 * way; a pool only changes how often it is asked. Encoded as base64url without padding (RFC 4648 §5):
 * visible ASCII, safe in headers and JSON, as 2025-11-25 basic/transports §"Session Management"
 * requires of session ids (0x21–0x7E).
 */

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let poolAt = POOL_BYTES;

/** `bytes` random bytes (1 to 1024) as base64url, unpadded: ceil(bytes × 4 / 3) characters. */
export function randomToken(bytes: number): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > 1024)
    throw new RangeError(`randomToken: bad length ${bytes}`);
  if (poolAt + bytes > POOL_BYTES) {
    globalThis.crypto.getRandomValues(pool);
    poolAt = 0;
  }
  const start = poolAt;
  poolAt += bytes;
  const out = base64url(pool, start, poolAt);
  pool.fill(0, start, poolAt); // a drawn token does not stay in the pool
  return out;
}

/** `b[from, to)` as base64url without padding (the same text as Node's `Buffer#toString('base64url')`). */
export function base64url(b: Uint8Array, from = 0, to = b.length): string {
  let out = '';
  let i = from;
  for (; i + 2 < to; i += 3) {
    const n = ((b[i] ?? 0) << 16) | ((b[i + 1] ?? 0) << 8) | (b[i + 2] ?? 0);
    out += B64URL[(n >> 18) & 63]! + B64URL[(n >> 12) & 63]! + B64URL[(n >> 6) & 63]! + B64URL[n & 63]!;
  }
  const left = to - i;
  if (left === 1) {
    const n = (b[i] ?? 0) << 16;
    out += B64URL[(n >> 18) & 63]! + B64URL[(n >> 12) & 63]!;
  } else if (left === 2) {
    const n = ((b[i] ?? 0) << 16) | ((b[i + 1] ?? 0) << 8);
    out += B64URL[(n >> 18) & 63]! + B64URL[(n >> 12) & 63]! + B64URL[(n >> 6) & 63]!;
  }
  return out;
}
