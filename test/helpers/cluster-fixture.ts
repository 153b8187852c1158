/**
 * Three `sluice serve` processes on one private Redis topology (a redis-server, a Sentinel group or
 * a Redis Cluster: redis-topology.ts), behind nginx balancing
 * round-robin with no affinity (no hash, no ip_hash, no cookie): every request may land on any
 * instance, so most requests for a session land on a non-owner. `restart(i)` starts member i again
 * on the same port (after a kill), so nginx's upstream list stays valid.
 */
import { type Nginx, RECOMMENDED_LOCATION, startNginx } from './nginx.js';
import { type RedisTarget, startTarget, type TopologyKind } from './redis-topology.js';
import { type SpawnedServe, spawnServe } from './spawn-serve.js';

export interface ClusterFixture {
  readonly redis: RedisTarget;
  readonly nginx: Nginx;
  /** The balanced endpoint. */
  readonly url: string;
  readonly members: SpawnedServe[];
  readonly ports: number[];
  readonly leaseMs: number;
  restart(i: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startClusterFixture(
  o: {
    leaseMs?: number;
    size?: number;
    metrics?: boolean;
    topology?: TopologyKind;
    /** More `sluice serve` arguments, and environment, for every member. */
    args?: string[];
    env?: Record<string, string>;
    /** Each member's stderr lines from its spawn on (restarts included), by member index. */
    onStderrLine?: (member: number, line: string) => void;
  } = {},
): Promise<ClusterFixture> {
  const leaseMs = o.leaseMs ?? 1_500;
  const size = o.size ?? 3;
  const redis = await startTarget(o.topology ?? 'single');
  const env = { SLUICE_CLUSTER_LEASE_MS: String(leaseMs), ...o.env };
  const start = (i: number, port = 0) =>
    spawnServe(
      [
        ...redis.serveArgs,
        '--keepalive-ms',
        '5000',
        '--port',
        String(port),
        ...(o.metrics ? ['--metrics'] : []),
        ...(o.args ?? []),
      ],
      env,
      // Processes on a loaded 2-core machine (other suites run beside this one) start slowly.
      45_000,
      o.onStderrLine === undefined ? undefined : lines((line) => o.onStderrLine?.(i, line)),
    );
  const members: SpawnedServe[] = [];
  try {
    // One after another: starting them at once on a loaded machine only makes each slower.
    for (let i = 0; i < size; i++) members.push(await start(i));
  } catch (error) {
    for (const m of members) await m.close();
    await redis.stop();
    throw error;
  }
  const ports = members.map((m) => Number(new URL(m.url).port));
  const nginx = await startNginx({
    upstreamPort: ports[0] ?? 0,
    upstreamPorts: ports,
    location: `${RECOMMENDED_LOCATION}\n      proxy_set_header    Host $http_host;\n      proxy_next_upstream error timeout;`,
  });
  return {
    redis,
    nginx,
    url: nginx.url,
    members,
    ports,
    leaseMs,
    async restart(i) {
      const old = members[i];
      if (old !== undefined) await old.close();
      members[i] = await start(i, ports[i]);
    },
    async stop() {
      await nginx.stop();
      for (const m of members) await m.close().catch(() => undefined);
      await redis.stop();
    },
  };
}

/** A chunk handler that calls `each` per complete line; one per process, so lines never mix. */
function lines(each: (line: string) => void): (chunk: string) => void {
  let buf = '';
  return (chunk) => {
    buf += chunk;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      each(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  };
}
