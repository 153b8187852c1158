/**
 * Session ids and per-session event-id tags from the platform CSPRNG (Web Crypto, present in
 * Node >= 20 and every browser-like runtime). Session ids carry 144 bits in base64url: visible
 * ASCII only, as 2025-11-25 basic/transports §"Session Management" requires (0x21–0x7E).
 */
import { TAG_LENGTH } from '../../sse/event-id.js';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function newSessionId(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(18));
  let out = '';
  for (let i = 0; i < 18; i += 3) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += B64URL[(n >> 18) & 63]! + B64URL[(n >> 12) & 63]! + B64URL[(n >> 6) & 63]! + B64URL[n & 63]!;
  }
  return out;
}

/** A per-session tag for event ids; unique, not secret (the session id is the secret part). */
export function newEventTag(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(TAG_LENGTH));
  let out = '';
  for (const b of bytes) out += B62[b % 62]!;
  return out;
}
