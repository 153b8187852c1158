/**
 * One instance's membership of a Sluice cluster on Redis: `redisCluster({ url })` in the handler's
 * options (or `sluice serve --redis URL`). It owns the Redis link, the lease, the directory entries
 * of the sessions this instance owns, their frame copies, and the routing stage that forwards
 * requests for sessions owned elsewhere (see docs/scale-out.md).
 *
 * The routing stage runs after Host, Origin and authentication, at the handler's dispatch. Its
 * fast path (a request for a session this instance holds, or with no session id) is synchronous and
 * touches no Redis.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClusterHooks, SessionStart } from '../core/cluster-hooks.js';
import { Histogram } from '../core/observe/histogram.js';
import { HopTracer } from '../core/observe/hop-trace.js';
import type { TracingOptions } from '../core/observe/operations.js';
import type { Logger } from '../core/options.js';
import type { RouteInput as CoreRouteInput } from '../core/pipeline/pipeline.js';
import { type Refusal, Refusals, sendRefusal } from '../core/pipeline/refusal.js';
import { InvalidOptionError } from '../errors.js';
import { boundedWait } from '../flow/bounded-wait.js';
import type { RingLimits } from '../flow/ring-buffer.js';
import { type BusStats, RedisChangeBus } from './change-bus.js';
import { Directory, type DirectoryEntry, principalHash } from './directory.js';
import { DirectoryCache } from './directory-cache.js';
import { FORWARD_HEADER, signForward, verifyForward } from './forward-auth.js';
import { Forwarder } from './forwarder.js';
import { keys } from './keys.js';
import { Lease, newIncarnation } from './lease.js';
import { connectTopology } from './node-redis-ha.js';
import { resumeFromCopy } from './orphan-resume.js';
import { MeasuredLink, type RedisLink } from './redis-link.js';
import { ReplayGuard } from './replay-guard.js';
import { EventReplica, emptyReplicaStats } from './replica.js';
import { checkGivenSecret, provisionSecret } from './secret.js';
import { type RedisTopology, type TopologyOptions, topologyOf } from './topology.js';

/**
 * Exactly one of `url` (one Redis), `sentinel` (a Sentinel-watched master), `cluster` (a Redis
 * Cluster) or `link` (your own client), see topology.ts.
 */
export interface RedisClusterOptions extends TopologyOptions {
  /** Your own Redis client behind the RedisLink seam (instead of `url`, `sentinel` or `cluster`). */
  link?: RedisLink;
  /** The URL of this instance's MCP endpoint as its peers reach it. @defaultValue the bound address (serve()) */
  advertise?: string;
  /** HMAC key of the hop between instances. @defaultValue $SLUICE_CLUSTER_SECRET, else one shared through Redis */
  secret?: string;
  /** Owner liveness lease. @defaultValue 10000 */
  leaseMs?: number;
  /** How long a non-owner trusts a directory entry it looked up. @defaultValue 30000 */
  directoryCacheMs?: number;
  /** Deadline to connect to a peer. @defaultValue 2000 */
  peerConnectTimeoutMs?: number;
}

/** What the cluster needs from the endpoint it serves. */
export interface ClusterEndpoint {
  hasSession(id: string): boolean;
  readonly options: {
    readonly sessionIdleMs: number;
    readonly replay: RingLimits;
    readonly replayBudget: { maxTotalBytes: number };
    readonly logger: Logger | undefined;
    readonly tracing?: TracingOptions | undefined;
  };
}

/** The pipeline's routing input, with the Node request and response the hop relays onto. */
export interface RouteInput extends CoreRouteInput {
  req: IncomingMessage;
  res: ServerResponse;
}

export interface ClusterStats {
  incarnation: string;
  ready: boolean;
  lease: { state: string; reRegistrations: number };
  forwarded: {
    out: number;
    in: number;
    failed: number;
    refused: number;
    /** Refused because the signature had been used already (counted in `refused` too). */
    replayed: number;
    /** Answered 503: too old to tell from a replay once the replay guard had overflowed. */
    crowded: number;
    ownerLost: number;
  };
  directory: { hits: number; misses: number; errors: number; cached: number };
  redis: { commands: number; errors: number; healthy: boolean };
  replica: EventReplica['stats'];
  bus: BusStats;
}

