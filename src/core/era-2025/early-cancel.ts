/**
 * A `notifications/cancelled` whose request the server does not know (yet). A client sends the
 * request first, but when the cancellation goes out on another connection (2025-11-25
 * basic/transports: every message is its own POST) it can arrive first, most often under load or
 * when the request's body is larger. Dropped, as the SDK drops a cancel for an unknown id, it is
 * lost and the request runs to its end. So a session holds such ids briefly and the request, when
 * it comes, is cancelled before it is dispatched: the cancel wins whichever arrives first.
 *
 * Holding is safe because a request id is never reused within a session (2025-11-25 basic
 * §"Requests": it MUST NOT have been used before by the requestor in the same session), so a held
 * id can only match the request it was meant for. A cancel for a request that already finished is
 * held for nothing, which the bounds make harmless.
 */
import { ExpiringSet } from '../../flow/expiring-set.js';
import type { RequestId } from '../../jsonrpc/message.js';

/** Cancels held per session; beyond, the oldest is forgotten. */
export const EARLY_CANCEL_MAX = 64;
/** How long a cancel waits for its request: far above the gap between two POSTs of one client. */
export const EARLY_CANCEL_MS = 5_000;

export function earlyCancels(): ExpiringSet<RequestId> {
  return new ExpiringSet(EARLY_CANCEL_MAX, EARLY_CANCEL_MS);
}
