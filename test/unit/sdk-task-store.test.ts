/**
 * `sdkTaskStore()` as SDK v1's `TaskStore`, called directly the way the SDK calls it: status
 * updates (input_required and back, input_required holding the runner's lease, failed with a message, completed without a result, cancelled
 * with its message, nothing out of a terminal status), results (a failed task's, one too large),
 * the owner binding (session, or principal through the session hooks), hostile ids and options.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  createTasks,
  InvalidOptionError,
  MemoryTaskStore,
  SdkTaskStoreError,
  sdkTaskStore,
} from '../../src/server/index.js';

const req = { method: 'tools/call', params: { name: 'job' } };

describe('sdkTaskStore', () => {
  test('input_required and back to working, then a result; nothing leaves a terminal status', async () => {
    const s = sdkTaskStore(new MemoryTaskStore());
    const t = await s.createTask({ ttl: 5000 }, 1, req, 'S1');
    assert.equal(t.status, 'working');
    await s.updateTaskStatus(t.taskId, 'input_required', undefined, 'S1');
    assert.equal((await s.getTask(t.taskId, 'S1'))?.status, 'input_required');
    await s.updateTaskStatus(t.taskId, 'working', 'answered', 'S1');
    const w = await s.getTask(t.taskId, 'S1');
    assert.equal(w?.status, 'working');
    assert.equal(w?.statusMessage, 'answered');
    await s.updateTaskStatus(t.taskId, 'input_required', undefined, 'S1');
    // A result straight from input_required (the tool gave up asking).
    await s.storeTaskResult(t.taskId, 'completed', { content: [] }, 'S1');
    assert.deepEqual(await s.getTaskResult(t.taskId, 'S1'), { content: [] });
    await assert.rejects(s.updateTaskStatus(t.taskId, 'working', undefined, 'S1'), SdkTaskStoreError);
    await assert.rejects(s.storeTaskResult(t.taskId, 'completed', {}, 'S1'), /terminal status 'completed'/);
    s.close();
  });

  test('input_required keeps the lease of the instance running the tool: it lapses to owner-lost if that instance is gone', async () => {
    const clock = { t: 1_000_000 };
    const now = (): number => clock.t;
    const m = new MemoryTaskStore({ now });
    const s = sdkTaskStore(m, { now, leaseMs: 1000 });
    const t = await s.createTask({ ttl: 60_000 }, 1, req, 'S1');
    await s.updateTaskStatus(t.taskId, 'input_required', undefined, 'S1');
    assert.equal((await s.getTask(t.taskId, 'S1'))?.status, 'input_required');
    s.close(); // the instance is gone: nobody renews the lease
    clock.t += 1001;
    const lost = await s.getTask(t.taskId, 'S1');
    assert.equal(lost?.status, 'failed');
    assert.match(lost?.statusMessage ?? '', /lease lapsed/);
  });

  test('a stall past the lease: a read through this store renews its own tasks first; another instance sees them lost', async () => {
    const clock = { t: 1_000_000 };
    const now = (): number => clock.t;
    const m = new MemoryTaskStore({ now });
    // A one-minute lease: its renewal timer (every 20 s) cannot fire within the test.
    const s = sdkTaskStore(m, { now, leaseMs: 60_000 });
    const other = sdkTaskStore(m, { now, leaseMs: 60_000 });
    const kept = await s.createTask({ ttl: 600_000 }, 1, req, 'S1');
    const lost = await s.createTask({ ttl: 600_000 }, 2, req, 'S1');
    clock.t += 150_000; // the process stalled for two and a half leases
    assert.equal((await other.getTask(lost.taskId, 'S1'))?.status, 'failed', 'read elsewhere: lost');
    assert.equal((await s.getTask(kept.taskId, 'S1'))?.status, 'working', 'read here: renewed first');
    assert.equal((await other.getTask(kept.taskId, 'S1'))?.status, 'working');
    await s.storeTaskResult(kept.taskId, 'completed', { content: [] }, 'S1');
    assert.deepEqual(await s.getTaskResult(kept.taskId, 'S1'), { content: [] });
    s.close();
    other.close();
  });

  test('failed with a message, completed without a result, cancelled with its message', async () => {
    const s = sdkTaskStore(new MemoryTaskStore());
    const a = await s.createTask({}, 1, req, 'S1');
    await s.updateTaskStatus(a.taskId, 'failed', 'disk full', 'S1');
    assert.equal((await s.getTask(a.taskId, 'S1'))?.statusMessage, 'disk full');
    await assert.rejects(s.getTaskResult(a.taskId, 'S1'), (e: SdkTaskStoreError) => e.reason === 'failed');
    const b = await s.createTask({}, 2, req, 'S1');
    await s.updateTaskStatus(b.taskId, 'completed', undefined, 'S1');
    assert.equal((await s.getTask(b.taskId, 'S1'))?.status, 'completed');
    await assert.rejects(s.getTaskResult(b.taskId, 'S1'), (e: SdkTaskStoreError) => e.reason === 'no-result');
    const c = await s.createTask({}, 3, req, 'S1');
    await s.updateTaskStatus(c.taskId, 'cancelled', 'stop', 'S1');
    const got = await s.getTask(c.taskId, 'S1');
    assert.equal(got?.status, 'cancelled');
    assert.equal(got?.statusMessage, 'stop');
    s.close();
  });

  test('a result larger than maxResultBytes fails the task', async () => {
    const s = sdkTaskStore(new MemoryTaskStore(), { maxResultBytes: 100 });
    const t = await s.createTask({}, 1, req, 'S1');
    await assert.rejects(
      s.storeTaskResult(t.taskId, 'completed', { content: [{ type: 'text', text: 'x'.repeat(200) }] }, 'S1'),
      (e: SdkTaskStoreError) => e.reason === 'too-large',
    );
    assert.equal((await s.getTask(t.taskId, 'S1'))?.status, 'failed');
    s.close();
  });

  test('owners: the session, or the principal through the session hooks; hostile ids are not found', async () => {
    const s = sdkTaskStore(new MemoryTaskStore());
    s.sessionStarted({ sessionId: 'A1', principal: 'alice' });
    s.sessionStarted({ sessionId: 'A2', principal: 'alice' });
    s.sessionStarted({ sessionId: 'B1', principal: 'bob' });
    s.sessionStarted({ sessionId: 'N1', principal: undefined });
    const t = await s.createTask({}, 1, req, 'A1');
    assert.equal((await s.getTask(t.taskId, 'A2'))?.taskId, t.taskId, "alice's other session");
    assert.equal(await s.getTask(t.taskId, 'B1'), null);
    assert.equal(await s.getTask(t.taskId, 'N1'), null);
    assert.equal(await s.getTask(t.taskId, undefined), null);
    s.sessionEnded({ sessionId: 'A2' });
    assert.equal(await s.getTask(t.taskId, 'A2'), null, 'an ended session is its own owner again');
    const n = await s.createTask({}, 2, req, 'N1');
    assert.equal(await s.getTask(n.taskId, 'N2'), null, 'an anonymous session owns its tasks');
    for (const id of ['', 'x', '../../x', 'A'.repeat(200), '__proto__', '{sl:task}']) {
      assert.equal(await s.getTask(id, 'A1'), null);
      await assert.rejects(s.getTaskResult(id, 'A1'), SdkTaskStoreError);
      await assert.rejects(s.updateTaskStatus(id, 'cancelled', undefined, 'A1'), SdkTaskStoreError);
    }
    const bySession = sdkTaskStore(new MemoryTaskStore(), { bind: 'session' });
    bySession.sessionStarted({ sessionId: 'A1', principal: 'alice' });
    const u = await bySession.createTask({}, 1, req, 'A1');
    bySession.sessionStarted({ sessionId: 'A2', principal: 'alice' });
    assert.equal(await bySession.getTask(u.taskId, 'A2'), null, "bind: 'session'");
    s.close();
    bySession.close();
  });

  test("tasks.sdkTaskStore(): the service's store, TTL, polling and bounds", async () => {
    const store = new MemoryTaskStore();
    const tasks = createTasks({ store, ttlMs: 120_000, pollIntervalMs: 250, maxLivePerClient: 1 });
    const s = tasks.sdkTaskStore();
    const t = await s.createTask({ ttl: 10 * 3600_000 }, 1, req, 'S1');
    assert.equal(t.ttl, 120_000);
    assert.equal(t.pollInterval, 250);
    await assert.rejects(s.createTask({}, 2, req, 'S1'), (e: SdkTaskStoreError) => e.reason === 'limit');
    assert.equal((await store.list('sdk-s:S1', undefined, 10))?.tasks.length, 1, "in the service's store");
    s.close();
    await tasks.close();
  });

  test('options are checked once', () => {
    const m = new MemoryTaskStore();
    assert.throws(() => sdkTaskStore(m, { leaseMs: 10 }), InvalidOptionError);
    assert.throws(() => sdkTaskStore(m, { pageSize: 0 }), InvalidOptionError);
    assert.throws(() => sdkTaskStore(m, { bind: 'nobody' as 'session' }), InvalidOptionError);
    assert.throws(() => sdkTaskStore({} as MemoryTaskStore), InvalidOptionError);
  });
});
