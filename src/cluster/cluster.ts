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
import type { ClusterHooks } from '../core/cluster-hooks.js';
import { Histogram } from '../core/observe/histogram.js';
import { HopTracer } from '../core/observe/hop-trace.js';
import { InvalidOptionError } from '../errors.js';
import { boundedWait } from '../flow/bounded-wait.js';
import { acceptForwarded } from './accept-forwarded.js';
import { RedisChangeBus } from './change-bus.js';
import { type ClusterStats, checkAdvertise, type RedisClusterOptions } from './cluster-options.js';
import { DEFAULT_COMMAND_DEADLINE_MS, withDeadlines } from './command-deadlines.js';
import { Directory } from './directory.js';
import { DirectoryCache } from './directory-cache.js';
import { FORWARD_HEADER } from './forward-auth.js';
import { type ForwardContext, forwardToOwner } from './forward-path.js';
import { Forwarder } from './forwarder.js';
import { Lease, newIncarnation } from './lease.js';
import { connectTopology } from './node-redis-ha.js';
import { OwnedSessions } from './owned-sessions.js';
import { MeasuredLink, type RedisLink } from './redis-link.js';
import { ReplayGuard } from './replay-guard.js';
import { EventReplica, emptyReplicaStats } from './replica.js';
import { type ClusterEndpoint, newCounters, type RouteInput } from './route-input.js';
import { checkGivenSecret, DerivedKeys, provisionSecret } from './secret.js';
import { type RedisTopology, topologyOf } from './topology.js';

