/**
 * The shape of `handler.stats()`: each owner reports its own part (the session registry its
 * sessions, the 2026-07-28 era its requests and listen streams, the live set its queues, the
 * counters the rest) and the endpoint puts them together. docs/operations.md documents every field;
 * core/observe/prometheus.ts renders them.
 */
import type { EventStoreStats } from '../../events/memory-event-store.js';
import type { SessionEndReason } from './counters.js';

export interface EndpointStats {
  sessions: SessionsStats;
  streams: {
    open: { post: number; get: number };
    /** GETs that took over a stream's live connection. */
    replaced: number;
    /** GETs refused with 409: the live connection had itself taken over another one moments ago. */
    conflicts: number;
  };
  responses: { json: number; sse: number };
  queue: { bytes: number; messages: number; maxStreamBytes: number };
  writeStall: { totalMs: number; count: number };
  eventsWritten: number;
  coalesced: number;
  /** Partial-output deltas merged into a queued frame while a socket was blocked (no text lost). */
  partialMerged: number;
  overflowCloses: number;
  replays: {
    served: number;
    declined: { malformed: number; foreign: number; unknown: number; evicted: number };
  };
  /** Failures of an application-supplied event store (always zero for the built-in one). */
  eventStore: {
    errors: { append: number; replay: number; endStream: number; dropSession: number };
    gaps: number;
  };
  replayBuffer: EventStoreStats | null;
  keepalivesSent: number;
  orphanAborts: number;
  undeliverable: number;
  refusals: { origin: number; host: number; auth: number };
  /** `refusals.auth` by the refusal's reason (`unauthorized` when `authenticate` returned null); 32 reasons at most, then `other`. */
  authRefusals: Record<string, number>;
  authStreamEnds: number;
  /** 2026-07-28 (stateless, per-request `_meta`) requests: served, in flight, refused, cancelled by a close. */
  modern: ModernStats;
  /** The task service's counters (option `tasks`); null without one. */
  tasks: TaskHookStats | null;

  /** With `stats({ perStream: true })`: every open SSE connection. */
  perStream?: StreamStats[];
}

export interface StreamStats {
  /** Short hash of the session id. */
  session: string;
  /** 0 is the standalone GET stream; others answer POSTs. */
  stream: number;
  kind: 'post' | 'get';
  queuedBytes: number;
  queuedMessages: number;
  writeStallMs: number;
  coalesced: number;
}

/** What a connection's writer tells about its queue (core/stream/sse-writer.ts). */
export interface QueueReading {
  readonly queuedBytes: number;
  readonly queuedMessages: number;
  readonly stallMs: number;
  readonly coalesced: number;
}

/** One attached connection's line of `stats({ perStream: true })`. */
export function queueStats(
  w: QueueReading,
  session: string,
  stream: number,
  kind: 'post' | 'get',
): StreamStats {
  return {
    session,
    stream,
    kind,
    queuedBytes: w.queuedBytes,
    queuedMessages: w.queuedMessages,
    writeStallMs: w.stallMs,
    coalesced: w.coalesced,
  };
}

export interface SessionsStats {
  active: number;
  created: number;
  ended: Record<SessionEndReason, number>;
  capRefusals: number;
  /** Hibernation (option `hibernateAfterMs`): sessions whose server is dropped now, wakes that rebuilt one, wakes that failed. */
  hibernation: { asleep: number; wakes: number; wakeFailures: number };
  /** initialize refused by the per-client limits: sessions held, initialize rate. */
  clientLimitRefusals: { sessions: number; rate: number };
  /** Clients in the per-client limits' table. */
  clientsTracked: number;
}

export interface ModernStats {
  requests: number;
  inflight: number;
  refusals: number;
  cancels: number;
  notifications: number;
  /** subscriptions/listen streams open now, opened in all, refused by the caps, and coalesced frames. */
  listenStreams: number;
  listensOpened: number;
  listenRefusals: number;
  listenCoalesced: number;
  /** Requests refused (429) by `clientLimits.maxConcurrentRequests` (also counted in `refusals`). */
  concurrencyRefusals: number;
  /** Concurrency slots held now (one per request in flight; zero once everything has ended). */
  slotsHeld: number;
  /** Clients (principals or addresses) holding at least one slot now. */
  clientsInflight: number;
}

/** What a task service reports for `stats().tasks` and the `sluice_task*` metrics. */
export interface TaskHookStats {
  /** Tasks stored (each answered with a CreateTaskResult), both eras. */
  created: number;
  /** Task rounds running on this instance now. */
  running: number;
  /** Creations refused with 429: the client already had `maxLivePerClient` unfinished tasks. */
  refusedLimit: number;
  /** Calls of `optional` tools that ended within `taskAfterMs`: answered as plain calls, never stored. */
  answeredDirectly: number;
  /** Calls whose task the store refused when `taskAfterMs` was up: served to their end as plain calls. */
  keptPlain: number;
}
