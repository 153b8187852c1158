/**
 * Where SSE events are kept for replay (spec 2025-11-25 basic/transports §"Resumability and
 * Redelivery"). Scoped by session and stream, so one session's cursor can never reach another's
 * events (the official SDK's store had no session parameter; typescript-sdk PR #2109).
 *
 * The transport assigns sequence numbers and formats ids; a store only keeps frames in order and
 * answers "what came after seq N on this stream". Methods may return promises so a networked store
 * (Redis) fits without changing callers; the in-memory store answers synchronously.
 */

import type { ProgressEvent } from '../jsonrpc/progress-json.js';
import type { StoredDelta } from './partial-run.js';

export interface StoredEvent {
  seq: number;
  /** The complete SSE frame as written to the socket. */
  frame: string;
  /**
   * Set when the event is one delta of partial output: a store may merge consecutive deltas into
   * one entry that replays from any id inside it (events/partial-run.ts). Others store `frame`.
   */
  partial?: StoredDelta | undefined;
  /**
   * Set when the event is a progress notification whose JSON text is `progress.json`, as layout
   * and values: a store may keep consecutive ones as one run of values (events/progress-run.ts)
   * that renders `frame` again. Others store `frame`.
   */
  progress?: ProgressEvent | undefined;
}

export type ReplayResult =
  | { status: 'ok'; events: StoredEvent[] }
  /** The cursor is older than what the store still holds: replaying would leave a gap. */
  | { status: 'evicted' }
  /** No such stream, or a cursor the stream never issued. */
  | { status: 'unknown' };

export interface EventStore {
  append(sessionId: string, streamId: number, event: StoredEvent): void | Promise<void>;
  /**
   * Events with seq > afterSeq, oldest first, or why they cannot be had. With `allowGap`, events
   * evicted after the cursor are not an error: whatever is still held is returned (a fresh GET,
   * which has no cursor to honour, uses it).
   */
  replay(
    sessionId: string,
    streamId: number,
    afterSeq: number,
    options?: { allowGap?: boolean },
  ): ReplayResult | Promise<ReplayResult>;
  /** The stream will get no more events; its buffer may be freed after graceMs. */
  endStream(sessionId: string, streamId: number, graceMs: number): void | Promise<void>;
  /** The session ended: free all of its streams now. */
  dropSession(sessionId: string): void | Promise<void>;
  /**
   * How full a live stream's replay buffer is, 0 to 1 (1: the next event may evict one a client
   * has not seen). Optional: a store without it is never reported full, and a producer whose
   * consumer is away is then only paced, not held.
   */
  fill?(sessionId: string, streamId: number): number;
}
