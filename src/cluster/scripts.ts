/**
 * Lua scripts run with EVALSHA, falling back to EVAL once when the server does not know the script
 * (first use, or after a Redis restart flushed the script cache). Each does one job atomically in
 * one round trip.
 */
import { createHash } from 'node:crypto';
import { isReplyError, type RedisLink, type RedisReply } from './redis-link.js';

export class Script {
  readonly source: string;
  readonly sha: string;
  constructor(source: string) {
    this.source = source;
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(link: RedisLink, keys: readonly string[], args: readonly string[]): Promise<RedisReply> {
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await link.send(['EVALSHA', this.sha, ...tail]);
    } catch (error) {
      if (!isReplyError(error) || !String((error as Error).message).includes('NOSCRIPT')) throw error;
      return link.send(['EVAL', this.source, ...tail]);
    }
  }
}
