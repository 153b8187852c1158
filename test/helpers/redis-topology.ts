/**
 * The Redis topologies the scale-out tests run over, one test body for all: a single redis-server,
 * a Sentinel group (master, two replicas, three sentinels) and a three-master Redis Cluster, all
 * real servers started by the test (redis.ts, redis-ha.ts).
 *
 * `topologies()` lists the ones to run: all three, or those named in $SLUICE_REDIS_TOPOLOGIES
 * (comma-separated, e.g. `single,cluster`) for a quicker local run. A topology whose binary is
 * missing is skipped with a loud message (`topologySkip`), never passed silently.
 */
import { redisCluster } from '../../src/cluster/cluster.js';
import { connectTopology } from '../../src/cluster/node-redis-ha.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { topologyOf } from '../../src/cluster/topology.js';
import { findRedis, REDIS_MISSING, type Redis, startRedis } from './redis.js';
import {
  findSentinel,
  type RedisClusterGroup,
  SENTINEL_MISSING,
  type SentinelGroup,
  startRedisCluster,
  startSentinelGroup,
} from './redis-ha.js';

export type TopologyKind = 'single' | 'sentinel' | 'cluster';

const ALL: TopologyKind[] = ['single', 'sentinel', 'cluster'];

/** The topologies to run ($SLUICE_REDIS_TOPOLOGIES narrows them; an unknown name is an error). */
export function topologies(): TopologyKind[] {
  const env = process.env['SLUICE_REDIS_TOPOLOGIES'];
  if (env === undefined || env.trim() === '') return ALL;
  const names = env.split(',').map((x) => x.trim());
  for (const n of names) {
    if (!ALL.includes(n as TopologyKind)) throw new Error(`SLUICE_REDIS_TOPOLOGIES: unknown topology '${n}'`);
  }
  return names as TopologyKind[];
}

/** The skip message when the topology cannot run here, else false. */
export function topologySkip(kind: TopologyKind): string | false {
  const missing =
    findRedis() === undefined
      ? REDIS_MISSING
      : kind === 'sentinel' && findSentinel() === undefined
        ? SENTINEL_MISSING
        : undefined;
  if (missing === undefined) return false;
  process.stderr.write(`\n${'!'.repeat(72)}\n!! ${missing}\n${'!'.repeat(72)}\n\n`);
  return missing;
}

export type TopologyOptions = { url: string } | { sentinel: string } | { cluster: string };

export interface RedisTarget {
  readonly kind: TopologyKind;
  /** What `redisCluster({ … })` takes for it. */
  readonly options: TopologyOptions;
  /** What `sluice serve` takes for it. */
  readonly serveArgs: string[];
  /** The single server (single topology only: restart() and its port for a TCP proxy). */
  readonly single: Redis | undefined;
  readonly sentinel: SentinelGroup | undefined;
  readonly cluster: RedisClusterGroup | undefined;
  /** A link through the same topology, for the test's own reads. */
  connect(): Promise<RedisLink>;
  output(): string;
  stop(): Promise<void>;
}

/** `redisCluster({ ...target.options, ... })` for in-process members. */
export function clusterOn(
  t: RedisTarget,
  o: { leaseMs?: number; directoryCacheMs?: number } = {},
): ReturnType<typeof redisCluster> {
  return redisCluster({ ...t.options, ...o });
}

/** `clusterReplicas`: replicas behind each Cluster master (0: none, the cluster cannot fail over). */
export async function startTarget(
  kind: TopologyKind,
  o: { clusterReplicas?: number } = {},
): Promise<RedisTarget> {
  let single: Redis | undefined;
  let sentinel: SentinelGroup | undefined;
  let cluster: RedisClusterGroup | undefined;
  let options: TopologyOptions;
  let serveArgs: string[];
  if (kind === 'single') {
    single = await startRedis();
    options = { url: single.url };
    serveArgs = ['--redis', single.url];
  } else if (kind === 'sentinel') {
    sentinel = await startSentinelGroup();
    options = { sentinel: sentinel.spec };
    serveArgs = ['--redis-sentinel', sentinel.spec];
  } else {
    cluster = await startRedisCluster(3, o.clusterReplicas ?? 0);
    options = { cluster: cluster.spec };
    serveArgs = ['--redis-cluster', cluster.spec];
  }
  const parsed = topologyOf(options);
  if (parsed === undefined) throw new Error('no topology');
  return {
    kind,
    options,
    serveArgs,
    single,
    sentinel,
    cluster,
    connect: () => connectTopology(parsed, { onError: () => undefined }),
    output: () => single?.output() ?? sentinel?.output() ?? cluster?.output() ?? '',
    async stop() {
      await single?.stop();
      await sentinel?.stop();
      await cluster?.stop();
    },
  };
}
