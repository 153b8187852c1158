/**
 * The MCP endpoint's state and lifecycle: the session registry (ids, cap, idle TTL, principal
 * binding), the shared keepalive and housekeeping timers, stats, and graceful close. The per-method
 * logic lives in post.ts, get.ts and delete.ts; the node:http binding calls into them.
 */
import type { EventStore } from '../events/event-store.js';
import { type EventStoreStats, MemoryEventStore } from '../events/memory-event-store.js';
import { TeeEventStore } from '../events/tee-event-store.js';
import type { ClusterHooks } from './cluster-hooks.js';
import type { McpServerLike, Session, SessionDeps } from './era-2025/session.js';
import { sharedServersOf } from './era-2026/shared-server.js';
import { ModernState } from './era-2026/state.js';
import { ClientLimits } from './limits/client-limits.js';
import { ConcurrencyLimit } from './limits/concurrency.js';
import { Counters, type SessionEndReason } from './observe/counters.js';
import { shortHash } from './observe/probe.js';
import type { AuthResult, ResolvedOptions, SessionContext } from './options.js';
import { type Refusal, Refusals } from './pipeline/refusal.js';
import type { RequestHead } from './pipeline/sink.js';
import { checkVersionHeader } from './pipeline/versions.js';
import { Pacer } from './stream/pacer.js';
import type { SseWriter, WriterLimits } from './stream/sse-writer.js';
import { guardStore } from './stream/store-guard.js';

export type CreateServer = (ctx: SessionContext) => McpServerLike;

export interface CloseReport {
  /** Sessions ended by the close. */
  sessions: number;
  /** Requests still running at the deadline, whose streams were cut (clients resume or retry). */
  cutRequests: number;
  /** Whether everything in flight finished before the deadline. */
  drained: boolean;
}

export class Endpoint {
  readonly options: ResolvedOptions;
  readonly createServer: CreateServer;
  readonly counters: Counters;
  readonly sessions = new Map<string, Session>();
  /** Stateless mode's one-request sessions, while their request runs (close() waits for them too). */
  readonly oneShots = new Set<Session>();
  /** 2026-07-28 requests in flight, the x-mcp-header cache and modern counters. */
  readonly modern: ModernState;
  readonly live = new Set<SseWriter>();
  store: EventStore;
  readonly limits: WriterLimits;
  readonly deps: SessionDeps;
  /** Per-client session limits; undefined when turned off or stateless. */
  readonly clientLimits: ClientLimits | undefined;
  /**
   * 2026-07-28 requests in flight per client (`clientLimits.maxConcurrentRequests`); undefined only
   * when clientLimits is false. That era is stateless whatever `stateless` says, so it applies there too.
   */
  readonly modernLimit: ConcurrencyLimit | undefined;
  /** The client key each registered session counts against. */
  readonly #clientKeys = new Map<Session, string>();
  /** Initializations under way (count toward maxSessions so a burst cannot overshoot it). */
  #pendingInits = 0;
  closing = false;
  closed = false;
  #keepalive: ReturnType<typeof setInterval> | undefined;
  #housekeeping: ReturnType<typeof setInterval> | undefined;
  readonly #ownStore: MemoryEventStore | undefined;

  /** Set when this instance is one of a cluster (src/cluster/). */
  readonly cluster: ClusterHooks | undefined;

