/**
 * Lua scripts run with EVALSHA, falling back to EVAL once when the server does not know the script
 * (first use, or after a Redis restart flushed the script cache). Each does one job atomically in
 * one round trip. Every script touches only the keys it is given, all of one hash tag (keys.ts).
 */
import { createHash } from 'node:crypto';
import { oneSlot } from './keys.js';
import { isReplyError, type RedisLink, type RedisReply } from './redis-link.js';

/** A script was asked to touch keys of more than one hash tag (a bug in the caller). */
export class CrossSlotError extends Error {
  readonly code = 'cross-slot';
  constructor(keys: readonly string[]) {
    super(`a script's keys must share one hash tag (one Redis Cluster slot): ${keys.join(' ')}`);
    this.name = 'CrossSlotError';
  }
}

export class Script {
  readonly source: string;
  readonly sha: string;
  constructor(source: string) {
    this.source = source;
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(link: RedisLink, keys: readonly string[], args: readonly string[]): Promise<RedisReply> {
    // A Redis Cluster runs a script on one node, so its keys must share one slot (CROSSSLOT
    // otherwise, and only there): refused everywhere, so a single-server test catches it too.
    if (!oneSlot(keys)) throw new CrossSlotError(keys);
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await link.send(['EVALSHA', this.sha, ...tail]);
    } catch (error) {
      if (!isReplyError(error) || !String((error as Error).message).includes('NOSCRIPT')) throw error;
      return link.send(['EVAL', this.source, ...tail]);
    }
  }
}
