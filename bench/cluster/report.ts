// Section (i)'s figures (section.ts measures them), its targets as issue #25 states them, and the
// markdown table that sets each figure next to its target.
import { auto, num } from '../format.js';
import { type RelayProfile, renderRelayProfile } from './relay-profile.js';

/** The scale-out targets, as the issue states them. */
export const CLUSTER_TARGETS = {
  localP50DeltaMs: 0.1,
  forwardP50DeltaMs: 0.5,
  forwardP99DeltaMs: 3,
  /** Issue #25: forwarded ≤ 1.5× owner-local (was 2× before it). */
  forwardCpuRatio: 1.5,
  progressEventsPerSec: 100_000,
  /** Issue #25: progress events/s with the Redis copy on ≥ 90 % of the same call with it off. */
  progressCopyRatio: 0.9,
  bytesPerIdleSession: 1.5 * 1024,
  connectionsPerInstance: 2,
} as const;

export interface EchoCase {
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  requests: number;
}

export interface ClusterRun {
  requestsPerCase: number;
  reps: number;
  echo: { single: EchoCase; local: EchoCase; forward: EchoCase; pipe: EchoCase; http?: EchoCase };
  /** Median over reps of the per-rep forward/local CPU ratio (both measured in the same rep). */
  forwardCpuRatio: number;
  /** The same for the byte pipe (pipe-relay.ts): the floor of any relay in a process of its own. */
  pipeCpuRatio: number;
  /** The same for the least `node:http` relay (pipe-relay.ts `http`); absent in runs before 2026-12-08. */
  httpCpuRatio?: number;
  /** Median over reps of forward ÷ that relay: what Sluice's hop costs beyond the least `node:http` relay. */
  forwardOverHttpRatio?: number;
  /** Where the relaying member's CPU goes, by profile (relay-profile.ts): what explains the forwarded ratio. */
  relayProfile: RelayProfile;
  progress: { events: number; floods: number; copyOff: number; copyOn: number; forwardedCopyOn: number };
  memory: { sessions: number; usedMemoryPerSession: number; directoryKeyBytes: number };
  connections: { sessions: number; perInstance: number; clientList: number }[];
  redisVersion: string;
  elapsedMs: number;
}

function verdict(ok: boolean): string {
  return ok ? 'met' : '**missed**';
}

