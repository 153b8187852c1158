/**
 * The session registry of the session era (revisions up to 2025-11-25): ids, the `maxSessions` cap
 * with the slots initializations hold while under way, the per-client limits, the principal binding
 * checked on every lookup, the idle sweep, stateless mode's one-request sessions, and what happens
 * when a session ends (its slot, its client key, the cluster directory, the hooks and probes).
 * The only owner of the set of sessions: nothing else adds to it or removes from it.
 */
import { type LateInterval, lateInterval } from '../../flow/late-deadline.js';
import type { CoreContext } from '../context.js';
import { ClientLimits } from '../limits/client-limits.js';
import type { SessionEndReason } from '../observe/counters.js';
import { shortHash } from '../observe/probe.js';
import type { SessionsStats, StreamStats } from '../observe/stats.js';
import type { AuthResult } from '../options.js';
import { type Refusal, Refusals } from '../pipeline/refusal.js';
import type { RequestHead } from '../pipeline/sink.js';
import { checkVersionHeader } from '../pipeline/versions.js';
import type { McpServerLike } from '../sdk/server-like.js';
import type { Session, SessionDeps } from './session.js';
import { prepareLegacyTasks } from './task-hook.js';

/** What one walk over the session table counts (Sessions.census). */
export interface SessionCensus {
  get: number;
  asleep: number;
  perStream: StreamStats[];
}

export class Sessions {
  readonly core: CoreContext;
  readonly #ctx: CoreContext;
  readonly #sessions = new Map<string, Session>();
  /** Stateless mode's one-request sessions, while their request runs (close() waits for them too). */
  readonly #oneShots = new Set<Session>();
  /** Per-client session limits; undefined when turned off or stateless. */
  readonly clientLimits: ClientLimits | undefined;
  /** The client key each registered session counts against. */
  readonly #clientKeys = new Map<Session, string>();
  /** Initializations under way (count toward maxSessions so a burst cannot overshoot it). */
  #pendingInits = 0;
  /** What every session of this endpoint shares (one object, so a session holds one reference). */
  readonly deps: SessionDeps;
  #sweep: LateInterval | undefined;

  constructor(ctx: CoreContext) {
    this.#ctx = ctx;
    this.core = ctx;
    const options = ctx.options;
    this.clientLimits =
      options.clientLimits === undefined || options.stateless
        ? undefined
        : new ClientLimits(options.clientLimits);
    this.deps = {
      options,
      counters: ctx.counters,
      store: ctx.store,
      live: ctx.live,
      limits: ctx.limits,
      pacer: ctx.pacer,
      stream: {
        counters: ctx.counters,
        limits: ctx.limits,
        now: options.now,
        live: ctx.live,
        retryMs: options.retryMs,
        probe: ctx.operations?.probe(options.probe) ?? options.probe,
        pacer: ctx.pacer,
        streamAfterMs: options.streamAfterMs,
        streamGraceMs: options.streamGraceMs,
        orphanTimeoutMs: options.orphanTimeoutMs,
      },
      cluster: ctx.cluster,
      operations: ctx.operations,
      ended: (s, reason) => this.#ended(s, reason),
      changed: (event) => ctx.bus.publish(event),
      serverFor: (session) => this.serverFor(session),
    };
    if (!options.stateless) {
      // Hibernation is checked by the same sweep, at least twice per hibernateAfterMs (with 0, a
      // session sleeps when its last exchange is done; the sweep only catches what that missed).
      const after = options.hibernateAfterMs;
      const hibernation = after === undefined ? 30_000 : after === 0 ? 1_000 : after / 2;
      const period = Math.max(
        50,
        Math.min(30_000, Math.floor(options.sessionIdleMs / 4), Math.floor(hibernation)),
      );
      // After a stall of this process a request that came in time may not be read yet: the sweep
      // runs after the loop's next read, and the time it was late by is not the sessions' idleness
      // (flow/late-deadline.ts; docs/design.md, "A server's own stall is not blamed on its clients").
      this.#sweep = lateInterval((lateMs) => this.#sweepIdle(lateMs), period);
    }
  }

