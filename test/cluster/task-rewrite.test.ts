/**
 * The Redis task store's writes sent again after a failover (cluster/recent-writes.ts,
 * tasks/redis-rewrite.ts), on a real redis-server. Two stores (two instances) drive four tasks
 * through their lives, each step through either: a plain run, an input round answered through the
 * other instance, a cancel racing the runner's completion, answers in two parts. Every command Redis
 * executed is recorded in order. Then, for every cut of that record, Redis is emptied and given only
 * the commands before the cut — what a promoted replica holds when asynchronous replication lost
 * the rest — and both stores are told of a failover, the second instance first (its steps need the
 * first's). Each cut must end in exactly the state of the whole run: every task, its place in its
 * owner's list, the finished-task bounds, the client's live count (a creation sent again after
 * another instance finished the task puts the count back; the pass's repair takes it out).
 * Then the wiring for a caller's own link that reports failovers (`redisCluster({ link })`): the
 * cluster marks a new run and writes its entries again, then tells the task store on its shared link;
 * a DPoP proof spent through the cluster is spent again (a replay of it stays refused).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { keys } from '../../src/cluster/keys.js';
import { proofReplaysOf } from '../../src/cluster/proof-replays.js';
import { sharedLinkOf } from '../../src/cluster/shared-link.js';
import { redisCluster } from '../../src/server/index.js';
import { newTaskId, type TaskRecord } from '../../src/tasks/model.js';
import { RedisTaskStore } from '../../src/tasks/redis-store.js';
import { FailoverLink, failoverServer, redisForDescribe, snapshot } from '../helpers/failover-link.js';
import { sleep, until } from '../helpers/http.js';

const LEASE_MS = 60_000;
/** Watching after a failover, quick for a test: a look every 10 ms, done after 150 ms without a change. */
const WATCH = { pollMs: 10, quietMs: 150 };

function record(owner: string, client: string, runner: string): TaskRecord {
  const now = Date.now();
  return {
    taskId: newTaskId(),
    owner,
    client,
    status: 'working',
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: 600_000,
    pollIntervalMs: 100,
    call: JSON.stringify({ name: 'x', arguments: { n: 1 } }),
    leaseOwner: runner,
    leaseUntil: now + LEASE_MS,
  };
}

/** Four tasks, each step through one of the two instances (X runs the tool first, Y answers for the client). */
async function lives(x: RedisTaskStore, y: RedisTaskStore): Promise<string[]> {
  const owner = 'p:alice';
  const client = 'c-alice';
  const lease = () => Date.now() + LEASE_MS;
  // A plain run: progress, a renewal, completed.
  const a = record(owner, client, 'X');
  assert.equal(await x.create(a, 10), 'created');
  await x.progress(a.taskId, 'X', { message: 'half', partialText: 'par', partialTruncated: false });
  assert.equal(await x.renew(a.taskId, 'X', lease()), true);
  assert.equal(await x.settle(a.taskId, 'X', { status: 'completed', result: '{"content":[]}' }), true);
  // An input round answered through Y, which runs the next round and completes it.
  const b = record(owner, client, 'X');
  assert.equal(await x.create(b, 10), 'created');
  assert.equal(
    await x.settle(b.taskId, 'X', {
      status: 'input_required',
      inputRequests: { q: '{"m":1}' },
      requestState: 'rs1',
    }),
    true,
  );
  assert.equal((await y.answer(b.taskId, owner, { q: '{"a":1}' }, 'Y', lease()))?.resume, true);
  await y.progress(b.taskId, 'Y', { message: 'round 2' });
  assert.equal(await y.settle(b.taskId, 'Y', { status: 'completed', result: '{"content":[1]}' }), true);
  // A cancel through Y before the runner's completion, which is refused.
  const c = record(owner, client, 'X');
  assert.equal(await x.create(c, 10), 'created');
  assert.equal((await y.cancel(c.taskId, owner, 'stop'))?.status, 'cancelled');
  assert.equal(await x.settle(c.taskId, 'X', { status: 'completed', result: '{}' }), false);
  // Two questions answered one at a time through Y, then a failure.
  const d = record(owner, client, 'X');
  assert.equal(await x.create(d, 10), 'created');
  const both = { inputRequests: { a: '{}', b: '{}' }, requestState: undefined };
  assert.equal(await x.settle(d.taskId, 'X', { status: 'input_required', ...both }), true);
  assert.equal((await y.answer(d.taskId, owner, { a: '1' }, 'Y', lease()))?.resume, false);
  assert.equal((await y.answer(d.taskId, owner, { b: '2' }, 'Y', lease()))?.resume, true);
  const error = { code: -32603, message: 'boom' };
  assert.equal(await y.settle(d.taskId, 'Y', { status: 'failed', error }), true);
  return [a.taskId, b.taskId, c.taskId, d.taskId];
}

