/**
 * A read of tasks through the instance that runs them, after that instance stalled past their
 * lease (src/tasks/renewals.ts): the read renews them first, so it never fails the instance's own
 * live task (owner lost). The stall is a jump of the services' clock (`now`) with a lease of a
 * minute, so the renewal timer (every 20 s) cannot fire in between: without the catch-up the read
 * fails the task. A read through another instance still fails it: the lease is there for that.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createTasks, MemoryTaskStore, type Served } from '../../src/server/index.js';
import { until } from '../helpers/http.js';
import { sdkTaskClient, startToolTask, taskResultText } from '../helpers/sdk-tasks.js';
import {
  createTask,
  getTask,
  newProbe,
  pollTask,
  serveTaskTools,
  TASK_TOOLS,
  type ToolProbe,
} from '../helpers/tasks.js';

const LEASE = 60_000;
const alice = { 'x-user': 'alice' };

class Clock {
  t = Date.now();
  now = (): number => this.t;
}

function instance(probe: ToolProbe, store: MemoryTaskStore, clock: Clock): Promise<Served> {
  const tasks = createTasks({
    taskAfterMs: 0,
    tools: TASK_TOOLS,
    leaseMs: LEASE,
    pollIntervalMs: 50,
    store,
    now: clock.now,
  });
  return serveTaskTools(probe, tasks);
}

describe('a stall past the lease of the instance running a task (renewals.ts)', () => {
  test('2026-07-28 tasks/get through it: still working, then completed; through another instance: failed', async () => {
    const clock = new Clock();
    const store = new MemoryTaskStore({ now: clock.now });
    const pa = newProbe();
    const a = await instance(pa, store, clock);
    const b = await instance(newProbe(), store, clock);
    try {
      const kept = await createTask(a.url, 'slow', { gate: 'kept' }, alice);
      const lost = await createTask(a.url, 'slow', { gate: 'lost' }, alice);
      await until(() => pa.gates.has('kept') && pa.gates.has('lost'), 5000, 'both running on A');
      clock.t += 2.5 * LEASE; // the process stalled; its renewal timer has not fired since
      // B runs nothing: its read applies the lease rule and A's task is lost.
      assert.equal((await getTask(b.url, lost.taskId, alice)).result.status, 'failed');
      // A runs the other: its read renews first.
      assert.equal((await getTask(a.url, kept.taskId, alice)).result.status, 'working');
      assert.equal(
        (await getTask(b.url, kept.taskId, alice)).result.status,
        'working',
        'renewed in the store',
      );
      pa.gates.get('kept')?.();
      const done = await pollTask(a.url, kept.taskId, (x) => x.status !== 'working', 5000, alice);
      assert.equal(done.status, 'completed');
    } finally {
      pa.gates.get('lost')?.();
      await a.close();
      await b.close();
    }
  });

  test('2025-11-25 tasks/get and tasks/result through it: working, then the result', async () => {
    const clock = new Clock();
    const store = new MemoryTaskStore({ now: clock.now });
    const p = newProbe();
    const a = await instance(p, store, clock);
    const c = await sdkTaskClient(a.url);
    try {
      const id = await startToolTask(c, 'slow', { gate: 'old' });
      await until(() => p.gates.has('old'), 5000, 'running');
      clock.t += 2.5 * LEASE;
      assert.equal((await c.experimental.tasks.getTask(id)).status, 'working');
      clock.t += 2.5 * LEASE;
      const result = taskResultText(c, id);
      p.gates.get('old')?.();
      assert.equal(await result, 'done old');
    } finally {
      await c.close();
      await a.close();
    }
  });
});
