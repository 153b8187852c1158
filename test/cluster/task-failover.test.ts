/**
 * A Sentinel failover that loses tasks Redis had acknowledged: a master, two replicas and three
 * sentinels (real processes); three task stores — one on a cluster member's link (`sharedLinkOf`,
 * what `sluice serve --redis-sentinel` runs), one on a link of its own (`connectRedisTaskStore`), and
 * one with `recentWrites: false` as the control. Each finishes a task; the tasks are deleted on both
 * replicas once replicated (what asynchronous replication loses when the master dies first: the test
 * replicas take writes), the master is SIGKILLed and a replica promoted. The two stores that keep
 * their recent writes write their tasks again, result and all; the control's task is gone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RedisCluster } from '../../src/cluster/cluster.js';
import { keys } from '../../src/cluster/keys.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { sharedLinkOf } from '../../src/cluster/shared-link.js';
import { newTaskId, type TaskRecord } from '../../src/tasks/model.js';
import { connectRedisTaskStore } from '../../src/tasks/redis-connect.js';
import { RedisTaskStore } from '../../src/tasks/redis-store.js';
import { sleep } from '../helpers/http.js';
import { adminCommand } from '../helpers/redis-ha.js';
import { clusterOn, type RedisTarget, startTarget, topologySkip } from '../helpers/redis-topology.js';
import { type Running, startServer } from '../helpers/test-server.js';

const OWNER = 'p:alice';

function record(runner: string): TaskRecord {
  const now = Date.now();
  return {
    taskId: newTaskId(),
    owner: OWNER,
    client: `c-${runner}`,
    status: 'working',
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: 600_000,
    pollIntervalMs: 100,
    call: JSON.stringify({ name: 'x', arguments: {} }),
    leaseOwner: runner,
    leaseUntil: now + 60_000,
  };
}

/** Polls `check` until it holds (errors while Redis fails over count as not yet), within `ms`. */
async function eventually(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    assert.ok(Date.now() < deadline, `${what} within ${ms} ms`);
    await sleep(100);
  }
}

describe('Redis Sentinel: tasks Redis acknowledged survive a failover that lost them', {
  skip: topologySkip('sentinel'),
}, () => {
  let target: RedisTarget;
  let node: Running;
  let cluster: RedisCluster;
  let control: RedisTaskStore;
  let ownLink: RedisLink;
  const stores: RedisTaskStore[] = [];

  before(async () => {
    target = await startTarget('sentinel');
    cluster = clusterOn(target, { leaseMs: 1_500 });
    node = await startServer({ cluster, keepaliveMs: 0 });
    stores.push(new RedisTaskStore(sharedLinkOf(cluster)));
    stores.push(await connectRedisTaskStore(target.options));
    ownLink = await target.connect();
    control = new RedisTaskStore(ownLink, { recentWrites: false });
  });
  after(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    await node?.close().catch(() => undefined);
    await ownLink?.close().catch(() => undefined);
    await target?.stop();
  });

  test('the master dies before its replicas got the tasks: both stores write theirs again', async () => {
    const sentinel = target.sentinel;
    assert.ok(sentinel !== undefined);
    const all = [...stores, control];
    assert.ok(stores.every((s) => s.recentWrites() !== undefined));
    assert.equal(control.recentWrites(), undefined);
    const tasks: { store: RedisTaskStore; id: string; result: string }[] = [];
    for (const [i, store] of all.entries()) {
      const t = record(`runner-${i}`);
      assert.equal(await store.create(t, 10), 'created');
      const result = JSON.stringify({ content: [{ type: 'text', text: `done ${i}` }] });
      assert.equal(await store.settle(t.taskId, t.leaseOwner ?? '', { status: 'completed', result }), true);
      tasks.push({ store, id: t.taskId, result });
    }
    // Replicated, then lost on both replicas, as if the master had died before sending them.
    for (const { id } of tasks) {
      for (const port of sentinel.replicaPorts) {
        await eventually(`${id} on the replica at ${port}`, 10_000, async () => {
          const f = await adminCommand(port, ['HGET', keys.task(id), 's']);
          return f === 'completed';
        });
        assert.equal(await adminCommand(port, ['DEL', keys.task(id)]), 1);
      }
    }
    const old = await sentinel.killMaster();
    const promoted = await sentinel.waitForFailover(old, 30_000);
    assert.notEqual(promoted, old);
    for (const { store, id, result } of tasks.slice(0, 2)) {
      await eventually(`task ${id} written again`, 30_000, async () => {
        const t = await store.get(id, OWNER);
        return t?.status === 'completed' && t.result === result;
      });
    }
    for (const s of stores) assert.ok((s.recentWrites()?.passes ?? 0) > 0, 'a pass ran');
    const lost = tasks[2];
    assert.ok(lost !== undefined);
    assert.equal(await control.get(lost.id, OWNER), undefined, 'without the kept writes the task is gone');
  });
});