describe('task store: writes sent again after a failover, at every cut of what Redis had', () => {
  const { available, connect } = redisForDescribe();
  if (!available) return;

  async function setUp(rewrite: boolean) {
    const admin = await connect();
    await admin.send(['FLUSHALL']);
    const log: string[][] = [];
    const lx = new FailoverLink(await connect(), log);
    const ly = new FailoverLink(await connect(), log);
    const o = rewrite ? { recentWrites: WATCH } : { recentWrites: false as const };
    const x = new RedisTaskStore(lx, o);
    const y = new RedisTaskStore(ly, o);
    const ids = await lives(x, y);
    lx.stopRecording();
    ly.stopRecording();
    return { admin, log, lx, ly, x, y, ids, whole: await snapshot(admin) };
  }

  /** Redis as a replica that got the first `k` commands; then both instances learn of the failover. */
  async function failAt(s: Awaited<ReturnType<typeof setUp>>, k: number): Promise<Map<string, string>> {
    await s.admin.send(['FLUSHALL']);
    for (const c of s.log.slice(0, k)) await s.admin.send(c);
    const watching = (st: RedisTaskStore) => st.recentWrites()?.watching === true;
    s.ly.failOver();
    s.lx.failOver();
    await until(() => !watching(s.x) && !watching(s.y), 10_000, `the passes at cut ${k}`);
    return snapshot(s.admin);
  }

  test('every cut ends in the state of the whole run', async () => {
    const s = await setUp(true);
    const live = (m: Map<string, string>) => [...m.keys()].filter((k) => k.startsWith('sl:tasks:'));
    assert.deepEqual(
      live(s.whole).map((k) => s.whole.get(k)),
      [],
      'the whole run leaves no live count',
    );
    for (let k = 0; k <= s.log.length; k++) {
      const got = await failAt(s, k);
      assert.deepEqual(got, s.whole, `cut ${k} of ${s.log.length}: ${JSON.stringify(s.log[k])}`);
    }
    const stats = s.x.recentWrites();
    assert.ok(stats !== undefined && stats.passes >= s.log.length + 1, 'a pass at least per cut');
  });

  test("a caller's link that reports failovers: the cluster writes its entries again, a task store on its shared link and its DPoP proofs send their writes again", async () => {
    const { admin, own, cluster, node } = await failoverServer(connect);
    assert.equal(cluster.followsFailovers, true);
    try {
      const store = new RedisTaskStore(sharedLinkOf(cluster), { recentWrites: WATCH });
      const t = record('p:bob', 'c-bob', 'R');
      assert.equal(await store.create(t, 10), 'created');
      assert.equal(await store.settle(t.taskId, 'R', { status: 'completed', result: '{"ok":1}' }), true);
      const proofs = proofReplaysOf(cluster);
      assert.equal(await proofs.spend('jkt-1', 'jti-1', 60_000), true);
      const spent = (await admin.send(['KEYS', 'sl:dpop:*'])) as string[];
      assert.equal(spent.length, 1);
      const runBefore = await admin.send(['GET', keys.run]);
      // What a promoted replica might lack: the task, the proof spent, the marker of the cluster's run.
      await admin.send(['DEL', keys.task(t.taskId), keys.run, ...spent]);
      own.failOver();
      await until(
        () => (store.recentWrites()?.passes ?? 0) > 0 && !store.recentWrites()?.watching,
        10_000,
        'the passes',
      );
      const runAfter = Number(await admin.send(['GET', keys.run]));
      assert.ok(runAfter > Number(runBefore), `the cluster marked a new run (${runBefore} → ${runAfter})`);
      const back = await store.get(t.taskId, 'p:bob');
      assert.equal(back?.status, 'completed');
      assert.equal(back?.result, '{"ok":1}');
      // The proof is spent again: the same proof is refused, not accepted a second time.
      const deadline = Date.now() + 10_000;
      while (((await admin.send(['KEYS', 'sl:dpop:*'])) as string[]).length === 0) {
        assert.ok(Date.now() < deadline, 'the proof spent again within 10 s');
        await sleep(20);
      }
      assert.equal(await proofs.spend('jkt-1', 'jti-1', 60_000), false);
    } finally {
      await node.close();
    }
    // A link without the hook: nothing to follow, no writes kept.
    const plain = redisCluster({ link: await connect(), leaseMs: 1_000 });
    assert.equal(plain.followsFailovers, false);
    assert.equal(new RedisTaskStore(sharedLinkOf(plain)).recentWrites(), undefined);
  });

  test('without the kept writes, a cut loses what Redis acknowledged (what the test above would catch)', async () => {
    const s = await setUp(false);
    assert.equal(s.x.recentWrites(), undefined);
    const got = await failAt(s, Math.floor(s.log.length / 2));
    assert.notDeepEqual(got, s.whole);
  });
});
