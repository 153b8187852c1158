/**
 * Authorization for long-lived streams. A GET stream is one request that may live for hours, so
 * the token checked when it opened would otherwise never be looked at again, and the session id
 * cannot stand in for it (2025-11-25 basic/security_best_practices §"Session Hijacking": servers
 * MUST NOT use sessions for authentication). A guarded connection ends when its credential expires
 * and, with `revalidateMs`, when re-running `authenticate` refuses it. It ends after a `retry:` hint
 * following its last event id, so the client resumes with a fresh token and loses nothing.
 */
import type { ResponseSink } from '../pipeline/sink.js';

export interface StreamGuard {
  /** Epoch ms when the credential expires. */
  expiresAt: number | undefined;
  revalidateMs: number;
  /** Re-runs authentication for this request; false when the credential no longer holds. */
  revalidate: (() => Promise<boolean>) | undefined;
}

/** setTimeout's longest delay (2^31 - 1 ms); longer waits are re-armed in steps. */
const MAX_DELAY = 2_147_483_647;

export function armGuard(
  sink: ResponseSink,
  guard: StreamGuard | undefined,
  now: () => number,
  end: (why: 'expired' | 'revoked') => void,
): void {
  if (guard === undefined) return;
  let expiry: ReturnType<typeof setTimeout> | undefined;
  let poll: ReturnType<typeof setInterval> | undefined;
  let over = false;
  const stop = (): void => {
    over = true;
    if (expiry !== undefined) clearTimeout(expiry);
    if (poll !== undefined) clearInterval(poll);
  };
  const finish = (why: 'expired' | 'revoked'): void => {
    if (over) return;
    stop();
    end(why);
  };
  const at = guard.expiresAt;
  if (at !== undefined) {
    const wait = (): void => {
      const left = at - now();
      if (left <= 0) finish('expired');
      else {
        expiry = setTimeout(wait, Math.min(left, MAX_DELAY));
        expiry.unref?.();
      }
    };
    wait();
  }
  const revalidate = guard.revalidate;
  if (revalidate !== undefined && guard.revalidateMs > 0) {
    poll = setInterval(() => {
      revalidate().then(
        (ok) => {
          if (!ok) finish('revoked');
        },
        () => finish('revoked'),
      );
    }, guard.revalidateMs);
    poll.unref?.();
  }
  sink.onClose(stop);
}
