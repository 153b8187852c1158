/**
 * A RedisTaskStore on a connection of its own, from the same topology options as `redisCluster`
 * (`{ url }`, `{ sentinel }` or `{ cluster }`). Subscribed to the cancel channel before it resolves.
 * On Sentinel or a Redis Cluster its link tells of failovers (`RedisLink.onFailover`), and the store
 * sends its recent writes again then (redis-rewrite.ts).
 */
import { connectTopology } from '../cluster/node-redis-ha.js';
import { type TopologyOptions, topologyOf } from '../cluster/topology.js';
import { InvalidOptionError } from '../errors.js';
import { RedisTaskStore } from './redis-store.js';

export async function connectRedisTaskStore(
  o: TopologyOptions & { onError?: (error: Error) => void },
): Promise<RedisTaskStore> {
  const topology = topologyOf(o);
  if (topology === undefined)
    throw new InvalidOptionError('connectRedisTaskStore: give url, sentinel or cluster');
  const onError = o.onError ?? (() => undefined);
  const link = await connectTopology(topology, { onError });
  const store = new RedisTaskStore(link, { onError: (e) => onError(e as Error), closeLink: true });
  await store.start();
  return store;
}
