/**
 * Highly available Redis topologies for tests, from real redis-server processes on free 127.0.0.1
 * ports in one fresh temp dir, all killed (and the dir removed) by `stop()`:
 *
 * - `startSentinelGroup()`: a master, two replicas and three sentinels (`redis-sentinel`,
 *   quorum 2, the master declared down after 1 s); `killMaster()` SIGKILLs the current master and
 *   `waitForFailover()` waits until the sentinels name a promoted replica.
 * - `startRedisCluster()`: three masters with `--cluster-enabled yes`, the 16384 slots split in three
 *   (CLUSTER ADDSLOTSRANGE, CLUSTER MEET: what `redis-cli --cluster create` does, without needing
 *   redis-cli), ready once every node reports `cluster_state:ok`.
 *
 * Every wait has a deadline; a failure carries the servers' output.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisReply } from '../../src/cluster/redis-link.js';
import { type Daemon, daemonBinary, freePort, stopDaemon, waitForPort } from './daemon.js';
import { findRedis, launchRedis, REDIS_MISSING, type RedisLog } from './redis.js';

export const SENTINEL_MASTER = 'sluice';

export const SENTINEL_MISSING = 'SKIPPED: redis-sentinel not installed — .ci/run installs it';

const sentinelBinary = daemonBinary(
  'REDIS_SENTINEL',
  '/usr/bin/redis-sentinel',
  'redis-sentinel',
  SENTINEL_MISSING,
);

/** The redis-sentinel binary: $REDIS_SENTINEL, /usr/bin/redis-sentinel, then PATH; undefined when none. */
export const findSentinel = sentinelBinary.find;

interface Server {
  port: number;
  daemon: Daemon;
}

/** Servers of one topology in one temp dir. */
class Group {
  readonly dir: string;
  readonly log: RedisLog = { text: '' };
  readonly servers: Server[] = [];
  readonly #bin: string;

  constructor(bin: string, dir: string) {
    this.#bin = bin;
    this.dir = dir;
  }

  /** Starts one server on a free port (retrying on a port lost to a race); `bin` for a sentinel. */
  async start(
    extra: (port: number) => string[],
    config?: (port: number) => string,
    bin: string = this.#bin,
  ): Promise<Server> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const port = await freePort();
      let file: string | undefined;
      if (config !== undefined) {
        file = join(this.dir, `redis-${port}.conf`);
        await writeFile(file, config(port));
      }
      const daemon = launchRedis(bin, this.dir, port, this.log, extra(port), file);
      if ((await waitForPort(daemon, port, 10_000)) === 'ready') {
        const s = { port, daemon };
        this.servers.push(s);
        return s;
      }
      await stopDaemon(daemon, 'SIGKILL', 'redis-server');
    }
    throw new Error(`redis-server did not start:\n${this.log.text}`);
  }

  async stop(): Promise<void> {
    for (const s of this.servers) await stopDaemon(s.daemon, 'SIGKILL', 'redis-server');
    await rm(this.dir, { recursive: true, force: true });
  }
}

async function newGroup(prefix: string): Promise<Group> {
  const bin = findRedis();
  if (bin === undefined) throw new Error(REDIS_MISSING);
  return new Group(bin, await mkdtemp(join(tmpdir(), prefix)));
}

/** One command on a throwaway connection (admin only: never the code under test's link). */
export async function adminCommand(port: number, args: string[]): Promise<RedisReply> {
  // A server that is up, on loopback: the first connect is waited for up to twice connectTimeoutMs
  // before the command is sent. At the default (1 s, sized for an instance that boots while Redis is
  // down and must not wait) a loaded CI machine once sent a cluster setup command before the
  // connection was up ("Redis is not connected"), failing a whole file's before hook.
  const link = await connectNodeRedis({
    url: `redis://127.0.0.1:${port}`,
    commandTimeoutMs: 2_000,
    connectTimeoutMs: 5_000,
  });
  try {
    return await link.send(args);
  } finally {
    await link.close();
  }
}

/** Polls `check` every 100 ms until it returns true; throws `what` (and the servers' output) at the deadline. */
async function until(check: () => Promise<boolean>, ms: number, what: string, log: RedisLog): Promise<void> {
  const deadline = Date.now() + ms;
  let last = '';
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (error) {
      last = String(error);
    }
    await delay(100);
  }
  throw new Error(`${what}: not within ${ms} ms ${last}\n${log.text.slice(-3_000)}`);
}