  constructor(createServer: CreateServer, options: ResolvedOptions, cluster?: ClusterHooks) {
    this.options = options;
    this.createServer = createServer;
    this.cluster = cluster;
    this.modern = new ModernState(cluster?.changeBus);
    // A tool list change, from wherever it was published (a served server, handler.notify, another
    // instance of a cluster), makes the tools' x-mcp-header declarations stale.
    this.modern.bus.subscribe((event) => {
      if (event.kind === 'tools') this.modern.toolsChanged();
    });
    this.counters = new Counters(options.metrics);
    this.clientLimits =
      options.clientLimits === undefined || options.stateless
        ? undefined
        : new ClientLimits(options.clientLimits);
    this.modernLimit =
      options.clientLimits === undefined
        ? undefined
        : new ConcurrencyLimit(options.clientLimits.maxConcurrentRequests);
    if (options.eventStore === undefined) {
      this.#ownStore = new MemoryEventStore({
        limits: options.replay,
        ...options.replayBudget,
        now: options.now,
      });
      this.store = this.#ownStore;
    } else {
      // An application-supplied store may be networked: it may throw, reject or be slow.
      this.store = guardStore(options.eventStore, this.counters, options.logger);
    }
    if (cluster !== undefined) this.store = new TeeEventStore(this.store, cluster);
    this.limits = { highWaterMark: options.highWaterMark, maxQueueBytes: options.maxQueueBytes };
    this.deps = {
      options,
      counters: this.counters,
      store: this.store,
      live: this.live,
      limits: this.limits,
      pacer: new Pacer(options.pacingMs),
      cluster,
      ended: (s, reason) => this.#sessionEnded(s, reason),
      changed: (event) => this.modern.bus.publish(event),
    };
    if (options.keepaliveMs > 0) {
      // One timer for every stream: a stream silent for keepaliveMs gets a comment within a quarter
      // period more (docs/deploy.md: keepalive every 15–30 s, under the tightest proxy idle timeout).
      const period = Math.max(50, Math.floor(options.keepaliveMs / 4));
      this.#keepalive = setInterval(() => this.#keepaliveTick(), period);
      this.#keepalive.unref?.();
    }
    if (!options.stateless) {
      const period = Math.max(50, Math.min(30_000, Math.floor(options.sessionIdleMs / 4)));
      this.#housekeeping = setInterval(() => this.#sweepIdle(), period);
      this.#housekeeping.unref?.();
    }
  }

  /**
   * Finds the session a request names, enforcing the rules every non-initialize request shares:
   * 400 without an id, 404 for an unknown or ended one or another principal's (indistinguishable
   * on purpose), 400 for a bad MCP-Protocol-Version.
   */
  lookup(head: RequestHead, auth: AuthResult | undefined): Session | Refusal {
    const sid = head.header('mcp-session-id');
    if (sid === undefined || sid === '') return Refusals.missingSession();
    const session = sid.length <= 128 ? this.sessions.get(sid) : undefined;
    if (session === undefined || session.ended || session.principal !== auth?.principal) {
      return Refusals.sessionNotFound();
    }
    const bad = checkVersionHeader(head.header('mcp-protocol-version'), session.version);
    if (bad !== undefined) return Refusals.badProtocolVersion(head.header('mcp-protocol-version') ?? '', bad);
    session.touch();
    return session;
  }

  /** Whether a new session may start: registered sessions and initializations under way, against maxSessions. */
  get sessionSlotFree(): boolean {
    return this.sessions.size + this.#pendingInits < this.options.maxSessions;
  }

  /**
   * Holds one session slot from here until the initialize is answered (registered or not), so a burst of
   * concurrent initializations cannot overshoot maxSessions. The returned release may be called more than once.
   */
  holdSessionSlot(): () => void {
    this.#pendingInits++;
    let held = true;
    return () => {
      if (held) this.#pendingInits--;
      held = false;
    };
  }

  register(session: Session, clientKey?: string): void {
    if (session.id === undefined) return;
    this.sessions.set(session.id, session);
    if (clientKey !== undefined) this.#clientKeys.set(session, clientKey);
    this.counters.sessionsCreated++;
    const info = { sessionId: session.id, principal: session.principal, protocolVersion: session.version };
    this.options.onSessionStart?.(info);
    const ev = {
      session: shortHash(session.id),
      principal: session.principal,
      protocolVersion: session.version,
    };
    this.options.probe?.sessionStart(ev);
    this.options.logger?.info('session.start', ev);
  }

  stats(options?: { perStream?: boolean }): EndpointStats {
    let getStreams = 0;
    const perStream: StreamStats[] = [];
    for (const s of this.sessions.values()) {
      if (s.hasGetConnection) getStreams++;
      if (options?.perStream) {
        for (const st of s.attachedStreams()) {
          const w = st.writer;
          if (w === undefined) continue;
          perStream.push({
            session: s.sessionHash,
            stream: st.num,
            kind: st.kind,
            queuedBytes: w.queuedBytes,
            queuedMessages: w.queuedMessages,
            writeStallMs: w.stallMs,
            coalesced: w.coalesced,
          });
        }
      }
    }
    let queuedBytes = 0;
    let queuedMessages = 0;
    let maxQueuedBytes = 0;
    for (const w of this.live) {
      const b = w.queuedBytes;
      queuedBytes += b;
      queuedMessages += w.queuedMessages;
      if (b > maxQueuedBytes) maxQueuedBytes = b;
    }
    const postStreams = this.live.size - getStreams;
    const c = this.counters;
    const storeStats: EventStoreStats | undefined = this.#ownStore?.stats();
    return {
      sessions: {
        active: this.sessions.size,
        created: c.sessionsCreated,
        ended: { ...c.sessionsEnded },
        capRefusals: c.sessionCapRefusals,
        clientLimitRefusals: {
          sessions: this.clientLimits?.refused.sessions ?? 0,
          rate: this.clientLimits?.refused.rate ?? 0,
        },
        clientsTracked: this.clientLimits?.tracked ?? 0,
      },
      streams: {
        open: { post: postStreams, get: getStreams },
        replaced: c.streamsReplaced,
        conflicts: c.streamConflicts,
      },
      responses: { json: c.responsesJson, sse: c.responsesSse },
      queue: { bytes: queuedBytes, messages: queuedMessages, maxStreamBytes: maxQueuedBytes },
      writeStall: { totalMs: c.writeStallMs, count: c.writeStalls },
      eventsWritten: c.eventsWritten,
      coalesced: c.coalesced,
      partialMerged: c.partialMerged,
      overflowCloses: c.overflowCloses,
      replays: { served: c.replaysServed, declined: { ...c.replaysDeclined } },
      eventStore: { errors: { ...c.storeErrors }, gaps: c.storeGaps },
      replayBuffer: storeStats ?? null,
      keepalivesSent: c.keepalivesSent,
      orphanAborts: c.orphanAborts,
      undeliverable: c.undeliverable,
      refusals: { ...c.refusals },
      authStreamEnds: c.authStreamEnds,
      modern: {
        requests: this.modern.requests,
        inflight: this.modern.inflight.size,
        refusals: this.modern.refusals,
        cancels: this.modern.cancels,
        notifications: this.modern.notifications,
        listenStreams: this.modern.listens.size,
        listensOpened: this.modern.listensOpened,
        listenRefusals: this.modern.listenRefusals,
        listenCoalesced: this.modern.listenCoalesced,
        concurrencyRefusals: this.modernLimit?.refused ?? 0,
        slotsHeld: this.modernLimit?.held ?? 0,
        clientsInflight: this.modernLimit?.keys ?? 0,
      },
      ...(options?.perStream ? { perStream } : {}),
    };
  }

  /**
   * Graceful close: refuse new sessions, let in-flight requests finish until graceMs, then end
   * every session; open streams get a `retry:` hint after their last event id so clients resume
   * against the next instance.
   */
  async close(graceMs = 0): Promise<CloseReport> {
    if (this.closed) return { sessions: 0, cutRequests: 0, drained: true };
    this.closing = true;
    // Listen streams never drain by themselves: end them first, each with its listen result.
    for (const l of [...this.modern.listens]) l.end();
    const deadline = this.options.now() + graceMs;
    while (this.options.now() < deadline && this.#inflightCount() > 0) {
      await new Promise((r) => setTimeout(r, Math.min(50, Math.max(1, deadline - this.options.now()))));
    }
    const cutRequests = this.#inflightCount();
    const sessions = [...this.sessions.values()];
    for (const s of [...sessions, ...this.oneShots]) s.end('shutdown', Refusals.requestCut());
    for (const call of [...this.modern.inflight]) call.abandon();
    await sharedServersOf(this)?.close();
    this.closed = true;
    if (this.#keepalive !== undefined) clearInterval(this.#keepalive);
    if (this.#housekeeping !== undefined) clearInterval(this.#housekeeping);
    this.#ownStore?.close();
    return { sessions: sessions.length, cutRequests, drained: cutRequests === 0 };
  }

  #inflightCount(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.inflight.size;
    for (const s of this.oneShots) n += s.inflight.size;
    return n + this.modern.inflight.size;
  }

  #sessionEnded(s: Session, reason: SessionEndReason): void {
    if (reason === 'failed-init') {
      this.counters.sessionsEnded['failed-init']++;
      // The directory entry was written before the initialize was dispatched.
      if (s.id !== undefined) this.cluster?.sessionEnded(s.id);
    }
    if (s.id === undefined || this.sessions.get(s.id) !== s) return;
    this.sessions.delete(s.id);
    const key = this.#clientKeys.get(s);
    if (key !== undefined) {
      this.#clientKeys.delete(s);
      this.clientLimits?.release(key);
    }
    this.cluster?.sessionEnded(s.id);
    this.counters.sessionsEnded[reason]++;
    this.options.onSessionEnd?.({
      sessionId: s.id,
      principal: s.principal,
      protocolVersion: s.version,
      reason,
    });
    const ev = { session: shortHash(s.id), principal: s.principal, protocolVersion: s.version, reason };
    this.options.probe?.sessionEnd(ev);
    this.options.logger?.info('session.end', ev);
  }

  #keepaliveTick(): void {
    const now = this.options.now();
    const idle = this.options.keepaliveMs;
    for (const w of this.live) if (w.keepalive(now, idle)) this.counters.keepalivesSent++;
  }

  #sweepIdle(): void {
    const now = this.options.now();
    const ttl = this.options.sessionIdleMs;
    for (const s of [...this.sessions.values()]) {
      if (s.busy) continue;
      if (now - s.lastActive > ttl) s.end('idle', Refusals.sessionNotFound());
      else s.compact();
    }
    this.clientLimits?.sweep(now);
  }
}

export interface EndpointStats {
  sessions: {
    active: number;
    created: number;
    ended: Record<SessionEndReason, number>;
    capRefusals: number;
    /** initialize refused by the per-client limits: sessions held, initialize rate. */
    clientLimitRefusals: { sessions: number; rate: number };
    /** Clients in the per-client limits' table. */
    clientsTracked: number;
  };
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
  authStreamEnds: number;
  /** 2026-07-28 (stateless, per-request `_meta`) requests: served, in flight, refused, cancelled by a close. */
  modern: {
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
  };
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
