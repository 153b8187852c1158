/**
 * What the core tells a cluster (src/cluster/) about the sessions it owns. The core knows nothing of
 * Redis: it calls these hooks, and a single-instance server has none. Only `sessionStarting` is
 * awaited (an `initialize` must not hand out a session id the other instances cannot route); the
 * rest are fire-and-forget and never on the per-event path beyond queueing.
 */
import type { ProgressEvent } from '../jsonrpc/progress-json.js';
import type { ChangeBus } from './change-bus.js';

export interface SessionStart {
  id: string;
  tag: string;
  principal: string | undefined;
  /** The initialize request's params as JSON. */
  init: string;
}

export interface ClusterHooks {
  /** Before the initialize is dispatched. Rejecting refuses the initialize with 503. */
  sessionStarting(s: SessionStart): Promise<void>;
  /** The negotiated protocol version is known. */
  sessionVersion(id: string, version: string): void;
  /** The session ended on this instance (any reason). */
  sessionEnded(id: string): void;
  /**
   * A frame of a stream of a session this instance owns (for the copy read after its death), with
   * its progress parts when it is a progress notification's (the copy may keep those instead).
   */
  replicate(id: string, stream: number, seq: number, frame: string, progress?: ProgressEvent): void;
  /** A POST stream opened to answer these requests. */
  streamRequests(id: string, stream: number, requestIds: readonly (string | number)[]): void;
  /** The stream got its last frame. */
  streamEnded(id: string, stream: number, graceMs: number): void;
  /** The change bus listen streams use instead of the per-endpoint one (shared by every instance). */
  changeBus?: ChangeBus;
}
