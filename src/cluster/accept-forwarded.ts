/**
 * The owner's side of the hop: a request a peer forwarded here is served only when its signature
 * verifies with the cluster's key, names this incarnation, and has not been used before
 * (docs/scale-out.md, "The hop"). Anything else is refused and nothing is served.
 */
import { Refusals, sendRefusal } from '../core/pipeline/refusal.js';
import { verifyForward } from './forward-auth.js';
import type { ReplayGuard } from './replay-guard.js';
import type { ClusterCounters, RouteInput } from './route-input.js';

export interface AcceptContext {
  readonly incarnation: string;
  /** The hop's HMAC key; undefined until the cluster has joined. */
  readonly secret: string | undefined;
  readonly replays: ReplayGuard;
  readonly counters: ClusterCounters;
}

/**
 * Names the refusal in a header: the relaying member reads only the head before relaying, and must
 * tell this 403 (its signature refused: keys or clocks differ) from a 403 meant for the client (an
 * authorization denial), forward-path.ts.
 */
export const REFUSAL_HEADER = 'x-sluice-refusal';
const HOP_REFUSED = { [REFUSAL_HEADER]: 'forward-forbidden' };

/** 'local': serve the forwarded request here; 'handled': it was refused. */
export function acceptForwarded(c: AcceptContext, r: RouteInput, header: string): 'local' | 'handled' {
  const sink = r.sink;
  const secret = c.secret;
  if (secret === undefined) {
    sendRefusal(sink, Refusals.ownerUnavailable(), r.headers);
    return 'handled';
  }
  const lastEventId = r.view.headers['last-event-id'];
  const v = verifyForward(secret, header, {
    method: r.method,
    sessionId: r.sessionId ?? '',
    lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
    body: r.body,
  });
  if (!v.ok) {
    c.counters.add('forwardRefused');
    sendRefusal(sink, Refusals.forwardForbidden(), { ...r.headers, ...HOP_REFUSED });
    return 'handled';
  }
  if (v.to !== c.incarnation) {
    // Meant for another incarnation (this address was restarted): never forwarded a second time.
    c.counters.add('forwardRefused');
    sendRefusal(sink, Refusals.misdirected(), r.headers);
    return 'handled';
  }
  // Checked after `to`: a signature for this incarnation can only have been used in this process.
  const seen = c.replays.admit(v.from, v.ts, v.nonce);
  if (seen === 'replayed') {
    c.counters.add('forwardRefused');
    sendRefusal(sink, Refusals.forwardForbidden(), { ...r.headers, ...HOP_REFUSED });
    return 'handled';
  }
  if (seen === 'crowded') {
    sendRefusal(sink, Refusals.ownerUnavailable(), r.headers);
    return 'handled';
  }
  c.counters.add('forwardedIn');
  return 'local';
}
