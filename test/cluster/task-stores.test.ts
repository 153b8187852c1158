/**
 * The TaskStore contract, run against the in-memory store and against the Redis store on a real
 * redis-server (skipped loudly without one): creation and per-client limits, owner scoping, the
 * runner's lease (renew, settle only by the holder, a lapsed lease reads as failed with the
 * owner-lost error and frees the client's slot), sticky cancel heard through onCancel (on another
 * store instance too, over pub/sub), partial input answers, and TTL eviction. Then the memory
 * store's own bounds (count and bytes, finished tasks evicted first).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { MemoryTaskStore } from '../../src/tasks/memory-store.js';
import { newTaskId, OWNER_LOST, type TaskRecord } from '../../src/tasks/model.js';
import { RedisTaskStore } from '../../src/tasks/redis-store.js';
import type { FinishedBounds, TaskStore } from '../../src/tasks/store.js';
import { until } from '../helpers/http.js';
import { findRedis, type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';

/** Each test's client, so tests sharing one Redis do not share a live-task count. */
let client = 'c-alice';
beforeEach(() => {
  client = `c-${newTaskId()}`;
});

/** A clock the test moves. */
class Clock {
  t = 1_000_000;
  now = (): number => this.t;
}

function record(clock: Clock, over: Partial<TaskRecord> = {}): TaskRecord {
  return {
    taskId: newTaskId(),
    owner: 'p:alice',
    client,
    status: 'working',
    createdAt: clock.t,
    lastUpdatedAt: clock.t,
    ttlMs: 60_000,
    pollIntervalMs: 100,
    call: JSON.stringify({ name: 'x', arguments: {} }),
    leaseOwner: 'runner-1',
    leaseUntil: clock.t + 1000,
    ...over,
  };
}

