/**
 * Tasks on a shared Redis: any instance answers for any task, and the guarantees when the one
 * running it dies. Two in-process instances: a task created on A is read, cancelled (reaching the
 * tool's AbortSignal on A) and answered (tasks/update, the next round running on B) through B; a
 * finished task's result is read through B after A closed. A child-process instance killed with
 * SIGKILL mid-task: its task reads `failed` with the owner-lost error once the lease lapses,
 * through the surviving instance, never `working` forever. Skipped loudly without redis-server.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { createTasks, OWNER_LOST, RedisTaskStore, type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { until } from '../helpers/http.js';
import { modernSend } from '../helpers/modern.js';
import { reapWithMe } from '../helpers/reaper.js';
import { findRedis, type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';
import {
  createTask,
  getTask,
  newProbe,
  pollTask,
  TASK_TOOLS,
  type ToolProbe,
  taskBody,
  taskServer,
} from '../helpers/tasks.js';

describe('tasks on Redis: any instance answers for any task', () => {
  let redis: Redis | undefined;
  const links: RedisLink[] = [];
  const servers: Served[] = [];
  const children: ChildProcess[] = [];

  async function instance(probe: ToolProbe, leaseMs = 3000): Promise<Served> {
    const link = await connectNodeRedis({ url: redis?.url ?? '', commandTimeoutMs: 2000 });
    links.push(link);
    const store = new RedisTaskStore(link);
    await store.start();
    const s = await serve({
      createServer: taskServer(probe),
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 0,
      tasks: createTasks({ taskAfterMs: 0, store, tools: TASK_TOOLS, leaseMs, pollIntervalMs: 50 }),
    });
    servers.push(s);
    return s;
  }

  before(async () => {
    if (findRedis() !== undefined) redis = await startRedis();
  });
  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const s of servers) await s.close();
    for (const l of links) await l.close();
    await redis?.stop();
  });

  test('needs redis-server', (t) => {
    skipWithoutRedis(t);
  });
  if (findRedis() === undefined) return;

  test('created on A: read, cancelled and answered through B', async () => {
    const pa = newProbe();
    const pb = newProbe();
    const a = await instance(pa);
    const b = await instance(pb);
    const t = await createTask(a.url, 'slow', { gate: 'x1' });
    // Straight after the CreateTaskResult, through the other instance.
    assert.equal((await getTask(b.url, t.taskId)).result.status, 'working');
    await until(() => pa.gates.has('x1'), 5000, 'running on A');
    const ack = await modernSend(b.url, taskBody('tasks/cancel', { taskId: t.taskId }));
    assert.deepEqual(ack.json().result, { resultType: 'complete' });
    await until(() => pa.aborted.includes('x1'), 5000, "A's tool saw its AbortSignal");
    assert.equal((await getTask(a.url, t.taskId)).result.status, 'cancelled');

    const q = await createTask(a.url, 'ask', {});
    await pollTask(b.url, q.taskId, (x) => x.status === 'input_required');
    const answers = { first: { action: 'accept', content: { name: 'a' } } };
    await modernSend(b.url, taskBody('tasks/update', { taskId: q.taskId, inputResponses: answers }));
    await modernSend(
      a.url,
      taskBody('tasks/update', {
        taskId: q.taskId,
        inputResponses: { second: { action: 'accept', content: { name: 'b' } } },
      }),
    );
    const done = await pollTask(b.url, q.taskId, (x) => x.status === 'completed');
    assert.equal(done.result.content[0].text, 'answers a,b state round-1');

    const f = await createTask(a.url, 'slow', { gate: 'x2' });
    await until(() => pa.gates.has('x2'), 5000, 'running on A');
    pa.gates.get('x2')?.();
    await pollTask(b.url, f.taskId, (x) => x.status === 'completed');
    await a.close();
    const kept = await getTask(b.url, f.taskId);
    assert.equal(kept.result.result.content[0].text, 'done x2', 'the result outlives its instance');
    assert.equal(pa.runs.get('x2'), 1);
  });

  test('SIGKILL of the running instance: failed with the owner-lost error once the lease lapses', async () => {
    const survivor = await instance(newProbe());
    const script = fileURLToPath(new URL('../helpers/task-node.js', import.meta.url));
    const child = spawn(process.execPath, [script, redis?.url ?? '', '900'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SLUICE_TASK_NODE: '1' },
    });
    reapWithMe(child);
    children.push(child);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    await until(() => /task-node (\S+)\n/.test(out), 15_000, `the child instance listening (stderr: ${err})`);
    const url = /task-node (\S+)\n/.exec(out)?.[1] ?? '';
    const t = await createTask(url, 'slow', { gate: 'doomed', ms: 60_000 });
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await getTask(survivor.url, t.taskId)).result.status, 'working', 'the lease is renewed');
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await withDeadline(gone, 5000, 'the child exits');
    const killedAt = Date.now();
    const failed = await pollTask(survivor.url, t.taskId, (x) => x.status !== 'working', 5000);
    assert.equal(failed.status, 'failed');
    assert.deepEqual(failed.error, OWNER_LOST);
    assert.ok(Date.now() - killedAt <= 2000, 'within about one lease');
  });
});
