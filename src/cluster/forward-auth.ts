/**
 * Authentication of the hop between instances. The forwarding instance signs what it forwards with
 * the cluster secret; the owner verifies before treating the request as forwarded. A client cannot
 * make a request look forwarded (it lacks the key), and a captured header is good only for the same
 * method, session, target instance and body, within a short window, and only once: every signature
 * carries a random nonce, and the owner refuses a nonce it has seen (replay-guard.ts).
 *
 * Header: `x-sluice-forward: v2.<from>.<to>.<unix ms>.<nonce>.<base64url HMAC-SHA256>` over
 * `v2\n<method>\n<session id>\n<from>\n<to>\n<unix ms>\n<nonce>\n<last-event-id>\n<sha256(body) base64url>`.
 * (v1 had no nonce: two identical requests signed in the same millisecond could not be told from a
 * replay, so a replay cache needs one. A v1 header is refused as malformed.)
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { randomToken } from '../security/random.js';

export const FORWARD_HEADER = 'x-sluice-forward';
/** Clock skew tolerated between instances, plus time in flight. */
export const FORWARD_WINDOW_MS = 30_000;

export interface Forwarded {
  method: string;
  sessionId: string;
  /** Incarnation of the forwarding instance. */
  from: string;
  /** Incarnation of the owner it was meant for. */
  to: string;
  lastEventId: string | undefined;
  body: string;
}

/** GET and DELETE carry no body: their digest is a constant, not a hash per request. */
const EMPTY_DIGEST = createHash('sha256').update('').digest('base64url');

export function bodyDigest(body: string): string {
  return body.length === 0 ? EMPTY_DIGEST : createHash('sha256').update(body).digest('base64url');
}

function mac(
  secret: string,
  f: Omit<Forwarded, 'from' | 'to' | 'body'>,
  from: string,
  to: string,
  ts: number,
  nonce: string,
  digest: string,
): string {
  return createHmac('sha256', secret)
    .update(
      `v2\n${f.method}\n${f.sessionId}\n${from}\n${to}\n${ts}\n${nonce}\n${f.lastEventId ?? ''}\n${digest}`,
    )
    .digest('base64url');
}

/**
 * 96 random bits, base64url (no `.`): unique per signature, so a second use is a replay. Drawn from
 * the shared token pool (security/random.ts): one `randomBytes` call per forward cost more than the HMAC.
 */
function newNonce(): string {
  return randomToken(12);
}

export function signForward(secret: string, f: Forwarded, now = Date.now(), nonce = newNonce()): string {
  return `v2.${f.from}.${f.to}.${now}.${nonce}.${mac(secret, f, f.from, f.to, now, nonce, bodyDigest(f.body))}`;
}

export type ForwardVerdict =
  /** `ts` and `nonce` identify this signature for the replay guard. */
  | { ok: true; from: string; to: string; ts: number; nonce: string }
  /** Not signed by a cluster member (or expired, or altered): refuse. */
  | { ok: false; reason: 'malformed' | 'expired' | 'bad-signature' };

/**
 * Checks a forward header against the request as received. `to` is returned, not checked here:
 * the caller compares it with its own incarnation (a mismatch is 421, not 403).
 */
export function verifyForward(
  secret: string,
  header: string,
  req: Omit<Forwarded, 'from' | 'to'>,
  now = Date.now(),
): ForwardVerdict {
  const parts = header.split('.');
  if (parts.length !== 6 || parts[0] !== 'v2') return { ok: false, reason: 'malformed' };
  const [, from, to, tsText, nonce, sig] = parts as [string, string, string, string, string, string];
  const ts = Number(tsText);
  if (!/^\d{1,16}$/.test(tsText) || from.length === 0 || to.length === 0 || !/^[\w-]{16}$/.test(nonce))
    return { ok: false, reason: 'malformed' };
  if (Math.abs(now - ts) > FORWARD_WINDOW_MS) return { ok: false, reason: 'expired' };
  const want = Buffer.from(mac(secret, req, from, to, ts, nonce, bodyDigest(req.body)));
  const got = Buffer.from(sig);
  if (got.length !== want.length || !timingSafeEqual(got, want))
    return { ok: false, reason: 'bad-signature' };
  return { ok: true, from, to, ts, nonce };
}