export function renderCluster(r: ClusterRun): string {
  const T = CLUSTER_TARGETS;
  const { single, local, forward } = r.echo;
  const localDelta = local.p50Ms - single.p50Ms;
  const fwdDelta50 = forward.p50Ms - local.p50Ms;
  const fwdDelta99 = forward.p99Ms - local.p99Ms;
  const ms = (x: number): string => x.toFixed(3);
  const signed = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
  const worstConn = Math.max(...r.connections.map((c) => c.perInstance));
  const lines = [
    '## (i) Scale-out on Redis: cluster on vs off',
    '',
    `Real \`sluice serve\` processes on loopback and a private redis-server ${r.redisVersion} (no persistence). ` +
      `Echo: ${num(r.requestsPerCase)} sequential keep-alive requests per case, in ${r.reps} repetitions of ` +
      'interleaved rounds of 250 whose order rotates; p50/p99 pooled, CPU per request (from /proc, summed over every ' +
      'instance that handled it) the median over repetitions. *single*: no cluster; *local*: a cluster member ' +
      'answering its own session; *forwarded*: the same session sent to the other member, relayed to the owner; ' +
      '*pipe*: the same session through a byte pipe in a process of its own (the floor under any relay over TCP); ' +
      '*http relay*: through the least `node:http` relay that reads the request before it forwards (no routing, no signature). ' +
      `Progress: ${r.progress.floods} \`flood\` calls per path, in an order that rotates, events/s the median. ` +
      'The machine may be shared: compare within this table, not across runs.',
    '',
    '| Figure | single instance | cluster | Δ / ratio | target | verdict |',
    '|---|---:|---:|---:|---|---|',
    `| owner-local echo p50 (ms) | ${ms(single.p50Ms)} | ${ms(local.p50Ms)} | ${signed(localDelta)} | ≤ +${T.localP50DeltaMs} | ${verdict(localDelta <= T.localP50DeltaMs)} |`,
    `| owner-local echo p99 (ms) | ${ms(single.p99Ms)} | ${ms(local.p99Ms)} | ${signed(local.p99Ms - single.p99Ms)} | — | — |`,
    `| owner-local CPU / request (µs) | ${auto(single.cpuUsPerRequest)} | ${auto(local.cpuUsPerRequest)} | ×${(local.cpuUsPerRequest / single.cpuUsPerRequest).toFixed(2)} | — | — |`,
    `| forwarded echo p50 (ms, vs owner-local) | ${ms(local.p50Ms)} | ${ms(forward.p50Ms)} | ${signed(fwdDelta50)} | ≤ +${T.forwardP50DeltaMs} | ${verdict(fwdDelta50 <= T.forwardP50DeltaMs)} |`,
    `| forwarded echo p99 (ms, vs owner-local) | ${ms(local.p99Ms)} | ${ms(forward.p99Ms)} | ${signed(fwdDelta99)} | ≤ +${T.forwardP99DeltaMs} | ${verdict(fwdDelta99 <= T.forwardP99DeltaMs)} |`,
    `| forwarded CPU / request (µs, both instances, vs owner-local) | ${auto(local.cpuUsPerRequest)} | ${auto(forward.cpuUsPerRequest)} | ×${r.forwardCpuRatio.toFixed(2)} | ≤ ×${T.forwardCpuRatio} | ${verdict(r.forwardCpuRatio <= T.forwardCpuRatio)} |`,
    `| floor: the same session through a byte pipe in a process of its own (no parsing; CPU / request, vs owner-local) | ${auto(local.cpuUsPerRequest)} | ${auto(r.echo.pipe.cpuUsPerRequest)} | ×${r.pipeCpuRatio.toFixed(2)} | — | — |`,
    ...(r.echo.http === undefined || r.httpCpuRatio === undefined || r.forwardOverHttpRatio === undefined
      ? []
      : [
          `| the least \`node:http\` relay that reads the request (no routing, no signature; CPU / request, vs owner-local) | ${auto(local.cpuUsPerRequest)} | ${auto(r.echo.http.cpuUsPerRequest)} | ×${r.httpCpuRatio.toFixed(2)} | — | — |`,
          `| forwarded CPU / request vs that \`node:http\` relay (what Sluice's hop adds: routing, signature, its checks) | ${auto(r.echo.http.cpuUsPerRequest)} | ${auto(forward.cpuUsPerRequest)} | ×${r.forwardOverHttpRatio.toFixed(2)} | — | — |`,
        ]),
    `| progress events/s, one \`flood\` call of ${num(r.progress.events)} (copy off → owner with copy on) | ${num(r.progress.copyOff)} | ${num(r.progress.copyOn)} | ×${(r.progress.copyOn / r.progress.copyOff).toFixed(2)} | ≥ ${num(T.progressEventsPerSec)} | ${verdict(r.progress.copyOn >= T.progressEventsPerSec)} |`,
    `| progress events/s, copy on ÷ copy off (same run) | ${num(r.progress.copyOff)} | ${num(r.progress.copyOn)} | ×${(r.progress.copyOn / r.progress.copyOff).toFixed(2)} | ≥ ×${T.progressCopyRatio} | ${verdict(r.progress.copyOn / r.progress.copyOff >= T.progressCopyRatio)} |`,
    `| progress events/s, the same call forwarded (copy on) | ${num(r.progress.copyOff)} | ${num(r.progress.forwardedCopyOn)} | ×${(r.progress.forwardedCopyOn / r.progress.copyOff).toFixed(2)} | — | — |`,
    `| Redis memory per idle session (B; INFO used_memory Δ over ${num(r.memory.sessions)} sessions) | 0 | ${num(r.memory.usedMemoryPerSession)} | — | ≤ ${num(T.bytesPerIdleSession)} | ${verdict(r.memory.usedMemoryPerSession <= T.bytesPerIdleSession)} |`,
    `| Redis MEMORY USAGE of one idle session's keys (B) | 0 | ${num(r.memory.directoryKeyBytes)} | — | ≤ ${num(T.bytesPerIdleSession)} | ${verdict(r.memory.directoryKeyBytes <= T.bytesPerIdleSession)} |`,
    ...r.connections.map(
      (c) =>
        `| Redis connections per instance, ${num(c.sessions)} session${c.sessions === 1 ? '' : 's'} (CLIENT LIST: ${c.clientList} for 2 members) | 0 | ${c.perInstance} | — | ≤ ${T.connectionsPerInstance} | ${verdict(c.perInstance <= T.connectionsPerInstance)} |`,
    ),
    '',
    `Connections per instance: the instance's established sockets to the Redis port, read from /proc. Worst: ${worstConn}. Section time ${num(r.elapsedMs / 1000, 1)} s.`,
    '',
    renderRelayProfile(r.relayProfile),
    '',
  ];
  return lines.join('\n');
}
