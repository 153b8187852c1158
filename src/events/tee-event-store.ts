/**
 * An EventStore that also hands every frame to a mirror (the cluster's Redis copy). Replays are read
 * from the primary store only: the mirror is for when this process is gone.
 */
import type { ProgressEvent } from '../jsonrpc/progress-json.js';
import type { EventStore, ReplayResult, StoredEvent } from './event-store.js';

/** Where the copies go (the cluster's hooks satisfy it). */
export interface FrameMirror {
  /** A frame, with its progress parts when it has them (a mirror may keep those instead). */
  replicate(sessionId: string, streamId: number, seq: number, frame: string, progress?: ProgressEvent): void;
  streamEnded(sessionId: string, streamId: number, graceMs: number): void;
}

export class TeeEventStore implements EventStore {
  readonly #primary: EventStore;
  readonly #mirror: FrameMirror;

  constructor(primary: EventStore, mirror: FrameMirror) {
    this.#primary = primary;
    this.#mirror = mirror;
  }

  append(sessionId: string, streamId: number, event: StoredEvent): void | Promise<void> {
    this.#mirror.replicate(sessionId, streamId, event.seq, event.frame, event.progress);
    return this.#primary.append(sessionId, streamId, event);
  }

  replay(
    sessionId: string,
    streamId: number,
    afterSeq: number,
    options?: { allowGap?: boolean },
  ): ReplayResult | Promise<ReplayResult> {
    return this.#primary.replay(sessionId, streamId, afterSeq, options);
  }

  endStream(sessionId: string, streamId: number, graceMs: number): void | Promise<void> {
    this.#mirror.streamEnded(sessionId, streamId, graceMs);
    return this.#primary.endStream(sessionId, streamId, graceMs);
  }

  /**
   * The primary's fill: a producer whose client is away is held by it (core/stream/partial-output.ts).
   * Not passed through, a cluster member's producers were only paced, and evicted frames the client
   * had not seen. 0 (never full) when the primary does not tell, as for a store without `fill`.
   */
  fill(sessionId: string, streamId: number): number {
    return this.#primary.fill?.(sessionId, streamId) ?? 0;
  }

  dropSession(sessionId: string): void | Promise<void> {
    // The mirror learns through sessionEnded (which also clears the directory).
    return this.#primary.dropSession(sessionId);
  }
}