const FORWARD_BOUNDS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

export class RedisCluster {
  readonly incarnation = newIncarnation();
  readonly #o: RedisClusterOptions;
  readonly #topology: RedisTopology | undefined;
  #link: MeasuredLink | undefined;
  #lease: Lease | undefined;
  #directory: Directory | undefined;
  #replica: EventReplica | undefined;
  #secret: string | undefined;
  /** The key comes from Redis (none was given): decided once, in the constructor. */
  readonly #secretShared: boolean;
  #address: string | undefined;
  #ep: ClusterEndpoint | undefined;
  #starting: Promise<void> | undefined;
  #housekeeping: ReturnType<typeof setInterval> | undefined;
  #stopped = false;
  /** What this instance wrote for each session it owns (re-written after a Redis restart). */
  readonly #owned = new Map<string, DirectoryEntry>();
  readonly #cache = new DirectoryCache(10_000, 30_000);
  readonly #forwarder: Forwarder;
  /** Hop signatures accepted here, each refused a second time (replay-guard.ts). */
  readonly #replays = new ReplayGuard();
  /** Trace context (and span) of each hop; made on the first forward, once the endpoint is attached. */
  #hops: HopTracer | undefined;
  readonly forwardLatency = new Histogram(FORWARD_BOUNDS_S);
  /** Change events for listen streams, shared with every instance (change-bus.ts). */
  readonly bus: RedisChangeBus = new RedisChangeBus(this.incarnation);
  readonly counters = {
    forwardedOut: 0,
    forwardedIn: 0,
    forwardFailed: 0,
    forwardRefused: 0,
    directoryHits: 0,
    directoryMisses: 0,
    directoryErrors: 0,
    ownerLostResumes: 0,
  };

  constructor(o: RedisClusterOptions) {
    const given = [o.url, o.sentinel, o.cluster, o.link].filter((x) => x !== undefined).length;
    if (given !== 1) {
      throw new InvalidOptionError(
        'redisCluster: give exactly one of { url }, { sentinel }, { cluster } or { link }',
      );
    }
    this.#topology = topologyOf(o);
    const envLease = RedisCluster.leaseFromEnv();
    if (o.leaseMs === undefined && envLease !== undefined) o = { ...o, leaseMs: envLease };
    if (o.leaseMs !== undefined && !(Number.isInteger(o.leaseMs) && o.leaseMs >= 300)) {
      throw new InvalidOptionError('redisCluster: leaseMs must be an integer >= 300');
    }
    if (o.advertise !== undefined) checkAdvertise(o.advertise);
    const secret = o.secret ?? process.env['SLUICE_CLUSTER_SECRET'];
    this.#secretShared = secret === undefined || secret === '';
    if (!this.#secretShared && secret !== undefined) this.#secret = checkGivenSecret(secret);
    this.#o = o;
    this.#forwarder = new Forwarder({ connectTimeoutMs: o.peerConnectTimeoutMs ?? 2_000 });
    if (o.directoryCacheMs !== undefined) this.#cache = new DirectoryCache(10_000, o.directoryCacheMs);
  }

  /** Whether an advertise URL was given (then the handler joins by itself). */
  get advertised(): boolean {
    return this.#o.advertise !== undefined;
  }

  get leaseMs(): number {
    return this.#o.leaseMs ?? 10_000;
  }

  /** The lease from SLUICE_CLUSTER_LEASE_MS when no option gave one. */
  static leaseFromEnv(): number | undefined {
    const v = process.env['SLUICE_CLUSTER_LEASE_MS'];
    return v === undefined || v === '' ? undefined : Number(v);
  }

  get ready(): boolean {
    return this.#lease?.state === 'held' || this.#lease?.state === 'refresh-failing';
  }

  /** Binds the cluster to the endpoint it serves; returns the hooks the core calls. */
  attach(ep: ClusterEndpoint): ClusterHooks {
    if (this.#ep !== undefined) throw new InvalidOptionError('redisCluster: one cluster object per handler');
    this.#ep = ep;
    return {
      sessionStarting: (s) => this.#sessionStarting(s),
      sessionVersion: (id, v) => this.#sessionVersion(id, v),
      sessionEnded: (id) => this.#sessionEnded(id),
      replicate: (id, n, seq, frame) => this.#replica?.append(id, n, seq, frame),
      streamRequests: (id, n, ids) => this.#replica?.describe(id, n, ids),
      streamEnded: (id, n, graceMs) => this.#replica?.endStream(id, n, graceMs),
      changeBus: this.bus,
    };
  }

  /**
   * Joins: connects to Redis, takes the lease, gets the shared secret. `boundUrl` is used when no
   * `advertise` was given. Idempotent. Rejects when Redis cannot be reached (the caller may retry).
   */
  start(boundUrl?: string): Promise<void> {
    this.#starting ??= this.#start(boundUrl).catch((error: unknown) => {
      this.#starting = undefined;
      throw error;
    });
    return this.#starting;
  }