function contract(
  name: string,
  make: (clock: Clock, bounds?: FinishedBounds) => Promise<{ store: TaskStore; peer?: TaskStore }>,
): void {
  describe(`TaskStore contract: ${name}`, () => {
    test('create, owner-scoped get, per-client limit', async () => {
      const clock = new Clock();
      const { store } = await make(clock);
      const a = record(clock);
      assert.equal(await store.create(a, 2), 'created');
      assert.equal((await store.get(a.taskId, 'p:alice'))?.status, 'working');
      assert.equal(await store.get(a.taskId, 'p:bob'), undefined, 'another owner sees nothing');
      assert.equal(await store.get(newTaskId(), 'p:alice'), undefined);
      assert.equal(await store.create(record(clock), 2), 'created');
      assert.equal(await store.create(record(clock), 2), 'client-limit');
      assert.equal(await store.create(record(clock, { client: 'c-other' }), 2), 'created');
    });

    test('only the lease holder renews and settles; settled tasks free the client slot', async () => {
      const clock = new Clock();
      const { store } = await make(clock);
      const a = record(clock);
      await store.create(a, 1);
      assert.equal(await store.renew(a.taskId, 'runner-2', clock.t + 5000), false);
      assert.equal(await store.renew(a.taskId, 'runner-1', clock.t + 5000), true);
      await store.progress(a.taskId, 'runner-1', { message: 'half way' });
      assert.equal((await store.get(a.taskId, 'p:alice'))?.statusMessage, 'half way');
      assert.equal(await store.settle(a.taskId, 'runner-2', { status: 'completed', result: '{}' }), false);
      const result = JSON.stringify({ content: [], resultType: 'complete' });
      assert.equal(await store.settle(a.taskId, 'runner-1', { status: 'completed', result }), true);
      const done = await store.get(a.taskId, 'p:alice');
      assert.equal(done?.status, 'completed');
      assert.equal(done?.result, result, 'an empty array survives the store');
      assert.equal(await store.settle(a.taskId, 'runner-1', { status: 'failed', error: OWNER_LOST }), false);
      assert.equal(await store.create(record(clock), 1), 'created', 'the finished task no longer counts');
    });

    test('a lapsed lease reads as failed with the owner-lost error, never working', async () => {
      const clock = new Clock();
      const { store } = await make(clock);
      const a = record(clock);
      await store.create(a, 1);
      clock.t += 1001;
      const t = await store.get(a.taskId, 'p:alice');
      assert.equal(t?.status, 'failed');
      assert.deepEqual(t?.error, OWNER_LOST);
      assert.equal(await store.renew(a.taskId, 'runner-1', clock.t + 1000), false, 'the old owner learns it');
      assert.equal(await store.settle(a.taskId, 'runner-1', { status: 'completed', result: '{}' }), false);
      assert.equal(await store.create(record(clock), 1), 'created', 'the lost task no longer counts');
    });

    test("the runner's late steps that no read preceded keep the task; one read past the lease refuses them", async () => {
      const clock = new Clock();
      const { store } = await make(clock);
      const late = record(clock);
      const read = record(clock);
      const done = record(clock);
      await store.create(late, 5);
      await store.create(read, 5);
      await store.create(done, 5);
      clock.t += 1500; // the 1 s leases ended (the runner's process stalled), nothing read them yet
      await store.progress(done.taskId, 'runner-1', { message: 'late' });
      assert.equal(await store.settle(done.taskId, 'runner-2', { status: 'completed', result: '{}' }), false);
      assert.equal(await store.settle(done.taskId, 'runner-1', { status: 'completed', result: '{}' }), true);
      const settled = await store.get(done.taskId, 'p:alice');
      assert.deepEqual([settled?.status, settled?.statusMessage], ['completed', 'late']);
      assert.equal(await store.renew(late.taskId, 'runner-2', clock.t + 1000), false, 'its holder only');
      assert.equal(await store.renew(late.taskId, 'runner-1', clock.t + 1000), true, 'no one saw it lapse');
      assert.equal((await store.get(late.taskId, 'p:alice'))?.status, 'working');
      assert.equal((await store.get(read.taskId, 'p:alice'))?.status, 'failed', 'read past its lease');
      assert.equal(await store.renew(read.taskId, 'runner-1', clock.t + 1000), false, 'the reader was told');
      await store.progress(read.taskId, 'runner-1', { message: 'too late' });
      assert.equal(await store.settle(read.taskId, 'runner-1', { status: 'completed', result: '{}' }), false);
      assert.deepEqual((await store.get(read.taskId, 'p:alice'))?.error, OWNER_LOST);
      clock.t += 999;
      assert.equal(
        (await store.get(late.taskId, 'p:alice'))?.status,
        'working',
        'renewed from its late time',
      );
      assert.equal(await store.settle(late.taskId, 'runner-1', { status: 'completed', result: '{}' }), true);
    });

    test('input_required with the lease kept: renewed by its runner only, lapses to owner-lost; without it never lapses', async () => {
      const clock = new Clock();
      const { store } = await make(clock);
      const kept = record(clock);
      const waiting = record(clock);
      await store.create(kept, 5);
      await store.create(waiting, 5);
      const input = { status: 'input_required', inputRequests: {}, requestState: undefined } as const;
      assert.equal(
        await store.settle(kept.taskId, 'runner-1', { ...input, leaseUntil: clock.t + 1000 }),
        true,
      );
      assert.equal(await store.settle(waiting.taskId, 'runner-1', input), true);
      assert.equal(await store.renew(kept.taskId, 'runner-2', clock.t + 2000), false);
      assert.equal(await store.renew(kept.taskId, 'runner-1', clock.t + 2000), true);
      assert.equal(await store.renew(waiting.taskId, 'runner-1', clock.t + 2000), false, 'no lease to renew');
      clock.t += 1500;
      assert.equal((await store.get(kept.taskId, 'p:alice'))?.status, 'input_required', 'renewed');
      clock.t += 501;
      const lost = await store.get(kept.taskId, 'p:alice');
      assert.equal(lost?.status, 'failed');
      assert.deepEqual(lost?.error, OWNER_LOST);
      assert.equal((await store.get(waiting.taskId, 'p:alice'))?.status, 'input_required');
      // Answered (an empty answer: nothing was asked through the store), the runner has it again.
      const back = record(clock);
      await store.create(back, 5);
      await store.settle(back.taskId, 'runner-1', { ...input, leaseUntil: clock.t + 1000 });
      const r = await store.answer(back.taskId, 'p:alice', {}, 'runner-1', clock.t + 1000);
      assert.equal(r?.resume, true);
      assert.equal(r?.task.status, 'working');
      assert.equal(await store.settle(back.taskId, 'runner-1', { status: 'completed', result: '{}' }), true);
    });

    test('at the per-client limit, a task whose lease lapsed unread frees its slot; an expired one too', async () => {
      const clock = new Clock();
      const { store } = await make(clock);
      await store.create(record(clock), 2);
      await store.create(record(clock, { ttlMs: 500, leaseUntil: clock.t + 60_000 }), 2);
      assert.equal(await store.create(record(clock), 2), 'client-limit');
      clock.t += 501; // the second expired
      assert.equal(await store.create(record(clock, { leaseUntil: clock.t + 60_000 }), 2), 'created');
      assert.equal(await store.create(record(clock), 2), 'client-limit');
      clock.t += 1001; // the first lapsed (1 s lease), never read
      assert.equal(await store.create(record(clock), 2), 'created', 'the lost task no longer counts');
    });

    test('at the limit, a task waiting for input whose runner kept the lease and died frees its slot, unread', async () => {
      const clock = new Clock();
      const { store } = await make(clock);
      const a = record(clock);
      await store.create(a, 1);
      const input = { status: 'input_required', inputRequests: {}, requestState: undefined } as const;
      await store.settle(a.taskId, 'runner-1', { ...input, leaseUntil: clock.t + 1000 });
      assert.equal(await store.create(record(clock), 1), 'client-limit');
      clock.t += 1001; // its lease lapsed before any renewal, never read
      assert.equal(await store.create(record(clock), 1), 'created', 'the lost task no longer counts');
    });

    test('at the limit with every task of the client lapsed: the slots free, and new tasks count again', async () => {
      const clock = new Clock();
      const { store } = await make(clock);
      await store.create(record(clock), 2);
      await store.create(record(clock), 2);
      clock.t += 1001; // both lapsed (1 s leases), never read
      assert.equal(await store.create(record(clock), 2), 'created');
      assert.equal(await store.create(record(clock), 2), 'created');
      assert.equal(await store.create(record(clock), 2), 'client-limit', 'the two new tasks are counted');
    });

    test('cancel is sticky, reaches onCancel (also on a peer), and is a no-op on a finished task', async () => {
      const clock = new Clock();
      const { store, peer } = await make(clock);
      const heard: string[] = [];
      const heardPeer: string[] = [];
      store.onCancel((id) => heard.push(id));
      peer?.onCancel((id) => heardPeer.push(id));
      const a = record(clock);
      await store.create(a, 5);
      assert.equal(await store.cancel(a.taskId, 'p:bob'), undefined);
      assert.equal((await (peer ?? store).cancel(a.taskId, 'p:alice'))?.status, 'cancelled');
      if (peer !== undefined) await until(() => heard.includes(a.taskId), 5000, 'the cancel crossed pub/sub');
      else assert.deepEqual(heard, [a.taskId]);
      assert.equal(await store.settle(a.taskId, 'runner-1', { status: 'completed', result: '{}' }), false);
      assert.equal((await store.get(a.taskId, 'p:alice'))?.status, 'cancelled');
      const b = record(clock);
      await store.create(b, 5);
      await store.settle(b.taskId, 'runner-1', { status: 'completed', result: '{"ok":1}' });
      assert.equal((await store.cancel(b.taskId, 'p:alice'))?.status, 'completed');
      assert.equal(heard.includes(b.taskId) || heardPeer.includes(b.taskId), false);
    });

    test('input answers: partial, unknown keys ignored, the last one resumes under a new lease', async () => {
      const clock = new Clock();
      const { store } = await make(clock);
      const a = record(clock);
      await store.create(a, 5);
      const inputRequests = {
        one: '{"method":"elicitation/create"}',
        two: '{"method":"elicitation/create"}',
      };
      await store.settle(a.taskId, 'runner-1', {
        status: 'input_required',
        inputRequests,
        requestState: 'st',
      });
      const ir = await store.get(a.taskId, 'p:alice');
      assert.equal(ir?.status, 'input_required');
      assert.deepEqual({ ...ir?.inputRequests }, inputRequests);
      assert.equal(await store.answer(a.taskId, 'p:bob', { one: '1' }, 'r2', clock.t + 1000), undefined);
      const first = await store.answer(a.taskId, 'p:alice', { one: '"a"', zzz: '"x"' }, 'r2', clock.t + 1000);
      assert.equal(first?.resume, false);
      assert.deepEqual(Object.keys(first?.task.inputRequests ?? {}), ['two']);
      const last = await store.answer(a.taskId, 'p:alice', { two: '"b"' }, 'r2', clock.t + 1000);
      assert.equal(last?.resume, true);
      assert.equal(last?.task.status, 'working');
      assert.equal(last?.task.leaseOwner, 'r2');
      assert.deepEqual({ ...last?.task.inputResponses }, { one: '"a"', two: '"b"' });
      assert.equal(last?.task.requestState, 'st');
      const again = await store.answer(a.taskId, 'p:alice', { two: '"c"' }, 'r3', clock.t + 1000);
      assert.equal(again?.resume, false, 'one resumer only');
    });

    test("list: an owner's tasks in creation order, by pages; a foreign cursor is refused", async () => {
      const clock = new Clock();
      const { store, peer } = await make(clock);
      const owner = `p:${newTaskId()}`;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const t = record(clock, { owner, ttlMs: i === 1 ? 2000 : 60_000 });
        assert.equal(await store.create(t, 10), 'created');
        ids.push(t.taskId);
        clock.t += 1;
      }
      await store.create(record(clock), 10); // another owner's
      clock.t += 5000; // the second one expired
      const reader = peer ?? store;
      const p1 = await reader.list(owner, undefined, 2);
      assert.deepEqual(
        p1?.tasks.map((t) => t.taskId),
        [ids[0], ids[2]],
      );
      const p2 = await reader.list(owner, p1?.nextCursor, 2);
      assert.deepEqual(
        p2?.tasks.map((t) => t.taskId),
        [ids[3], ids[4]],
      );
      assert.equal(p2?.nextCursor, undefined);
      assert.equal(await reader.list(owner, newTaskId(), 2), undefined, 'a cursor it never gave');
      assert.equal(await reader.list(owner, 'x'.repeat(200), 2), undefined);
      assert.deepEqual((await reader.list(`p:${newTaskId()}`, undefined, 2))?.tasks, []);
    });

    test('messages with a settlement and a cancel; a failed task keeps a result when given one', async () => {
      const clock = new Clock();
      const { store, peer } = await make(clock);
      const a = record(clock);
      await store.create(a, 5);
      await store.settle(a.taskId, 'runner-1', {
        status: 'failed',
        error: { code: -32603, message: 'no' },
        result: '{"isError":true}',
        message: 'gave up',
      });
      const fa = await (peer ?? store).get(a.taskId, 'p:alice');
      assert.equal(fa?.status, 'failed');
      assert.equal(fa?.result, '{"isError":true}');
      assert.equal(fa?.statusMessage, 'gave up');
      const b = record(clock);
      await store.create(b, 5);
      assert.equal((await (peer ?? store).cancel(b.taskId, 'p:alice', 'stop it'))?.statusMessage, 'stop it');
      const c = record(clock);
      await store.create(c, 5);
      assert.equal(await store.settle(c.taskId, 'runner-1', { status: 'completed' }), true);
      const done = await store.get(c.taskId, 'p:alice');
      assert.equal(done?.status, 'completed');
      assert.equal(done?.result, undefined);
    });

    test("a client's finished tasks beyond its bounds: its own oldest go; another client's, and live ones, stay", async () => {
      const clock = new Clock();
      const { store, peer } = await make(clock, { maxFinishedPerClient: 3, maxFinishedBytesPerClient: 4096 });
      const reader = peer ?? store;
      const kept = async (t: TaskRecord): Promise<boolean> =>
        (await reader.get(t.taskId, t.owner)) !== undefined;
      const finish = async (over: Partial<TaskRecord>, result: string): Promise<TaskRecord> => {
        clock.t += 10;
        const t = record(clock, over);
        assert.equal(await store.create(t, 50), 'created');
        assert.equal(await store.settle(t.taskId, 'runner-1', { status: 'completed', result }), true);
        return t;
      };
      const theirs = await finish({ client: `${client}-other`, owner: 'p:bob' }, '{"theirs":1}');
      const live = record(clock);
      assert.equal(await store.create(live, 50), 'created');
      const mine: TaskRecord[] = [];
      for (let i = 0; i < 5; i++) mine.push(await finish({}, `{"i":${i}}`));
      assert.deepEqual(
        await Promise.all(mine.map(kept)),
        [false, false, true, true, true],
        'three kept, the oldest gone',
      );
      // A task failed by its runner's lapsed lease counts once it reads as failed.
      clock.t += 10;
      const lapsed = record(clock, { leaseUntil: clock.t + 5 });
      assert.equal(await store.create(lapsed, 50), 'created');
      clock.t += 100;
      assert.deepEqual((await reader.get(lapsed.taskId, 'p:alice'))?.error, OWNER_LOST);
      assert.deepEqual(await Promise.all(mine.map(kept)), [false, false, false, true, true]);
      // A cancelled one counts too.
      clock.t += 10;
      const cancelled = record(clock);
      assert.equal(await store.create(cancelled, 50), 'created');
      assert.equal((await store.cancel(cancelled.taskId, 'p:alice'))?.status, 'cancelled');
      assert.deepEqual(await Promise.all(mine.map(kept)), [false, false, false, false, true]);
      // Over the byte bound alone: everything older goes, the newest stays even when larger than the bound.
      const big = await finish({}, JSON.stringify({ text: 'x'.repeat(5000) }));
      assert.deepEqual(await Promise.all([...mine, lapsed, cancelled].map(kept)), [
        false,
        false,
        false,
        false,
        false,
        false,
        false,
      ]);
      assert.ok(await kept(big), 'the newest finished task is kept');
      assert.ok(await kept(theirs), "another client's finished task is untouched");
      assert.equal(
        (await reader.get(live.taskId, 'p:alice'))?.status,
        'working',
        'a live task is never dropped',
      );
    });
  });
}

