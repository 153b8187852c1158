/**
 * Prometheus lines for a cluster member (appended to the handler's exposition). Names are
 * documented in docs/operations.md and docs/scale-out.md.
 */
import { PrometheusWriter } from '../core/observe/prometheus-writer.js';
import type { RedisCluster } from './cluster.js';

const LEASE_STATES = ['held', 'refresh-failing', 'lapsed', 'stopped'] as const;

export function renderClusterMetrics(c: RedisCluster): string {
  const s = c.stats();
  const w = new PrometheusWriter();
  w.one(
    'sluice_cluster_forwarded_total',
    'counter',
    'Requests forwarded to their session owner.',
    s.forwarded.out,
  );
  w.one(
    'sluice_cluster_forwarded_in_total',
    'counter',
    'Requests received from a peer (forwarded, verified).',
    s.forwarded.in,
  );
  w.one(
    'sluice_cluster_forward_failures_total',
    'counter',
    'Forwards that reached no owner (answered 503 or 404).',
    s.forwarded.failed,
  );
  w.one(
    'sluice_cluster_forward_refusals_total',
    'counter',
    'Requests claiming to be forwarded that were refused (bad signature or replay 403, misdirected 421).',
    s.forwarded.refused,
  );
  w.one(
    'sluice_cluster_forward_replays_total',
    'counter',
    'Forwarded requests refused because their signature had been used already (403).',
    s.forwarded.replayed,
  );
  w.one(
    'sluice_cluster_forward_crowded_total',
    'counter',
    'Forwarded requests answered 503: older than what the full replay guard can still tell apart.',
    s.forwarded.crowded,
  );
  w.one(
    'sluice_cluster_owner_lost_total',
    'counter',
    'Resumes of a dead owner stream answered from the Redis copy with owner-lost errors for its unanswered requests.',
    s.forwarded.ownerLost,
  );
  w.family('sluice_cluster_forward_seconds', 'histogram', 'Time from forwarding to the owner answer status.');
  w.histogram('sluice_cluster_forward_seconds', c.forwardLatency);
  w.one(
    'sluice_cluster_directory_hits_total',
    'counter',
    'Directory lookups served from the local cache.',
    s.directory.hits,
  );
  w.one(
    'sluice_cluster_directory_misses_total',
    'counter',
    'Directory lookups that found no session (answered 404).',
    s.directory.misses,
  );
  w.one(
    'sluice_cluster_directory_errors_total',
    'counter',
    'Directory lookups Redis could not answer (answered 503).',
    s.directory.errors,
  );
  w.family('sluice_cluster_lease_state', 'gauge', 'This instance lease state (1 for the current one).');
  for (const st of LEASE_STATES)
    w.sample('sluice_cluster_lease_state', s.lease.state === st ? 1 : 0, { state: st });
  w.one(
    'sluice_cluster_redis_errors_total',
    'counter',
    'Redis commands that failed (not error replies).',
    s.redis.errors,
  );
  const rtt = c.redisRtt;
  if (rtt !== undefined) {
    w.family('sluice_cluster_redis_seconds', 'histogram', 'Redis command round-trip time.');
    w.histogram('sluice_cluster_redis_seconds', rtt, {}, 0.001);
  }
  w.one(
    'sluice_cluster_replica_bytes',
    'gauge',
    'Bytes of frame copies this instance holds in Redis.',
    s.replica.bytes,
  );
  w.one(
    'sluice_cluster_replica_frames_lost_total',
    'counter',
    'Frames not copied to Redis because it failed.',
    s.replica.framesLost,
  );
  w.one(
    'sluice_cluster_replica_rewritten_total',
    'counter',
    'Frame copies written again whole from the owner after a Redis failover.',
    s.replica.rewritten,
  );
  w.one(
    'sluice_cluster_bus_published_total',
    'counter',
    'Listen-stream changes shared with the other instances through Redis.',
    s.bus.published,
  );
  w.one(
    'sluice_cluster_bus_received_total',
    'counter',
    'Listen-stream changes received from other instances and delivered here.',
    s.bus.received,
  );
  w.one(
    'sluice_cluster_bus_unshared_total',
    'counter',
    'Listen-stream changes delivered locally but not shared (Redis down, backlog full, no subscribe).',
    s.bus.unshared,
  );
  w.one(
    'sluice_cluster_bus_malformed_total',
    'counter',
    'Messages on the change channel dropped as malformed.',
    s.bus.malformed,
  );
  w.one(
    'sluice_cluster_bus_subscribed',
    'gauge',
    'Whether this instance is subscribed to the change channel (1) or hears only its own changes (0).',
    s.bus.subscribed ? 1 : 0,
  );
  return w.out;
}
