/**
 * For tests of what is sent again after a failover (cluster/recent-writes.ts): a link that can be
 * told it failed over and records every command Redis answered, a snapshot of every Sluice key, and
 * a redis-server for the tests of one describe.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { redisCluster } from '../../src/cluster/cluster.js';
import { keys } from '../../src/cluster/keys.js';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink, RedisReply } from '../../src/cluster/redis-link.js';
import { EventReplica, type ReplicaReplay } from '../../src/cluster/replica.js';
import { newTaskId } from '../../src/tasks/model.js';
import type { RedisTaskStore } from '../../src/tasks/redis-store.js';
import { RawSession, sleep, toolCall } from './http.js';
import { findRedis, type Redis, skipWithoutRedis, startRedis } from './redis.js';
import { adminCommand } from './redis-ha.js';
import { startServer } from './test-server.js';

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
 * A server on a cluster whose own link reports a failover when told (`own.failOver()`), and `admin`, a
 * second link for reading and changing Redis behind the cluster's back (what a promoted replica lacks).
 */
export async function failoverServer(connect: () => Promise<RedisLink>) {
  const admin = await connect();
  const own = new FailoverLink(await connect(), []);
  own.stopRecording();
  const cluster = redisCluster({ link: own, leaseMs: 1_000 });
  const node = await startServer({ cluster, keepaliveMs: 0 });
  return { admin, own, cluster, node };
}

/**
 * Every Sluice key, as comparable text: HASHes sorted, ZSETs with scores, strings; but the counts of
 * the passes after a failover (`sl:trewrite` and its `:beat`), the passes' bookkeeping, not the state.
 */
export async function snapshot(link: RedisLink): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const names = ((await link.send(['KEYS', 'sl:*'])) as string[])
    .filter((k) => !k.startsWith(keys.taskRewrites))
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

/**
 * Called in a describe: a redis-server started before its tests and stopped after them (with every
 * link it gave), and a test that says loudly when there is none. `connect` gives a link of its own;
 * without redis-server `available` is false and the describe declares nothing more.
 */
export function redisForDescribe(): { available: boolean; connect: () => Promise<RedisLink> } {
  let redis: Redis | undefined;
  const links: RedisLink[] = [];
  before(async () => {
    if (findRedis() !== undefined) redis = await startRedis();
  });
  after(async () => {
    for (const l of links) await l.close().catch(() => undefined);
    await redis?.stop();
  });
  test('needs redis-server', (t) => {
    skipWithoutRedis(t);
  });
  return {
    available: findRedis() !== undefined,
    connect: async () => {
      if (redis === undefined) throw new Error('redis-server did not start');
      const l = await connectNodeRedis({ url: redis.url, commandTimeoutMs: 2000 });
      links.push(l);
      return l;
    },
  };
}

/** Polls `check` until it holds (an error, as while Redis fails over, counts as not yet), within `ms`. */
export async function eventually(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    assert.ok(Date.now() < deadline, `${what} within ${ms} ms`);
    await sleep(100);
  }
}

/**
 * Tasks that a failover loses, for a Sentinel trial: each store finishes one task; `lose(port)`
 * deletes them on a (writable, test) replica once it has them, as if the master had died before
 * sending them; after the failover `check()` wants every store that keeps its writes to have its
 * task back, result and all, and the `control` store (recentWrites: false) to have lost its own.
 */
export async function tasksToLose(stores: RedisTaskStore[], control: RedisTaskStore) {
  const owner = 'p:alice';
  const tasks: { store: RedisTaskStore; id: string; result: string }[] = [];
  for (const [i, store] of [...stores, control].entries()) {
    const now = Date.now();
    const id = newTaskId();
    const lease = { leaseOwner: `runner-${i}`, leaseUntil: now + 60_000 };
    const t = { taskId: id, owner, client: `c-${i}`, status: 'working' as const, createdAt: now };
    const call = JSON.stringify({ name: 'x', arguments: {} });
    const more = { lastUpdatedAt: now, ttlMs: 600_000, pollIntervalMs: 100, call, ...lease };
    assert.equal(await store.create({ ...t, ...more }, 10), 'created');
    const result = JSON.stringify({ content: [{ type: 'text', text: `done ${i}` }] });
    assert.equal(await store.settle(id, lease.leaseOwner, { status: 'completed', result }), true);
    tasks.push({ store, id, result });
  }
  return {
    async lose(port: number): Promise<void> {
      for (const { id } of tasks) {
        await eventually(`task ${id} on the replica at ${port}`, 10_000, async () => {
          return (await adminCommand(port, ['HGET', keys.task(id), 's'])) === 'completed';
        });
        assert.equal(await adminCommand(port, ['DEL', keys.task(id)]), 1);
      }
    },
    async check(): Promise<void> {
      for (const { store, id, result } of tasks.slice(0, stores.length)) {
        await eventually(`task ${id} written again`, 30_000, async () => {
          const t = await store.get(id, owner);
          return t?.status === 'completed' && t.result === result;
        });
        assert.ok((store.recentWrites()?.passes ?? 0) > 0, 'a pass ran');
      }
      const lost = tasks.at(-1);
      assert.equal(
        await control.get(lost?.id ?? '', owner),
        undefined,
        'without the kept writes the task is gone',
      );
    },
  };
}

/**
 * A stream copy that a failover loses, for a Sentinel trial: a call of 10 progress notifications on
 * a session of `url`'s instance; `lose(port)` deletes its copy on a (writable, test) replica once
 * the replica has it, as if the master had died before sending it; after the failover `check()`
 * wants the copy back as it was (its owner writes it again from its buffer, cluster/replica.ts).
 */
export async function copyToLose(url: string, link: RedisLink) {
  const s = new RawSession(url);
  await s.init();
  const sid = s.sid ?? '';
  const r = await s.post(toolCall('progress', { n: 10, delayMs: 0 }, 'lose-1', 'tok'));
  assert.equal(r.status, 200);
  const reader = new EventReplica(link, {
    maxCount: 1_000,
    maxBytes: 1 << 20,
    maxAgeMs: 60_000,
    budgetBytes: 1 << 24,
  });
  let n = 0;
  let copied: ReplicaReplay = { status: 'unknown' };
  await eventually('the stream copied', 10_000, async () => {
    const metas = (await link.send(['KEYS', `sl:{${sid}}:m3:*`])) as string[];
    n = Number(metas[0]?.split(':').at(-1) ?? 0);
    copied = await reader.replay(sid, n, 0);
    // The priming event (an id, no data), 10 notifications, the answer; the request it answers.
    return (
      copied.status === 'ok' &&
      copied.finished &&
      copied.events.length === 12 &&
      /^id: [^\n]+\nretry: \d+\ndata: \n\n$/.test(copied.events[0]?.frame ?? '') &&
      /"id":"lose-1"/.test(copied.events[11]?.frame ?? '') &&
      copied.requests === '["lose-1"]'
    );
  });
  const names = [keys.streamMeta(sid, n), keys.streamList(sid, n)];
  return {
    /** The copy's two keys. */
    names,
    async lose(port: number): Promise<void> {
      await eventually(`the copy on the replica at ${port}`, 10_000, async () => {
        return (await adminCommand(port, ['EXISTS', ...names])) === 2;
      });
      assert.equal(await adminCommand(port, ['DEL', ...names]), 2);
    },
    async check(): Promise<void> {
      await eventually('the copy written again', 30_000, async () => {
        const back = await reader.replay(sid, n, 0);
        return JSON.stringify(back) === JSON.stringify(copied);
      });
    },
  };
}
