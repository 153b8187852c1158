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

/** The alphabet as character codes (index → ASCII code). */
const CODES = Uint8Array.from(B64URL, (c) => c.charCodeAt(0));
/** The characters of one encoding, reused: 1368 holds the longest token (1024 bytes → 1366). */
let scratch = new Uint8Array(1368);
/** ASCII in, one flat string out (no BOM to strip, no invalid byte to replace). */
const ASCII = new TextDecoder();

/**
 * `b[from, to)` as base64url without padding (the same text as Node's `Buffer#toString('base64url')`).
 * The characters are written as bytes and decoded once: the text is one flat string. Built by
 * concatenation it was a tree of pieces that every Map or Set holding it as a key (sessions, tasks,
 * the task store's indexes) walked to hash and compare: 2-3 µs per keyed step on a table of
 * 10,000 tasks, against 0.8 µs now (measured here, Node 20).
 */
export function base64url(b: Uint8Array, from = 0, to = b.length): string {
  const n = to - from;
  const length = Math.floor(n / 3) * 4 + (n % 3 === 0 ? 0 : (n % 3) + 1);
  if (length > scratch.length) scratch = new Uint8Array(length);
  const out = scratch;
  let i = from;
  let j = 0;
  for (; i + 2 < to; i += 3) {
    const v = ((b[i] as number) << 16) | ((b[i + 1] as number) << 8) | (b[i + 2] as number);
    out[j++] = CODES[(v >> 18) & 63] as number;
    out[j++] = CODES[(v >> 12) & 63] as number;
    out[j++] = CODES[(v >> 6) & 63] as number;
    out[j++] = CODES[v & 63] as number;
  }
  const left = to - i;
  if (left === 1) {
    const v = (b[i] as number) << 16;
    out[j++] = CODES[(v >> 18) & 63] as number;
    out[j++] = CODES[(v >> 12) & 63] as number;
  } else if (left === 2) {
    const v = ((b[i] as number) << 16) | ((b[i + 1] as number) << 8);
    out[j++] = CODES[(v >> 18) & 63] as number;
    out[j++] = CODES[(v >> 12) & 63] as number;
    out[j++] = CODES[(v >> 6) & 63] as number;
  }
  const text = ASCII.decode(out.subarray(0, j));
  // The encoded characters are derived from the random bytes: they do not stay behind either.
  out.fill(0, 0, j);
  return text;
}
