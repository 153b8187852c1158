/**
 * `sluice serve --redis` keeps its task store on the cluster's own Redis link
 * (cluster/shared-link.ts): an instance holds one command and one subscriber connection, as the
 * cluster alone does (docs/scale-out.md), and the task store still hears the cancel channel on it:
 * a task created on A and cancelled through B stops on A. Real redis-server, real CLI processes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { modernSend } from '../helpers/modern.js';
import { findRedis, type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';
import { type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';
import { createTask, getTask, pollTask, taskBody } from '../helpers/tasks.js';

describe('sluice serve --redis: one Redis link for the cluster and its tasks', () => {
  let redis: Redis | undefined;
  let probe: RedisLink | undefined;
  const procs: SpawnedServe[] = [];

  before(async () => {
    if (findRedis() === undefined) return;
    redis = await startRedis();
    probe = await connectNodeRedis({ url: redis.url, commandTimeoutMs: 2000 });
  });
  after(async () => {
    for (const p of procs) await p.close().catch(() => undefined);
    await probe?.close();
    await redis?.stop();
  });

  test('needs redis-server', (t) => {
    skipWithoutRedis(t);
  });
  if (findRedis() === undefined) return;

  test('two connections per instance; a cancel through B reaches the run on A', async () => {
    const args = ['--redis', redis?.url ?? '', '--keepalive-ms', '0'];
    const a = await spawnServe(args, {}, 30_000);
    procs.push(a);
    const b = await spawnServe(args, {}, 30_000);
    procs.push(b);
    const t = await createTask(a.url, 'reindex', { corpus: 'c', docs: 100_000, delayMs: 5 });
    const taskId = String(t.taskId);
    assert.equal((await getTask(b.url, taskId)).result.status, 'working');
    // Every client but this test's own link: two members, two connections each.
    const list = String(await probe?.send(['CLIENT', 'LIST']))
      .trim()
      .split('\n');
    assert.equal(list.length - 1, 4, `connections:\n${list.join('\n')}`);
    const ack = await modernSend(b.url, taskBody('tasks/cancel', { taskId }));
    assert.equal(ack.status, 200);
    const done = await pollTask(a.url, taskId, (x) => x.status === 'cancelled', 10_000);
    assert.equal(done.status, 'cancelled');
  });
});