contract('memory', async (clock, bounds) => ({ store: new MemoryTaskStore({ now: clock.now, ...bounds }) }));

describe('TaskStore on Redis', () => {
  let redis: Redis | undefined;
  const links: RedisLink[] = [];
  before(async () => {
    if (findRedis() !== undefined) redis = await startRedis();
  });
  after(async () => {
    for (const l of links) await l.close();
    await redis?.stop();
  });

  test('needs redis-server', (t) => {
    skipWithoutRedis(t);
  });
  if (findRedis() === undefined) return;

  contract('redis', async (clock, bounds) => {
    if (redis === undefined) throw new Error('redis did not start');
    const make = async () => {
      const link = await connectNodeRedis({ url: redis?.url ?? '', commandTimeoutMs: 2000 });
      links.push(link);
      const s = new RedisTaskStore(link, { now: clock.now, ...bounds });
      await s.start();
      return s;
    };
    return { store: await make(), peer: await make() };
  });

  /** A store on its own link, and a clock set to now. */
  async function freshStore(): Promise<{ link: RedisLink; store: RedisTaskStore; clock: Clock }> {
    if (redis === undefined) throw new Error('redis did not start');
    const link = await connectNodeRedis({ url: redis.url, commandTimeoutMs: 2000 });
    links.push(link);
    const clock = new Clock();
    clock.t = Date.now();
    return { link, store: new RedisTaskStore(link), clock };
  }

  test('a late renewal after a creation let the task go from its client count: counted again', async () => {
    const { link, clock } = await freshStore();
    const store = new RedisTaskStore(link, { now: clock.now });
    const a = record(clock, { client: `c-${newTaskId()}` });
    await store.create(a, 5);
    clock.t += 1500; // its 1 s lease ended unread; the next creation of its client drops it from the count
    await store.create(record(clock, { client: a.client }), 5);
    assert.equal(await link.send(['ZSCORE', `sl:tasks:{${a.client}}`, a.taskId]), null);
    assert.equal(await store.renew(a.taskId, 'runner-1', clock.t + 1000), true);
    assert.equal(Number(await link.send(['ZSCORE', `sl:tasks:{${a.client}}`, a.taskId])), clock.t + 1000);
    assert.equal(await store.renew(a.taskId, 'runner-1', clock.t + 2000), true, 'an on-time renewal');
    assert.equal(Number(await link.send(['ZSCORE', `sl:tasks:{${a.client}}`, a.taskId])), clock.t + 2000);
  });

  test('an id already taken is refused and leaves the first task listed', async () => {
    const { store, clock } = await freshStore();
    const owner = `p:${newTaskId()}`;
    const a = record(clock, { owner });
    assert.equal(await store.create(a, 5), 'created');
    // The task and its list entry are written at once: the refused second write removes only what
    // it added itself.
    assert.equal(await store.create({ ...a, call: '{"name":"other"}' }, 5), 'store-full');
    assert.deepEqual(
      (await store.list(owner, undefined, 10))?.tasks.map((t) => [t.taskId, t.call]),
      [[a.taskId, a.call]],
    );
  });

  test('a task expires with its TTL; its HASH has one hash tag', async () => {
    const { link, store, clock } = await freshStore();
    const a = record(clock, { ttlMs: 1000, leaseUntil: clock.t + 60_000 });
    await store.create(a, 5);
    assert.ok(((await link.send(['PTTL', `sl:task:{${a.taskId}}`])) as number) > 0);
    const deadline = Date.now() + 5000;
    while ((await store.get(a.taskId, 'p:alice')) !== undefined) {
      assert.ok(Date.now() < deadline, 'evicted within 5 s of its 1 s TTL');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});

describe('RedisTaskStore: the keys that bound finished tasks', () => {
  let redis: Redis | undefined;
  let link: RedisLink | undefined;
  before(async () => {
    if (findRedis() !== undefined) redis = await startRedis();
  });
  after(async () => {
    await link?.close();
    await redis?.stop();
  });

  test('share the client hash tag, expire with the last task they count, and the call text of a finished task is let go', async (t) => {
    if (skipWithoutRedis(t) || redis === undefined) return;
    link = await connectNodeRedis({ url: redis.url, commandTimeoutMs: 2000 });
    const store = new RedisTaskStore(link);
    const clock = new Clock();
    clock.t = Date.now();
    const a = record(clock, { ttlMs: 5000 });
    await store.create(a, 5);
    await store.settle(a.taskId, 'runner-1', { status: 'completed', result: '{"ok":true}' });
    for (const key of [`sl:tdone:{${client}}`, `sl:tbytes:{${client}}`]) {
      const ttl = (await link.send(['PTTL', key])) as number;
      assert.ok(ttl > 0 && ttl <= 5000, `${key} expires with its task (PTTL ${ttl})`);
    }
    assert.equal(await link.send(['HGET', `sl:task:{${a.taskId}}`, 'call']), '');
    assert.equal((await store.get(a.taskId, 'p:alice'))?.result, '{"ok":true}');
  });

  test("the bounds over all clients: anyone's first to expire go, and no pair counts a task that is gone", async (t) => {
    if (skipWithoutRedis(t) || redis === undefined) return;
    link ??= await connectNodeRedis({ url: redis.url, commandTimeoutMs: 2000 });
    const l = link;
    await l.send(['FLUSHALL']);
    const clock = new Clock();
    clock.t = Date.now();
    const clients = ['c-one', 'c-two', 'c-three'];
    const make = (o: ConstructorParameters<typeof RedisTaskStore>[1]) =>
      new RedisTaskStore(l, { now: clock.now, ...o });
    const finish = async (store: RedisTaskStore, c: string, result = '{"ok":1}'): Promise<TaskRecord> => {
      clock.t += 10;
      const r = record(clock, { client: c, owner: `p:${c}` });
      assert.equal(await store.create(r, 50), 'created');
      assert.equal(await store.settle(r.taskId, 'runner-1', { status: 'completed', result }), true);
      return r;
    };
    const kept = async (r: TaskRecord) => (await l.send(['EXISTS', `sl:task:{${r.taskId}}`])) === 1;
    /** Each pair's members and byte sum agree with the tasks that are still there. */
    const consistent = async (what: string) => {
      const all = (await l.send(['ZRANGE', 'sl:tfinished:{all}', '0', '-1'])) as string[];
      for (const m of all)
        assert.equal(await l.send(['EXISTS', `sl:task:{${m.split(':')[0]}}`]), 1, `${what}: ${m}`);
      const sizes = (await l.send(['HGETALL', 'sl:tfbytes:{all}'])) as string[];
      let sum = 0;
      for (let i = 0; i < sizes.length; i += 2) if (sizes[i] !== '#') sum += Number(sizes[i + 1]);
      assert.equal(Number((await l.send(['HGET', 'sl:tfbytes:{all}', '#'])) ?? 0), sum, `${what}: the sum`);
      assert.equal(sizes.length / 2 - 1, all.length, `${what}: one size per member`);
      for (const c of clients) {
        for (const id of (await l.send(['ZRANGE', `sl:tdone:{${c}}`, '0', '-1'])) as string[])
          assert.equal(await l.send(['EXISTS', `sl:task:{${id}}`]), 1, `${what}: ${c} counts ${id}`);
      }
      return all.length;
    };
    // Six tasks of three clients, four kept over all: the two first to expire go, whoever's they are.
    const store = make({ maxFinished: 4 });
    const six: TaskRecord[] = [];
    for (let i = 0; i < 6; i++) six.push(await finish(store, clients[i % 3] as string));
    assert.deepEqual(await Promise.all(six.map(kept)), [false, false, true, true, true, true]);
    assert.equal(await consistent('count bound'), 4);
    assert.equal(await l.send(['ZCARD', 'sl:tdone:{c-one}']), 1, "c-one's pair forgot its dropped task");
    // A client's own bound drops its oldest from the pair over all clients too.
    const own = make({ maxFinished: 4, maxFinishedPerClient: 1 });
    const next = await finish(own, 'c-two');
    assert.equal(await kept(six[4] as TaskRecord), false, "c-two's older task went by its own bound");
    assert.ok(await kept(next));
    await consistent('client bound');
    // Over the byte bound: everything that expires before the big one goes, whoever's it is.
    const big = await finish(
      make({ maxFinishedBytes: 4096 }),
      'c-three',
      JSON.stringify({ t: 'x'.repeat(5000) }),
    );
    assert.ok(await kept(big), 'the newest is kept');
    assert.equal(await consistent('byte bound'), 1);
  });

  test('a task failed by a lapsed lease is counted on its first read only: later reads are one round trip', async (t) => {
    if (skipWithoutRedis(t) || redis === undefined) return;
    link ??= await connectNodeRedis({ url: redis.url, commandTimeoutMs: 2000 });
    const l = link;
    let sent = 0;
    const counting: RedisLink = {
      send: (args) => {
        sent++;
        return l.send(args);
      },
      close: () => Promise.resolve(),
    };
    const clock = new Clock();
    clock.t = Date.now();
    const store = new RedisTaskStore(counting, { now: clock.now });
    const lapsed = record(clock, { leaseUntil: clock.t + 5 });
    assert.equal(await store.create(lapsed, 50), 'created');
    clock.t += 100;
    assert.deepEqual((await store.get(lapsed.taskId, 'p:alice'))?.error, OWNER_LOST);
    assert.equal((await l.send(['ZSCORE', `sl:tdone:{${client}}`, lapsed.taskId])) !== null, true, 'counted');
    for (let i = 0; i < 3; i++) {
      sent = 0;
      assert.equal((await store.get(lapsed.taskId, 'p:alice'))?.status, 'failed');
      assert.equal(sent, 1, 'one script call, nothing counted again');
    }
  });

  test('the bounds are validated once', () => {
    const fakeLink: RedisLink = { send: () => Promise.resolve(null), close: () => Promise.resolve() };
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      assert.throws(
        () => new MemoryTaskStore({ maxFinishedPerClient: bad }),
        /maxFinishedPerClient must be a positive integer/,
      );
      assert.throws(
        () => new MemoryTaskStore({ maxFinishedBytesPerClient: bad }),
        /maxFinishedBytesPerClient/,
      );
      assert.throws(
        () => new RedisTaskStore(fakeLink, { maxFinished: bad }),
        /maxFinished must be a positive integer/,
      );
      assert.throws(
        () => new RedisTaskStore(fakeLink, { maxFinishedBytes: bad }),
        /maxFinishedBytes must be/,
      );
    }
  });
});

describe('MemoryTaskStore bounds', () => {
  test('count and bytes: finished tasks are evicted first; live ones are never dropped', async () => {
    const clock = new Clock();
    const store = new MemoryTaskStore({ now: clock.now, maxTasks: 2, maxBytes: 100_000 });
    const a = record(clock);
    const b = record(clock);
    await store.create(a, 10);
    await store.create(b, 10);
    assert.equal(await store.create(record(clock), 10), 'store-full', 'two live tasks fill it');
    await store.settle(a.taskId, 'runner-1', { status: 'completed', result: '{}' });
    const c = record(clock);
    assert.equal(await store.create(c, 10), 'created');
    assert.equal(await store.get(a.taskId, 'p:alice'), undefined, 'the finished one made room');
    assert.equal((await store.get(b.taskId, 'p:alice'))?.status, 'working');
    const big = new MemoryTaskStore({ now: clock.now, maxBytes: 2000 });
    assert.equal(await big.create(record(clock, { call: 'x'.repeat(5000) }), 10), 'store-full');
    assert.equal(big.size.tasks, 0);
    assert.equal(big.size.bytes, 0);
  });

  test('the task that finished longest ago is evicted first, whatever order they were created in', async () => {
    const clock = new Clock();
    const store = new MemoryTaskStore({ now: clock.now, maxTasks: 3, maxBytes: 100_000 });
    const [a, b, c] = [record(clock), record(clock), record(clock)];
    for (const t of [a, b, c]) await store.create(t, 10);
    // Finished c, a, b: c goes first, then a; b stays.
    for (const t of [c, a, b])
      await store.settle(t.taskId, 'runner-1', { status: 'completed', result: '{}' });
    await store.create(record(clock), 10);
    assert.equal(await store.get(c.taskId, 'p:alice'), undefined, 'c finished first');
    assert.ok(await store.get(a.taskId, 'p:alice'));
    await store.create(record(clock), 10);
    assert.equal(await store.get(a.taskId, 'p:alice'), undefined, 'then a');
    assert.ok(await store.get(b.taskId, 'p:alice'));
  });

  test('churn behind a long-lived finished task: eviction stays right, the bounds hold', async () => {
    const clock = new Clock();
    const store = new MemoryTaskStore({ now: clock.now, maxTasks: 50, maxBytes: 1_000_000 });
    const keeper = record(clock, { ttlMs: 10_000_000, leaseUntil: clock.t + 10_000_000 });
    await store.create(keeper, 100);
    await store.settle(keeper.taskId, 'runner-1', { status: 'completed', result: '{"k":1}' });
    const live = record(clock, { ttlMs: 10_000_000, leaseUntil: clock.t + 10_000_000 });
    await store.create(live, 100);
    // 20,000 short tasks finish and expire (TTL) or are evicted, far more than the store holds.
    for (let i = 0; i < 20_000; i++) {
      const t = record(clock, { ttlMs: 50 });
      assert.equal(await store.create(t, 100), 'created', `task ${i}`);
      if (i % 3 !== 0) await store.settle(t.taskId, 'runner-1', { status: 'completed', result: '{}' });
      else await store.cancel(t.taskId, 'p:alice');
      clock.t += 1;
    }
    assert.ok(store.size.tasks <= 50, `${store.size.tasks} tasks kept`);
    assert.equal(
      (await store.get(live.taskId, 'p:alice'))?.status,
      'working',
      'a live task is never dropped',
    );
    // The keeper finished first of all kept tasks: the next eviction takes it, not a younger one.
    const young = [];
    for (let i = 0; i < 49; i++)
      young.push(record(clock, { ttlMs: 10_000_000, leaseUntil: clock.t + 10_000_000 }));
    clock.t += 1000; // every short task is past its TTL
    for (const t of young) assert.equal(await store.create(t, 100), 'created');
    assert.equal(await store.get(keeper.taskId, 'p:alice'), undefined, 'the finished keeper made room');
    assert.equal(await store.create(record(clock), 100), 'store-full', 'live tasks only: full');
    assert.equal(store.size.tasks, 50);
  });

  test('TTL: an expired task is gone', async () => {
    const clock = new Clock();
    const store = new MemoryTaskStore({ now: clock.now });
    const a = record(clock, { ttlMs: 1000, leaseUntil: clock.t + 60_000 });
    await store.create(a, 10);
    clock.t += 1000;
    assert.equal(await store.get(a.taskId, 'p:alice'), undefined);
    assert.equal(store.size.tasks, 0);
  });
});