  async #start(boundUrl: string | undefined): Promise<void> {
    const ep = this.#ep;
    if (ep === undefined) throw new InvalidOptionError('redisCluster: attach() it to a handler first');
    const address = this.#o.advertise ?? boundUrl;
    if (address === undefined)
      throw new InvalidOptionError('redisCluster: no advertise URL and no bound address');
    checkAdvertise(address);
    this.#address = address;
    if (this.#link === undefined) {
      const log = ep.options.logger;
      const raw =
        this.#o.link ??
        (await connectTopology(this.#topology ?? { kind: 'single', url: '' }, {
          onError: (e) => log?.warn('cluster.redis_error', { error: e.message }),
          // The promoted replica may miss the last writes (asynchronous replication): write ours again.
          onFailover: () => void this.#reRegister(true),
        }));
      this.#link = new MeasuredLink(raw);
      this.#directory = new Directory(this.#link, ep.options.sessionIdleMs + 2 * this.#housekeepingMs());
      this.#replica = new EventReplica(
        this.#link,
        { ...ep.options.replay, budgetBytes: ep.options.replayBudget.maxTotalBytes },
        { onError: (e) => log?.warn('cluster.replica_error', { error: String(e) }) },
      );
    }
    const link = this.#link;
    this.#secret ??= await provisionSecret(link);
    // Subscribed before the lease is taken, so a listen stream opened once this instance serves hears
    // every change published after that. Bounded: a subscriber slow to connect goes on in the
    // background (and housekeeping retries a failed one).
    await boundedWait(this.bus.start(link, ep.options.logger), 2_000);
    this.#lease = new Lease(link, {
      incarnation: this.incarnation,
      address,
      leaseMs: this.leaseMs,
      onReRegister: () => void this.#reRegister(),
      onRefreshError: (e) => ep.options.logger?.warn('cluster.lease_refresh_failed', { error: String(e) }),
    });
    await this.#lease.start();
    await this.#directory?.markRun(Date.now());
    this.#housekeeping = setInterval(() => void this.#housekeep(), this.#housekeepingMs());
    this.#housekeeping.unref?.();
  }

  /** Leaves the cluster: gives the lease up (peers answer 404 for this instance's sessions at once). */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.bus.stop();
    if (this.#housekeeping !== undefined) clearInterval(this.#housekeeping);
    await this.#replica?.flush();
    await this.#lease?.stop();
    this.#forwarder.close();
    await this.#link?.close().catch(() => undefined);
  }

  /**
   * The routing stage. 'local': serve here (this instance owns the session, or the request names
   * none, or it was forwarded here by a peer and verified). Otherwise the request was answered
   * (forwarded and relayed, or refused) once the promise resolves.
   */
  route(r: RouteInput): 'local' | 'handled' | Promise<'local' | 'handled'> {
    const fwd = r.view.headers[FORWARD_HEADER];
    if (fwd === undefined) {
      const sid = r.sessionId;
      if (sid === undefined || sid === '' || sid.length > 128 || this.#ep?.hasSession(sid) === true)
        return 'local';
      return this.#forward(r, sid);
    }
    return this.#acceptForwarded(r, Array.isArray(fwd) ? (fwd[0] ?? '') : fwd);
  }

  /** How many other instances hold a lease now (what `sluice serve --redis` prints once joined). */
  async peersSeen(): Promise<number | undefined> {
    return this.#lease?.others();
  }

  stats(): ClusterStats {
    const c = this.counters;
    return {
      incarnation: this.incarnation,
      ready: this.ready,
      lease: { state: this.#lease?.state ?? 'lapsed', reRegistrations: this.#lease?.reRegistrations ?? 0 },
      forwarded: {
        out: c.forwardedOut,
        in: c.forwardedIn,
        failed: c.forwardFailed,
        refused: c.forwardRefused,
        replayed: this.#replays.replayed,
        crowded: this.#replays.crowded,
        ownerLost: c.ownerLostResumes,
      },
      directory: {
        hits: c.directoryHits,
        misses: c.directoryMisses,
        errors: c.directoryErrors,
        cached: this.#cache.size,
      },
      redis: {
        commands: this.#link?.commands ?? 0,
        errors: this.#link?.errors ?? 0,
        healthy: this.#link?.healthy ?? false,
      },
      replica: this.#replica?.stats ?? emptyReplicaStats(),
      bus: this.bus.stats(),
    };
  }

  /** Replica writes queued so far reach Redis (tests, shutdown). */
  async flush(): Promise<void> {
    await this.#replica?.flush();
  }

  /** The Redis round-trip histogram (milliseconds), for the Prometheus exposition. */
  get redisRtt(): Histogram | undefined {
    return this.#link?.rtt;
  }

  // ---- owner side -------------------------------------------------------------------------------

  async #sessionStarting(s: SessionStart): Promise<void> {
    const dir = this.#directory;
    if (dir === undefined || !this.ready || this.#address === undefined) throw new Error('cluster not ready');
    const e: DirectoryEntry = {
      owner: this.incarnation,
      address: this.#address,
      epoch: 1,
      principal: principalHash(s.principal),
      tag: s.tag,
      version: '',
      init: s.init,
    };
    await dir.register(s.id, e);
    this.#owned.set(s.id, e);
  }

  #sessionVersion(id: string, version: string): void {
    const e = this.#owned.get(id);
    if (e === undefined) return;
    e.version = version;
    this.#fire(['HSET', keys.session(id), 'v', version]);
  }

  #sessionEnded(id: string): void {
    this.#replica?.dropSession(id);
    if (!this.#owned.delete(id)) return;
    if (this.#directory !== undefined) this.#directory.remove(id).catch(() => undefined);
  }

  #housekeepingMs(): number {
    const idle = this.#ep?.options.sessionIdleMs ?? 600_000;
    return Math.max(100, Math.min(30_000, Math.floor(idle / 4)));
  }

  async #housekeep(): Promise<void> {
    this.#replica?.sweep();
    void this.bus.retry();
    const dir = this.#directory;
    if (dir === undefined || this.#owned.size === 0) return;
    try {
      const missing = await dir.touch(this.#owned.keys());
      // Entries that vanished while their session lives here (a Redis restart between lease
      // refreshes): write them again.
      for (const sid of missing) {
        const e = this.#owned.get(sid);
        if (e !== undefined) await dir.register(sid, e);
      }
    } catch {
      // Redis unreachable: the entries' TTL outlasts a few missed refreshes; the lease refresh logs it.
    }
  }

  /** `failover`: the data may be missing some writes, not all: restart the run marker first. */
  async #reRegister(failover = false): Promise<void> {
    const dir = this.#directory;
    const link = this.#link;
    if (dir === undefined || link === undefined) return;
    this.#ep?.options.logger?.warn('cluster.reregister', { sessions: this.#owned.size, failover });
    try {
      // A peer's miss for a session whose entry was lost answers 503 until its owner wrote it again.
      // Every instance learns of the new master within a lease (its refresh fails over to it), so
      // misses stay 503 for a lease from now rather than half of one as after a restart.
      if (failover) await dir.markRun(Date.now() + this.leaseMs / 2, true);
      // Re-offer our key, and adopt whatever Redis holds: an instance that started while Redis was
      // empty may have put its own there first, and every instance must use the one in Redis.
      if (this.#secretShared) this.#secret = await provisionSecret(link, this.#secret);
      await Promise.all([...this.#owned].map(([sid, e]) => dir.register(sid, e)));
      await dir.markRun(Date.now());
    } catch (error) {
      this.#ep?.options.logger?.warn('cluster.reregister_failed', { error: String(error) });
    }
  }

  #acceptForwarded(r: RouteInput, header: string): 'local' | 'handled' {
    const sink = r.sink;
    const secret = this.#secret;
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
      this.counters.forwardRefused++;
      sendRefusal(sink, Refusals.forwardForbidden(), r.headers);
      return 'handled';
    }
    if (v.to !== this.incarnation) {
      // Meant for another incarnation (this address was restarted): never forwarded a second time.
      this.counters.forwardRefused++;
      sendRefusal(sink, Refusals.misdirected(), r.headers);
      return 'handled';
    }
    // Checked after `to`: a signature for this incarnation can only have been used in this process.
    const seen = this.#replays.admit(v.from, v.ts, v.nonce);
    if (seen === 'replayed') {
      this.counters.forwardRefused++;
      sendRefusal(sink, Refusals.forwardForbidden(), r.headers);
      return 'handled';
    }
    if (seen === 'crowded') {
      sendRefusal(sink, Refusals.ownerUnavailable(), r.headers);
      return 'handled';
    }
    this.counters.forwardedIn++;
    return 'local';
  }

  // ---- non-owner side ---------------------------------------------------------------------------

  async #forward(r: RouteInput, sid: string): Promise<'local' | 'handled'> {
    const sink = r.sink;
    let entry = this.#cache.get(sid);
    if (entry !== undefined) this.counters.directoryHits++;
    else {
      const dir = this.#directory;
      if (dir === undefined) {
        sendRefusal(sink, Refusals.clusterUnavailable(), r.headers);
        return 'handled';
      }
      let runSince: number | undefined;
      try {
        entry = await dir.lookup(sid);
        // Only a miss needs to know when Redis last lost its data (below).
        if (entry === undefined) runSince = await dir.runSince();
      } catch {
        // Never 404 because Redis failed: that would send every client into re-initialization at once.
        this.counters.directoryErrors++;
        sendRefusal(sink, Refusals.clusterUnavailable(), r.headers);
        return 'handled';
      }
      if (entry === undefined) {
        this.counters.directoryMisses++;
        if (runSince === undefined || Date.now() - runSince < this.leaseMs / 2) {
          // Redis lost its data moments ago and the owners are re-registering (each does within a
          // third of the lease): a miss now proves nothing. 503, never a 404 storm.
          void this.#lease?.refresh();
          sendRefusal(sink, Refusals.clusterUnavailable(), r.headers);
          return 'handled';
        }
        sendRefusal(sink, Refusals.sessionNotFound(), r.headers);
        return 'handled';
      }
      this.#cache.set(sid, entry);
    }
    // Someone else's session, or one this instance owned and has ended: 404 here, no hop.
    if (entry.principal !== principalHash(r.principal) || entry.owner === this.incarnation) {
      sendRefusal(sink, Refusals.sessionNotFound(), r.headers);
      return 'handled';
    }
    const secret = this.#secret;
    if (secret === undefined) {
      sendRefusal(sink, Refusals.clusterUnavailable(), r.headers);
      return 'handled';
    }
    const lastEventId = r.view.headers['last-event-id'];
    const signature = signForward(secret, {
      method: r.method,
      sessionId: sid,
      from: this.incarnation,
      to: entry.owner,
      lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
      body: r.body,
    });
    const t0 = performance.now();
    this.counters.forwardedOut++;
    this.#hops ??= new HopTracer(this.#ep?.options.tracing);
    const hop = this.#hops.begin((n) => r.view.header(n), entry.address, r.method);
    const outcome = await this.#forwarder.forward(
      {
        target: entry.address,
        method: r.method,
        headers: r.view.headers,
        body: r.body,
        extra: { ...hop.headers, [FORWARD_HEADER]: signature },
        intercept: (status) => status === 421,
      },
      r.req,
      r.res,
    );
    hop.end(
      outcome.kind === 'answered' ? outcome.status : undefined,
      outcome.kind === 'unreachable' ? outcome.error : undefined,
    );
    if (outcome.kind === 'answered' && outcome.status !== 421) {
      this.forwardLatency.observe((performance.now() - t0) / 1000);
      if (outcome.status === 404) this.#cache.delete(sid);
      return 'handled';
    }
    if (outcome.kind === 'client-gone') return 'handled';
    // The owner could not be reached, or something else now answers at its address (421).
    this.counters.forwardFailed++;
    this.#cache.delete(sid);
    const left = outcome.kind === 'answered' ? 0 : await this.#lease?.remainingMs(entry.owner);
    const alive = left === undefined ? undefined : left > 0;
    const cursor = r.view.headers['last-event-id'];
    if (r.method === 'GET' && typeof cursor === 'string' && this.#replica !== undefined) {
      // A finished stream (or, once the owner is known dead, an unfinished one) resumes from the copy.
      const served = await resumeFromCopy(this.#replica, sink, r.headers, sid, entry.tag, cursor, alive);
      if (served === 'owner-lost') this.counters.ownerLostResumes++;
      if (served !== 'not-here') return 'handled';
    }
    // Lease still valid (or Redis cannot tell): the owner may be back in a moment — 503. Lapsed: 404,
    // and the client re-initializes on a live instance.
    if (alive === false) sendRefusal(sink, Refusals.sessionNotFound(), r.headers);
    else {
      // A reset on a pooled socket right after a kill -9 is not a refusal yet the process is gone:
      // a fresh connect tells (no request is sent again), so Retry-After can name the lease's end.
      const gone =
        outcome.kind === 'unreachable' &&
        (outcome.refused || (await this.#forwarder.refusesConnections(entry.address)));
      sendRefusal(sink, ownerUnavailableFor(gone, left), r.headers);
    }
    return 'handled';
  }

  #fire(args: string[]): void {
    this.#link?.send(args).catch(() => undefined);
  }
}

/**
 * 503 for an owner whose lease holds. When nothing listens at its address (connection refused) the
 * process there is gone or not yet serving, and the answer that settles the request (404, then a
 * re-initialization) comes when the lease lapses: `Retry-After` says when, so a client's single
 * retry of a 503 (RFC 9110 §10.2.3) lands after it instead of 1 s later on the same 503. Any other
 * failure (a timeout, a reset while the address still accepts) may be a moment's trouble of a live owner: 1 s.
 */
function ownerUnavailableFor(gone: boolean, leftMs: number | undefined): Refusal {
  const r = Refusals.ownerUnavailable();
  if (!gone || leftMs === undefined || !Number.isFinite(leftMs)) return r;
  return { ...r, headers: { ...r.headers, 'retry-after': String(Math.max(1, Math.ceil(leftMs / 1000))) } };
}

function checkAdvertise(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InvalidOptionError(`redisCluster: advertise must be an absolute http:// URL, got '${url}'`);
  }
  if (u.protocol !== 'http:') {
    throw new InvalidOptionError(`redisCluster: advertise must be an http:// URL (peer hop), got '${url}'`);
  }
}

/** `createMcpHandler({ ..., cluster: redisCluster({ url: 'redis://…' }) })` */
export function redisCluster(o: RedisClusterOptions): RedisCluster {
  return new RedisCluster(o);
}
