/**
 * The handler's running counts, advanced on the hot path through `add` and read by
 * `handler.stats()` and the Prometheus exposition. No metrics library in the core.
 */
import { OpenTally, Tally } from '../../flow/tally.js';
import { Metrics } from './metrics.js';

/**
 * Why a session ended. `failed-init` counts initializations the SDK refused (or whose client left
 * before the answer): no session was registered for them. Auth ends streams, not sessions
 * (`authStreamEnds`); the session cap refuses new sessions (`sessionCapRefusals`).
 */
export type SessionEndReason = 'delete' | 'idle' | 'shutdown' | 'closed' | 'failed-init';
const END_REASONS: readonly SessionEndReason[] = ['delete', 'idle', 'shutdown', 'closed', 'failed-init'];

/** Why a resume (`Last-Event-ID`) was declined (docs/operations.md, `replays.declined`). */
export type ReplayDecline = 'malformed' | 'foreign' | 'unknown' | 'evicted';
const DECLINES: readonly ReplayDecline[] = ['malformed', 'foreign', 'unknown', 'evicted'];

/** What a request was refused for before it reached a session: its Origin, its Host, its credential. */
export type RefusalReason = 'origin' | 'host' | 'auth';
const REFUSALS: readonly RefusalReason[] = ['origin', 'host', 'auth'];

/** Distinct auth refusal reasons counted apart; more count as `other` (a metric's label set stays small). */
const AUTH_REASONS_MAX = 32;

/** The event-store operations whose failures are counted (application-supplied stores only). */
export type StoreOperation = 'append' | 'replay' | 'endStream' | 'dropSession';
const STORE_OPERATIONS: readonly StoreOperation[] = ['append', 'replay', 'endStream', 'dropSession'];

/** The endpoint's scalar counts (docs/operations.md documents each where stats() reports it). */
const COUNTS = [
  'sessionsCreated',
  /** Hibernation's wakes that rebuilt a server, and that failed (how many sleep now: Sessions.stats). */
  'sessionWakes',
  'wakeFailures',
  /** Refusals of new sessions because maxSessions was reached (503). */
  'sessionCapRefusals',
  'responsesJson',
  'responsesSse',
  /** Total milliseconds streams spent waiting for 'drain', and how many waits. */
  'writeStallMs',
  'writeStalls',
  'coalesced',
  /** Partial-output deltas merged into a queued frame (text kept, frames saved). */
  'partialMerged',
  'overflowCloses',
  'replaysServed',
  'keepalivesSent',
  'orphanAborts',
  /** Related messages that had no stream to go to (json mode without a GET stream). */
  'undeliverable',
  /** Streams ended because their credential expired or was revoked. */
  'authStreamEnds',
  /** GETs that took over a stream's live connection; GETs refused (409) because it had just taken over. */
  'streamsReplaced',
  'streamConflicts',
  /** Replays whose answer had a hole in it (a lost append): declined as `evicted`, never served. */
  'storeGaps',
  /** Messages written to SSE streams. */
  'eventsWritten',
] as const;
export type CountName = (typeof COUNTS)[number];

export class Counters extends Tally<CountName> {
  /** Per-method histograms; undefined when the `metrics` option is off. */
  readonly metrics: Metrics | undefined;
  readonly sessionsEnded = new Tally(END_REASONS);
  readonly replaysDeclined = new Tally(DECLINES);
  readonly refusals = new Tally(REFUSALS);
  /**
   * Auth refusals by their stable reason (`token-expired`, `token-dpop`, `dpop-nonce`, …, or what an
   * application's `authenticate` named): at most 32 reasons, then `other`.
   */
  readonly authRefusals = new OpenTally(AUTH_REASONS_MAX);
  /** Event-store calls that rejected or threw, by operation. */
  readonly storeErrors = new Tally(STORE_OPERATIONS);

  constructor(metrics = true) {
    super(COUNTS);
    this.metrics = metrics ? new Metrics() : undefined;
  }

  /** A request `authenticate` or `authorize` refused: in `refusals.auth`, and by its reason. */
  authRefused(reason: string): void {
    this.refusals.add('auth');
    this.authRefusals.add(String(reason).slice(0, 64));
  }
}
