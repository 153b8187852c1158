/**
 * The handler's running counters: plain numbers, updated on the hot path with `++`, read by
 * `handler.stats()` and the Prometheus exposition. No metrics library in the core.
 */
/**
 * Why a session ended. `failed-init` counts initializations the SDK refused (or whose client left
 * before the answer): no session was registered for them. Auth ends streams, not sessions
 * (`authStreamEnds`); the session cap refuses new sessions (`sessionCapRefusals`).
 */
export type SessionEndReason = 'delete' | 'idle' | 'shutdown' | 'closed' | 'failed-init';

import { Metrics } from './metrics.js';

export class Counters {
  /** Per-method histograms; undefined when the `metrics` option is off. */
  readonly metrics: Metrics | undefined;
  constructor(metrics = true) {
    this.metrics = metrics ? new Metrics() : undefined;
  }

  sessionsCreated = 0;
  /** Hibernation's wakes that rebuilt a server, and that failed (how many sleep now: Sessions.stats). */
  sessionWakes = 0;
  wakeFailures = 0;
  readonly sessionsEnded: Record<SessionEndReason, number> = {
    delete: 0,
    idle: 0,
    shutdown: 0,
    closed: 0,
    'failed-init': 0,
  };
  /** Refusals of new sessions because maxSessions was reached (503). */
  sessionCapRefusals = 0;
  responsesJson = 0;
  responsesSse = 0;
  /** Total milliseconds streams spent waiting for 'drain', and how many waits. */
  writeStallMs = 0;
  writeStalls = 0;
  coalesced = 0;
  /** Partial-output deltas merged into a queued frame (text kept, frames saved). */
  partialMerged = 0;
  overflowCloses = 0;
  replaysServed = 0;
  readonly replaysDeclined = { malformed: 0, foreign: 0, unknown: 0, evicted: 0 };
  keepalivesSent = 0;
  orphanAborts = 0;
  /** Related messages that had no stream to go to (json mode without a GET stream). */
  undeliverable = 0;
  readonly refusals = { origin: 0, host: 0, auth: 0 };
  /** Streams ended because their credential expired or was revoked. */
  authStreamEnds = 0;
  /** GETs that took over a stream's live connection; GETs refused (409) because it had just taken over. */
  streamsReplaced = 0;
  streamConflicts = 0;
  /** Event-store calls that rejected or threw, by operation (application-supplied stores only). */
  readonly storeErrors = { append: 0, replay: 0, endStream: 0, dropSession: 0 };
  /** Replays whose answer had a hole in it (a lost append): declined as `evicted`, never served. */
  storeGaps = 0;
  /** Messages written and bytes written to SSE streams. */
  eventsWritten = 0;
}