export type { ClusterStats, RedisClusterOptions } from './cluster-options.js';
export type { ClusterEndpoint, RouteInput } from './route-input.js';

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
  readonly #derived = new DerivedKeys();
  #address: string | undefined;
  #ep: ClusterEndpoint | undefined;
  #starting: Promise<void> | undefined;
  #housekeeping: ReturnType<typeof setInterval> | undefined;
  #stopped = false;
  readonly #owned: OwnedSessions;
  readonly #cache: DirectoryCache;
  readonly #forwarder: Forwarder;
  /** Hop signatures accepted here, each refused a second time (replay-guard.ts). */
  readonly #replays = new ReplayGuard();
  /** Trace context (and span) of each hop; made on the first forward, once the endpoint is attached. */
  #hops: HopTracer | undefined;
  readonly forwardLatency = new Histogram(FORWARD_BOUNDS_S);
  /** Change events for listen streams, shared with every instance (change-bus.ts). */
  readonly bus: RedisChangeBus = new RedisChangeBus(this.incarnation);
  readonly #counters = newCounters();
  /** Told after this cluster's own failover step (the task store's rewrite, shared-link.ts). */
  readonly #failoverListeners = new Set<() => void>();
  /** The forward path's view of this cluster (forward-path.ts). */
  readonly #forwardContext: ForwardContext;

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
    this.#forwarder = new Forwarder({
      connectTimeoutMs: o.peerConnectTimeoutMs ?? 2_000,
      // A hop not finished after a third of the lease reads its owner's lease, and ends once it has
      // lapsed (and the owner answers no probe): a frozen owner sends no RST (docs/scale-out.md,
      // "Failure semantics").
      leaseWatch: {
        everyMs: Math.max(100, Math.floor(this.leaseMs / 3)),
        lapsed: async (owner) => (await this.#lease?.remainingMs(owner)) === 0,
      },
    });
    this.#cache = new DirectoryCache(10_000, o.directoryCacheMs ?? 30_000);
    // Live views (getters): the link, directory, lease, replica and key come when the cluster joins.
    const self = this;
    this.#owned = new OwnedSessions({
      incarnation: this.incarnation,
      get leaseMs() {
        return self.leaseMs;
      },
      get address() {
        return self.#address;
      },
      get ready() {
        return self.ready;
      },
      get directory() {
        return self.#directory;
      },
      get link() {
        return self.#link;
      },
      get replica() {
        return self.#replica;
      },
      get lease() {
        return self.#lease;
      },
      get logger() {
        return self.#ep?.options.logger;
      },
      async reOfferSecret() {
        const link = self.#link;
        if (self.#secretShared && link !== undefined)
          self.#secret = await provisionSecret(link, self.#secret);
      },
    });
    this.#forwardContext = {
      incarnation: this.incarnation,
      get leaseMs() {
        return self.leaseMs;
      },
      get directory() {
        return self.#directory;
      },
      get lease() {
        return self.#lease;
      },
      get replica() {
        return self.#replica;
      },
      get secret() {
        return self.#secret;
      },
      get cache() {
        return self.#cache;
      },
      forwarder: this.#forwarder,
      counters: this.#counters,
      forwardLatency: this.forwardLatency,
      hops: () => {
        this.#hops ??= new HopTracer(this.#ep?.options.tracing);
        return this.#hops;
      },
    };
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

  /**
   * The cluster's Redis link once it has joined (undefined before): to share its connections, as
   * `sharedLinkOf` does for a task store (cluster/shared-link.ts). The cluster closes it when it stops.
   */
  get link(): RedisLink | undefined {
    return this.#link;
  }

  /**
   * Whether the cluster's Redis can fail over to a replica that lacks the last writes (Sentinel, a
   * Redis Cluster, or a link of the caller's with `onFailover`): `onFailover` listeners are told then.
   */
  get followsFailovers(): boolean {
    const own = this.#o.link;
    return own === undefined ? this.#topology?.kind !== 'single' : own.onFailover !== undefined;
  }

  /** `listener` is called after each failover, once the cluster has written its own entries again. */
  onFailover(listener: () => void): () => void {
    this.#failoverListeners.add(listener);
    return () => void this.#failoverListeners.delete(listener);
  }

  #failedOver(): void {
    void this.#owned.reRegister(true).finally(() => {
      for (const l of this.#failoverListeners) l();
    });
    // The stream copies too (replica.ts): a resume after this owner's death reads them.
    const ep = this.#ep;
    if (ep !== undefined) void this.#replica?.rewrite(ep.frames);
  }

  /**
   * A key for `purpose` drawn from the cluster secret (HMAC-SHA256), the same on every member, such
   * as the DPoP nonce key (proof-replays.ts); undefined until the secret is known (joined).
   */
  derivedKey(purpose: string): string | undefined {
    const secret = this.#secret;
    return secret === undefined ? undefined : this.#derived.of(secret, purpose);
  }

  /** Binds the cluster to the endpoint it serves; returns the hooks the core calls. */
  attach(ep: ClusterEndpoint): ClusterHooks {
    if (this.#ep !== undefined) throw new InvalidOptionError('redisCluster: one cluster object per handler');
    this.#ep = ep;
    return {
      sessionStarting: (s) => this.#owned.starting(s),
      sessionVersion: (id, v) => this.#owned.version(id, v),
      sessionEnded: (id) => this.#owned.ended(id),
      replicate: (id, n, seq, frame, progress) => this.#replica?.append(id, n, seq, frame, progress),
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
      const own = this.#o.link;
      const raw =
        own !== undefined
          ? withDeadlines(own, DEFAULT_COMMAND_DEADLINE_MS)
          : await connectTopology(this.#topology ?? { kind: 'single', url: '' }, {
              onError: (e) => log?.warn('cluster.redis_error', { error: e.message }),
            });
      // The promoted replica may miss the last writes (asynchronous replication): write ours again.
      raw.onFailover?.(() => this.#failedOver());
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
      onReRegister: () => void this.#owned.reRegister(),
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
      return forwardToOwner(this.#forwardContext, r, sid);
    }
    const header = Array.isArray(fwd) ? (fwd[0] ?? '') : fwd;
    return acceptForwarded(
      {
        incarnation: this.incarnation,
        secret: this.#secret,
        replays: this.#replays,
        counters: this.#counters,
      },
      r,
      header,
    );
  }

  /** How many other instances hold a lease now (what `sluice serve --redis` prints once joined). */
  async peersSeen(): Promise<number | undefined> {
    return this.#lease?.others();
  }

  stats(): ClusterStats {
    const c = this.#counters.read();
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

  #housekeepingMs(): number {
    const idle = this.#ep?.options.sessionIdleMs ?? 600_000;
    return Math.max(100, Math.min(30_000, Math.floor(idle / 4)));
  }

  async #housekeep(): Promise<void> {
    this.#replica?.sweep();
    void this.bus.retry();
    await this.#owned.housekeep();
  }
}

/** `createMcpHandler({ ..., cluster: redisCluster({ url: 'redis://…' }) })` */
export function redisCluster(o: RedisClusterOptions): RedisCluster {
  return new RedisCluster(o);
}
