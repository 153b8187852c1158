/**
 * Authentication of the hop between instances. The forwarding instance signs what it forwards with
 * the cluster secret; the owner verifies before treating the request as forwarded. A client cannot
 * make a request look forwarded (it lacks the key), and a captured header is good only for the same
 * method, session, target instance and body, within a short window.
 *
 * Header: `x-sluice-forward: v1.<from>.<to>.<unix ms>.<base64url HMAC-SHA256>` over
 * `v1\n<method>\n<session id>\n<from>\n<to>\n<unix ms>\n<last-event-id>\n<sha256(body) base64url>`.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

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
  digest: string,
): string {
  return createHmac('sha256', secret)
    .update(`v1\n${f.method}\n${f.sessionId}\n${from}\n${to}\n${ts}\n${f.lastEventId ?? ''}\n${digest}`)
    .digest('base64url');
}

export function signForward(secret: string, f: Forwarded, now = Date.now()): string {
  return `v1.${f.from}.${f.to}.${now}.${mac(secret, f, f.from, f.to, now, bodyDigest(f.body))}`;
}

export type ForwardVerdict =
  | { ok: true; from: string; to: string }
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
  if (parts.length !== 5 || parts[0] !== 'v1') return { ok: false, reason: 'malformed' };
  const [, from, to, tsText, sig] = parts as [string, string, string, string, string];
  const ts = Number(tsText);
  if (!/^\d{1,16}$/.test(tsText) || from.length === 0 || to.length === 0)
    return { ok: false, reason: 'malformed' };
  if (Math.abs(now - ts) > FORWARD_WINDOW_MS) return { ok: false, reason: 'expired' };
  const want = Buffer.from(mac(secret, req, from, to, ts, bodyDigest(req.body)));
  const got = Buffer.from(sig);
  if (got.length !== want.length || !timingSafeEqual(got, want))
    return { ok: false, reason: 'bad-signature' };
  return { ok: true, from, to };
}
