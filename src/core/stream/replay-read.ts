/**
 * What a resume reads from the replay store, and the verdict on it (MCP 2025-11-25
 * basic/transports §"Resumability and Redelivery": replay what followed the cursor, no gap, no
 * duplicate). The store may be the application's, networked, failing or lossy, so its answer is
 * checked against what the stream knows it produced before the read began.
 */
import type { EventStore, ReplayResult } from '../../events/event-store.js';
import type { Counters } from '../observe/counters.js';

/**
 * How a resume went: attached, refused by the store, the store failed to answer (`unavailable`), or
 * nobody to attach (client or session gone).
 */
export type ResumeOutcome = 'ok' | 'evicted' | 'unknown' | 'closed' | 'ended' | 'unavailable';

export interface ReplayRead {
  readonly sessionKey: string;
  readonly stream: number;
  /** Replay after this seq. */
  readonly from: number;
  /** The newest seq produced before the read began: every frame up to it must come back. */
  readonly upTo: number;
  /** A GET without a cursor: takes whatever is still buffered, a gap is no error. */
  readonly fresh: boolean;
}

/** The store's events after `from`, or why not; undefined when the store failed to answer. */
export async function readReplay(
  store: EventStore,
  q: ReplayRead,
  counters: Counters,
): Promise<ReplayResult | undefined> {
  let r: ReplayResult | undefined;
  try {
    r = await store.replay(q.sessionKey, q.stream, q.from, q.fresh ? { allowGap: true } : undefined);
  } catch {
    // The store failed (counted and logged by the guarded store): the live stream goes on as it
    // was and the resume is answered 503 so the client may try again.
    return undefined;
  }
  if (q.fresh) return r;
  // The client holds every frame made before the read: a store that failed to keep the last of
  // them (so does not know the cursor) has nothing missing to report.
  if (q.from === q.upTo && r.status === 'unknown') return { status: 'ok', events: [] };
  // Every frame made before the read began must come back: a store that lost the tail (a failed
  // append), or the whole stream, must not let the client skip frames silently.
  if (
    q.from < q.upTo &&
    ((r.status === 'ok' && (r.events.at(-1)?.seq ?? q.from) < q.upTo) || r.status === 'unknown')
  ) {
    counters.add('storeGaps');
    return { status: 'evicted' };
  }
  return r;
}