function infoField(info: RedisReply, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)\\r?$`, 'm').exec(String(info))?.[1]?.trim();
}

export interface SentinelGroup {
  /** `sluice@127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`, as --redis-sentinel takes it. */
  readonly spec: string;
  readonly sentinelPorts: number[];
  /** The replicas' ports (at start). */
  readonly replicaPorts: number[];
  /** The master the sentinels name now. */
  masterPort(): Promise<number>;
  /** SIGKILLs the current master; resolves with its port once it is gone. */
  killMaster(): Promise<number>;
  /** Resolves with the new master's port once the sentinels name another than `oldPort`. */
  waitForFailover(oldPort: number, ms: number): Promise<number>;
  output(): string;
  stop(): Promise<void>;
}

export async function startSentinelGroup(): Promise<SentinelGroup> {
  const sentinelBin = findSentinel();
  if (sentinelBin === undefined) throw new Error(SENTINEL_MISSING);
  const g = await newGroup('sluice-sentinel-');
  try {
    const master = await g.start(() => []);
    // Writable replicas: a test can make one miss a write (as asynchronous replication may, when
    // the master dies before sending it) by deleting a key on it.
    for (let i = 0; i < 2; i++)
      await g.start(() => ['--replicaof', '127.0.0.1', String(master.port), '--replica-read-only', 'no']);
    const sentinels: Server[] = [];
    for (let i = 0; i < 3; i++) {
      sentinels.push(
        await g.start(
          () => [],
          (port) =>
            [
              `port ${port}`,
              `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${master.port} 2`,
              `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
              `sentinel failover-timeout ${SENTINEL_MASTER} 10000`,
              `sentinel parallel-syncs ${SENTINEL_MASTER} 1`,
              '',
            ].join('\n'),
          sentinelBin,
        ),
      );
    }
    const ask = (s: Server, args: string[]) => adminCommand(s.port, args);
    // Ready when both replicas are in sync and every sentinel knows both replicas and its two peers
    // (a failover needs a majority of sentinels that know each other).
    await until(
      async () => {
        for (const r of g.servers.slice(1, 3)) {
          if (infoField(await ask(r, ['INFO', 'replication']), 'master_link_status') !== 'up') return false;
        }
        for (const s of sentinels) {
          const replicas = await ask(s, ['SENTINEL', 'REPLICAS', SENTINEL_MASTER]);
          const peers = await ask(s, ['SENTINEL', 'SENTINELS', SENTINEL_MASTER]);
          if (!Array.isArray(replicas) || replicas.length < 2) return false;
          if (!Array.isArray(peers) || peers.length < 2) return false;
        }
        return true;
      },
      30_000,
      'sentinel group ready (replicas in sync, sentinels know each other)',
      g.log,
    );
    const masterPort = async (): Promise<number> => {
      for (const s of sentinels) {
        try {
          const r = await ask(s, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER]);
          if (Array.isArray(r)) return Number(r[1]);
        } catch {
          // Try the next sentinel.
        }
      }
      throw new Error(`no sentinel names the master:\n${g.log.text.slice(-3_000)}`);
    };
    return {
      spec: `${SENTINEL_MASTER}@${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}`,
      sentinelPorts: sentinels.map((s) => s.port),
      replicaPorts: g.servers.slice(1, 3).map((s) => s.port),
      masterPort,
      async killMaster() {
        const port = await masterPort();
        const s = g.servers.find((x) => x.port === port);
        if (s === undefined) throw new Error(`the master ${port} is not one of this group's servers`);
        await stopDaemon(s.daemon, 'SIGKILL', 'redis master');
        return port;
      },
      async waitForFailover(oldPort, ms) {
        let now = oldPort;
        await until(
          async () => {
            now = await masterPort();
            if (now === oldPort) return false;
            const role = await adminCommand(now, ['ROLE']);
            return Array.isArray(role) && role[0] === 'master';
          },
          ms,
          'the sentinels promote a replica',
          g.log,
        );
        return now;
      },
      output: () => g.log.text,
      stop: () => g.stop(),
    };
  } catch (error) {
    await g.stop();
    throw error;
  }
}

export interface RedisClusterGroup {
  /** `127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3` (the masters at start), as --redis-cluster takes it. */
  readonly spec: string;
  /** The masters' ports at start. */
  readonly ports: number[];
  /** SIGKILLs the master serving `key`'s slot now; resolves with its port once it is gone. */
  killMasterOf(key: string): Promise<number>;
  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): Promise<number>;
  /** Resolves with the port of the master serving `key` once it is another than `oldPort` and the cluster is ok. */
  waitForFailover(key: string, oldPort: number, ms: number): Promise<number>;
  output(): string;
  stop(): Promise<void>;
}

const SLOTS = 16384;