  /** A session's server from the application's `createServer`, with its tasks prepared (at initialize and at a wake). */
  serverFor(session: Session): McpServerLike {
    const server = this.#ctx.createServer({ sessionId: session.id, principal: session.principal });
    if (session.id !== undefined) prepareLegacyTasks(this.#ctx.options.tasks, session, server);
    return server;
  }

  /** Whether this instance holds the session (a cluster asks before forwarding). */
  has(id: string): boolean {
    return this.#sessions.has(id);
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** The registered sessions (for stats). */
  values(): IterableIterator<Session> {
    return this.#sessions.values();
  }

  /**
   * Finds the session a request names, enforcing the rules every non-initialize request shares:
   * 400 without an id, 404 for an unknown or ended one or another principal's (indistinguishable
   * on purpose), 400 for a bad MCP-Protocol-Version.
   */
  lookup(head: RequestHead, auth: AuthResult | undefined): Session | Refusal {
    const sid = head.header('mcp-session-id');
    if (sid === undefined || sid === '') return Refusals.missingSession();
    const session = sid.length <= 128 ? this.#sessions.get(sid) : undefined;
    if (session === undefined || session.ended || session.principal !== auth?.principal) {
      return Refusals.sessionNotFound();
    }
    const bad = checkVersionHeader(head.header('mcp-protocol-version'), session.version);
    if (bad !== undefined) return Refusals.badProtocolVersion(head.header('mcp-protocol-version') ?? '', bad);
    session.touch();
    return session;
  }

  /** Whether a new session may start: registered sessions and initializations under way, against maxSessions. */
  get slotFree(): boolean {
    return this.#sessions.size + this.#pendingInits < this.#ctx.options.maxSessions;
  }

  /**
   * Holds one session slot from here until the initialize is answered (registered or not), so a burst of
   * concurrent initializations cannot overshoot maxSessions. The returned release may be called more than once.
   */
  holdSlot(): () => void {
    this.#pendingInits++;
    let held = true;
    return () => {
      if (held) this.#pendingInits--;
      held = false;
    };
  }

  register(session: Session, clientKey?: string): void {
    if (session.id === undefined) return;
    this.#sessions.set(session.id, session);
    if (clientKey !== undefined) this.#clientKeys.set(session, clientKey);
    const { counters, options } = this.#ctx;
    counters.add('sessionsCreated');
    const info = { sessionId: session.id, principal: session.principal, protocolVersion: session.version };
    options.onSessionStart?.(info);
    const ev = {
      session: shortHash(session.id),
      principal: session.principal,
      protocolVersion: session.version,
    };
    options.probe?.sessionStart(ev);
    options.logger?.info('session.start', ev);
  }

  /** Stateless mode: a one-request session runs until `done` is called. */
  oneShot(session: Session): () => void {
    this.#oneShots.add(session);
    return () => {
      this.#oneShots.delete(session);
      session.end('closed');
    };
  }

  /** Requests in flight over every session. */
  inflightCount(): number {
    let n = 0;
    for (const s of this.#sessions.values()) n += s.inflight.size;
    for (const s of this.#oneShots) n += s.inflight.size;
    return n;
  }

  /** Ends every session (endpoint close); returns how many were registered. */
  endAll(answer: Refusal): number {
    const sessions = [...this.#sessions.values()];
    for (const s of [...sessions, ...this.#oneShots]) s.end('shutdown', answer);
    this.#sweep?.clear();
    return sessions.length;
  }

  /**
   * One walk over the sessions for what is counted when stats are read (a scrape), kept by nobody:
   * GET connections open now, sessions asleep (hibernation), and (when asked) every attached
   * connection's queue.
   */
  census(perStream: boolean): SessionCensus {
    let get = 0;
    let asleep = 0;
    const all: StreamStats[] = [];
    for (const s of this.#sessions.values()) {
      if (s.hasGetConnection) get++;
      if (s.asleep) asleep++;
      if (perStream) s.streamStats(all);
    }
    return { get, asleep, perStream: all };
  }

  /** `census`: this table's census(), taken once for the read (the endpoint's stats). */
  stats(census: SessionCensus): SessionsStats {
    const c = this.#ctx.counters;
    return {
      active: this.#sessions.size,
      created: c.get('sessionsCreated'),
      ended: c.sessionsEnded.read(),
      capRefusals: c.get('sessionCapRefusals'),
      hibernation: {
        asleep: census.asleep,
        wakes: c.get('sessionWakes'),
        wakeFailures: c.get('wakeFailures'),
      },
      clientLimitRefusals: {
        sessions: this.clientLimits?.refused.sessions ?? 0,
        rate: this.clientLimits?.refused.rate ?? 0,
      },
      clientsTracked: this.clientLimits?.tracked ?? 0,
    };
  }

  #ended(s: Session, reason: SessionEndReason): void {
    const { counters, cluster, options } = this.#ctx;
    if (reason === 'failed-init') {
      counters.sessionsEnded.add('failed-init');
      // The directory entry was written before the initialize was dispatched.
      if (s.id !== undefined) cluster?.sessionEnded(s.id);
    }
    if (s.id === undefined || this.#sessions.get(s.id) !== s) return;
    this.#sessions.delete(s.id);
    const key = this.#clientKeys.get(s);
    if (key !== undefined) {
      this.#clientKeys.delete(s);
      this.clientLimits?.release(key);
    }
    cluster?.sessionEnded(s.id);
    counters.sessionsEnded.add(reason);
    counters.metrics?.semconv.session(s.version, (options.now() - s.startedAt) / 1000);
    options.onSessionEnd?.({
      sessionId: s.id,
      principal: s.principal,
      protocolVersion: s.version,
      reason,
    });
    const ev = { session: shortHash(s.id), principal: s.principal, protocolVersion: s.version, reason };
    options.probe?.sessionEnd(ev);
    options.logger?.info('session.end', ev);
  }

  /** `stalledMs`: how late the sweep's timer fired, not counted as idleness (lateInterval). */
  #sweepIdle(stalledMs: number): void {
    const now = this.#ctx.options.now();
    const { sessionIdleMs: ttl, hibernateAfterMs } = this.#ctx.options;
    // No copy of the table per tick: a Map's iteration goes on past an entry deleted under it (end()).
    for (const s of this.#sessions.values()) {
      const idleFor = now - s.lastActive;
      if (!s.busy) {
        if (idleFor - stalledMs > ttl) {
          s.end('idle', Refusals.sessionNotFound());
          continue;
        }
        s.compact();
      }
      // A GET stream keeps a session alive, not its server: an idle listener hibernates too.
      if (hibernateAfterMs !== undefined && idleFor >= hibernateAfterMs) s.hibernate();
    }
    this.clientLimits?.sweep(now);
  }
}
