/**
 * For tests of what is sent again after a failover (cluster/recent-writes.ts): a link that can be
 * told it failed over and records every command Redis answered, and a snapshot of every Sluice key.
 */
import { keys } from '../../src/cluster/keys.js';
import type { RedisLink, RedisReply } from '../../src/cluster/redis-link.js';

/** A link that can be told it failed over, recording every command Redis answered until `stopRecording()`. */
export class FailoverLink implements RedisLink {
  readonly #inner: RedisLink;
  readonly #listeners = new Set<() => void>();
  readonly #log: string[][];
  #recording = true;
  constructor(inner: RedisLink, log: string[][]) {
    this.#inner = inner;
    this.#log = log;
  }
  async send(args: readonly string[]): Promise<RedisReply> {
    const r = await this.#inner.send(args);
    if (this.#recording) this.#log.push([...args]);
    return r;
  }
  stopRecording(): void {
    this.#recording = false;
  }
  close(): Promise<void> {
    return this.#inner.close();
  }
  onFailover(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }
  failOver(): void {
    for (const l of this.#listeners) l();
  }
}

/**
 * Every Sluice key, as comparable text: HASHes sorted, ZSETs with scores, strings; but the count of
 * the passes after a failover (`sl:trewrite`), which is the passes' bookkeeping, not the state.
 */
export async function snapshot(link: RedisLink): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const names = ((await link.send(['KEYS', 'sl:*'])) as string[])
    .filter((k) => k !== keys.taskRewrites)
    .sort();
  for (const k of names) {
    const type = await link.send(['TYPE', k]);
    if (type === 'hash') {
      const f = (await link.send(['HGETALL', k])) as string[];
      const pairs: string[] = [];
      for (let i = 0; i + 1 < f.length; i += 2) pairs.push(`${f[i]}=${f[i + 1]}`);
      out.set(k, pairs.sort().join('\n'));
    } else if (type === 'zset') {
      out.set(k, ((await link.send(['ZRANGE', k, '0', '-1', 'WITHSCORES'])) as string[]).join(' '));
    } else out.set(k, String(await link.send(['GET', k])));
  }
  return out;
}
