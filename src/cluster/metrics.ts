/**
 * Prometheus lines for a cluster member (appended to the handler's exposition). Names are
 * documented in docs/operations.md and docs/scale-out.md.
 */
import type { Histogram } from '../core/histogram.js';
import type { RedisCluster } from './cluster.js';

const LEASE_STATES = ['held', 'refresh-failing', 'lapsed', 'stopped'] as const;

function histogram(name: string, h: Histogram, scale = 1): string {
  let out = '';
  let cumulative = 0;
  h.bounds.forEach((b, i) => {
    cumulative += h.counts[i] ?? 0;
    out += `${name}_bucket{le="${b * scale}"} ${cumulative}\n`;
  });
  out += `${name}_bucket{le="+Inf"} ${h.count}\n${name}_sum ${h.sum * scale}\n${name}_count ${h.count}\n`;
  return out;
}

function one(name: string, type: 'counter' | 'gauge', help: string, value: number): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`;
}

export function renderClusterMetrics(c: RedisCluster): string {
  const s = c.stats();
  let out = '';
  out += one(
    'sluice_cluster_forwarded_total',
    'counter',
    'Requests forwarded to their session owner.',
    s.forwarded.out,
  );
  out += one(
    'sluice_cluster_forwarded_in_total',
    'counter',
    'Requests received from a peer (forwarded, verified).',
    s.forwarded.in,
  );
  out += one(
    'sluice_cluster_forward_failures_total',
    'counter',
    'Forwards that reached no owner (answered 503 or 404).',
    s.forwarded.failed,
  );
  out += one(
    'sluice_cluster_forward_refusals_total',
    'counter',
    'Requests claiming to be forwarded that were refused (bad signature 403, misdirected 421).',
    s.forwarded.refused,
  );
  out +=
    '# HELP sluice_cluster_forward_seconds Time from forwarding to the owner answer status.\n# TYPE sluice_cluster_forward_seconds histogram\n';
  out += histogram('sluice_cluster_forward_seconds', c.forwardLatency);
  out += one(
    'sluice_cluster_directory_hits_total',
    'counter',
    'Directory lookups served from the local cache.',
    s.directory.hits,
  );
  out += one(
    'sluice_cluster_directory_misses_total',
    'counter',
    'Directory lookups that found no session (answered 404).',
    s.directory.misses,
  );
  out += one(
    'sluice_cluster_directory_errors_total',
    'counter',
    'Directory lookups Redis could not answer (answered 503).',
    s.directory.errors,
  );
  out +=
    '# HELP sluice_cluster_lease_state This instance lease state (1 for the current one).\n# TYPE sluice_cluster_lease_state gauge\n';
  for (const st of LEASE_STATES)
    out += `sluice_cluster_lease_state{state="${st}"} ${s.lease.state === st ? 1 : 0}\n`;
  out += one(
    'sluice_cluster_redis_errors_total',
    'counter',
    'Redis commands that failed (not error replies).',
    s.redis.errors,
  );
  const rtt = c.redisRtt;
  if (rtt !== undefined) {
    out +=
      '# HELP sluice_cluster_redis_seconds Redis command round-trip time.\n# TYPE sluice_cluster_redis_seconds histogram\n';
    out += histogram('sluice_cluster_redis_seconds', rtt, 0.001);
  }
  out += one(
    'sluice_cluster_replica_bytes',
    'gauge',
    'Bytes of frame copies this instance holds in Redis.',
    s.replica.bytes,
  );
  out += one(
    'sluice_cluster_replica_frames_lost_total',
    'counter',
    'Frames not copied to Redis because it failed.',
    s.replica.framesLost,
  );
  out += one(
    'sluice_cluster_bus_published_total',
    'counter',
    'Listen-stream changes shared with the other instances through Redis.',
    s.bus.published,
  );
  out += one(
    'sluice_cluster_bus_received_total',
    'counter',
    'Listen-stream changes received from other instances and delivered here.',
    s.bus.received,
  );
  out += one(
    'sluice_cluster_bus_unshared_total',
    'counter',
    'Listen-stream changes delivered locally but not shared (Redis down, backlog full, no subscribe).',
    s.bus.unshared,
  );
  out += one(
    'sluice_cluster_bus_malformed_total',
    'counter',
    'Messages on the change channel dropped as malformed.',
    s.bus.malformed,
  );
  out += one(
    'sluice_cluster_bus_subscribed',
    'gauge',
    'Whether this instance is subscribed to the change channel (1) or hears only its own changes (0).',
    s.bus.subscribed ? 1 : 0,
  );
  return out;
}
