/**
 * A RedisLink that is a cluster's own, for a task store on the same Redis (`sluice serve --redis`):
 * one command connection and one subscriber connection per instance, as the cluster alone has
 * (docs/scale-out.md), instead of a second pair for the tasks. Until the cluster has joined,
 * commands reject with RedisUnavailableError (a task request then gets 503, as while Redis is
 * down); `serve()` joins before it resolves. Closing it closes nothing: the cluster closes its
 * link when it stops, so close the task service after the server (as `sluice serve` does).
 *
 * With Sentinel or a Redis Cluster the shared link tells of failovers (`onFailover`), after the
 * cluster has written its own entries again: the task store then sends its recent writes again.
 */
import type { RedisCluster } from './cluster.js';
import { RedisUnavailableError } from './node-redis.js';
import type { RedisLink, RedisReply } from './redis-link.js';

function notJoined(): Error {
  return new RedisUnavailableError('the cluster has not joined Redis yet');
}

export function sharedLinkOf(cluster: RedisCluster): RedisLink {
  return {
    send(args: readonly string[]): Promise<RedisReply> {
      const link = cluster.link;
      return link === undefined ? Promise.reject(notJoined()) : link.send(args);
    },
    subscribe(channel: string, sharded: boolean, onMessage: (message: string) => void): Promise<void> {
      const link = cluster.link;
      if (link === undefined) return Promise.reject(notJoined());
      if (link.subscribe === undefined) return Promise.resolve();
      return link.subscribe(channel, sharded, onMessage);
    },
    close: () => Promise.resolve(),
    ...(cluster.followsFailovers
      ? { onFailover: (listener: () => void) => cluster.onFailover(listener) }
      : {}),
  };
}
