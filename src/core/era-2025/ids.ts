/**
 * Session ids and per-session event-id tags from the platform CSPRNG (Web Crypto, present in
 * Node >= 20 and every browser-like runtime). Session ids carry 144 bits in base64url: visible
 * ASCII only, as 2025-11-25 basic/transports §"Session Management" requires (0x21–0x7E).
 */
import { randomToken } from '../../security/random.js';
import { TAG_LENGTH } from '../../sse/event-id.js';

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * `prefix` (options.sessionIdPrefix, checked to be 1-32 of `A-Z a-z 0-9 _ -`) goes before the random
 * part with a dot, which base64url never contains: a balancer reads the owner from what precedes it.
 */
export function newSessionId(prefix?: string): string {
  return prefix === undefined ? randomToken(18) : `${prefix}.${randomToken(18)}`;
}

/** A per-session tag for event ids; unique, not secret (the session id is the secret part). */
export function newEventTag(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(TAG_LENGTH));
  let out = '';
  for (const b of bytes) out += B62[b % 62]!;
  return out;
}
