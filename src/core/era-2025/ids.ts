/**
 * Session ids and per-session event-id tags from the platform CSPRNG (Web Crypto, present in
 * Node >= 20 and every browser-like runtime). Session ids carry 144 bits in base64url: visible
 * ASCII only, as 2025-11-25 basic/transports §"Session Management" requires (0x21–0x7E).
 */
import { randomToken } from '../../security/random.js';
import { TAG_LENGTH } from '../../sse/event-id.js';

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function newSessionId(): string {
  return randomToken(18);
}

/** A per-session tag for event ids; unique, not secret (the session id is the secret part). */
export function newEventTag(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(TAG_LENGTH));
  let out = '';
  for (const b of bytes) out += B62[b % 62]!;
  return out;
}
