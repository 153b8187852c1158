/**
 * What `redisCluster()` takes (its advertise URL checked by `checkAdvertise`), and what its `stats()` report:
 * apart from cluster.ts so the class holds membership and routing only.
 */
import { InvalidOptionError } from '../errors.js';
import type { BusStats } from './change-bus.js';
import type { RedisLink } from './redis-link.js';
import type { EventReplica } from './replica.js';
import type { TopologyOptions } from './topology.js';

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

export function checkAdvertise(url: string): void {
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