/** The port of the master serving `key`'s slot, asked of any live node. */
async function masterOf(ports: number[], key: string): Promise<number> {
  for (const port of ports) {
    try {
      const slot = Number(await adminCommand(port, ['CLUSTER', 'KEYSLOT', key]));
      const shards = await adminCommand(port, ['CLUSTER', 'SLOTS']);
      if (!Array.isArray(shards)) continue;
      for (const r of shards) {
        if (!Array.isArray(r) || Number(r[0]) > slot || Number(r[1]) < slot) continue;
        const m = r[2];
        if (Array.isArray(m)) return Number(m[1]);
      }
    } catch {
      // A dead node: ask the next one.
    }
  }
  throw new Error(`no live node names the master of '${key}'`);
}

/**
 * `size` masters with the 16384 slots split between them, and `replicas` replicas behind each (then
 * a master's death is a failover: its replica takes its slots over after the node timeout, 2 s).
 */
export async function startRedisCluster(size = 3, replicas = 0): Promise<RedisClusterGroup> {
  const g = await newGroup('sluice-rcluster-');
  try {
    const nodes: Server[] = [];
    const buses: number[] = [];
    const total = size * (1 + replicas);
    for (let i = 0; i < total; i++) {
      // The cluster bus gets its own free port (the default, port + 10000, may be taken or invalid).
      const bus = await freePort();
      buses.push(bus);
      nodes.push(
        await g.start((port) => [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(g.dir, `nodes-${port}.conf`),
          '--cluster-port',
          String(bus),
          '--cluster-node-timeout',
          '2000',
        ]),
      );
    }
    const masters = nodes.slice(0, size);
    const per = Math.ceil(SLOTS / size);
    for (let i = 0; i < size; i++) {
      const n = masters[i] as Server;
      const from = i * per;
      const to = Math.min(SLOTS - 1, from + per - 1);
      await adminCommand(n.port, ['CLUSTER', 'ADDSLOTSRANGE', String(from), String(to)]);
    }
    const first = nodes[0] as Server;
    // With a bus port other than port + 10000, MEET must name it.
    for (let i = 1; i < total; i++) {
      const n = nodes[i] as Server;
      await adminCommand(first.port, ['CLUSTER', 'MEET', '127.0.0.1', String(n.port), String(buses[i])]);
    }
    const ids = await Promise.all(masters.map((m) => adminCommand(m.port, ['CLUSTER', 'MYID'])));
    // Replica j of master i: it must know the master first (gossip after MEET).
    for (let i = size; i < total; i++) {
      const n = nodes[i] as Server;
      const masterId = String(ids[(i - size) % size]);
      await until(
        async () => {
          try {
            return (await adminCommand(n.port, ['CLUSTER', 'REPLICATE', masterId])) === 'OK';
          } catch {
            return false;
          }
        },
        30_000,
        'a cluster replica attaches to its master',
        g.log,
      );
    }
    await until(
      async () => {
        for (const n of nodes) {
          const info = await adminCommand(n.port, ['CLUSTER', 'INFO']);
          if (infoField(info, 'cluster_state') !== 'ok') return false;
          if (infoField(info, 'cluster_known_nodes') !== String(total)) return false;
        }
        for (const n of nodes.slice(size)) {
          if (infoField(await adminCommand(n.port, ['INFO', 'replication']), 'master_link_status') !== 'up')
            return false;
        }
        return true;
      },
      30_000,
      'redis cluster state ok on every node, replicas in sync',
      g.log,
    );
    const live = () => g.servers.filter((x) => !x.daemon.hasExited()).map((x) => x.port);
    return {
      spec: masters.map((n) => `127.0.0.1:${n.port}`).join(','),
      ports: masters.map((n) => n.port),
      masterOf: (key) => masterOf(live(), key),
      async killMasterOf(key) {
        const port = await masterOf(live(), key);
        const s = g.servers.find((x) => x.port === port);
        if (s === undefined) throw new Error(`the master ${port} is not one of this cluster's servers`);
        await stopDaemon(s.daemon, 'SIGKILL', 'redis cluster master');
        return port;
      },
      async waitForFailover(key, oldPort, ms) {
        let now = oldPort;
        await until(
          async () => {
            now = await masterOf(live(), key);
            if (now === oldPort) return false;
            for (const port of live()) {
              if (infoField(await adminCommand(port, ['CLUSTER', 'INFO']), 'cluster_state') !== 'ok')
                return false;
            }
            return true;
          },
          ms,
          'the cluster promotes a replica',
          g.log,
        );
        return now;
      },
      output: () => g.log.text,
      stop: () => g.stop(),
    };
  } catch (error) {
    await g.stop();
    throw error;
  }
}
