/**
 * The follower of a 2025 task's requests to the client (tasks/legacy-input.ts), on the memory
 * store: the related-task `_meta` on requests and on progress under the client's own token (none
 * on the task's own progress, nothing for other notifications or unreadable text), and the
 * input_required ⇄ working flips: overlapping requests, a reply before the first flip landed, and
 * `finish()` leaving the task working and leased to the run whatever is still pending; the lease
 * kept while the task waits (renewed by the run, lapsing to owner-lost when the run is gone).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tokenKey } from '../../src/jsonrpc/partial.js';
import { LegacyInput } from '../../src/tasks/legacy-input.js';
import { MemoryTaskStore } from '../../src/tasks/memory-store.js';
import { newWorkingTask, OWNER_LOST, ownProgressToken } from '../../src/tasks/model.js';
import { resolveTaskOptions } from '../../src/tasks/options.js';

const RELATED = 'io.modelcontextprotocol/related-task';

async function setup() {
  const clock = { t: Date.now() };
  const now = (): number => clock.t;
  const store = new MemoryTaskStore({ now });
  const o = resolveTaskOptions({ store, leaseMs: 5000, now });
  const t = newWorkingTask({
    owner: '2025:s:S1',
    client: 'c',
    ttlMs: 60_000,
    pollIntervalMs: 100,
    call: '{}',
    runner: 'R',
    leaseMs: 5000,
    now: clock.t,
  });
  assert.equal(await store.create(t, 10), 'created');
  const input = new LegacyInput(o, 'R', t);
  const status = async () => (await store.get(t.taskId, t.owner))?.status;
  const turn = () => new Promise((r) => setImmediate(r));
  return { store, t, input, status, turn, clock };
}

describe('LegacyInput', () => {
  test('decorate adds the related-task _meta and keeps the rest', async () => {
    const { t, input } = await setup();
    const m = {
      jsonrpc: '2.0' as const,
      id: 7,
      method: 'elicitation/create',
      params: { a: 1, _meta: { k: 2 } },
    };
    assert.deepEqual(input.decorate(m), {
      jsonrpc: '2.0',
      id: 7,
      method: 'elicitation/create',
      params: { a: 1, _meta: { k: 2, [RELATED]: { taskId: t.taskId } } },
    });
    assert.deepEqual(m.params._meta, { k: 2 }, 'the original is not changed');
    assert.deepEqual(input.decorate({ jsonrpc: '2.0', id: 8, method: 'roots/list' }).params, {
      _meta: { [RELATED]: { taskId: t.taskId } },
    });
  });

  test("notification: the client's progress is shown with the _meta; the task's own, others and junk are not", async () => {
    const { t, input } = await setup();
    const progress = (token: unknown) =>
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: token, progress: 1 },
      });
    assert.deepEqual(JSON.parse(input.notification(progress(5), tokenKey(5)) ?? 'null'), {
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 5, progress: 1, _meta: { [RELATED]: { taskId: t.taskId } } },
    });
    const own = ownProgressToken(t.taskId);
    assert.equal(input.notification(progress(own), tokenKey(own)), undefined);
    // The key decides without reading the text (the routing derives both from one message).
    assert.equal(input.notification(progress(own), undefined), undefined);
    assert.equal(input.notification(progress(5), tokenKey(own)), undefined);
    assert.equal(input.notification(progress(undefined), undefined), undefined);
    assert.equal(
      input.notification('{"jsonrpc":"2.0","method":"notifications/message","params":{}}', undefined),
      undefined,
    );
    assert.equal(input.notification('{"method":"notifications/progress",', undefined), undefined);
    assert.equal(
      input.notification('{"jsonrpc":"2.0","method":"notifications/progress"}', undefined),
      undefined,
    );
  });

  test('input_required while any request awaits its reply, working (leased to the run) after', async () => {
    const { store, t, input, status, turn } = await setup();
    await input.asking(1);
    await input.asking(2);
    await turn();
    assert.equal(await status(), 'input_required');
    assert.equal(await store.renew(t.taskId, 'R', Date.now() + 5000), true, 'the run keeps its lease');
    assert.equal(await store.renew(t.taskId, 'other', Date.now() + 5000), false);
    input.settled(1);
    await turn();
    assert.equal(await status(), 'input_required', 'one still awaits');
    input.settled(2);
    input.settled(99); // never asked: nothing
    await input.finish();
    assert.equal(await status(), 'working');
    assert.equal(await store.renew(t.taskId, 'R', Date.now() + 5000), true, 'the lease is the run’s again');
    assert.equal(await store.settle(t.taskId, 'R', { status: 'completed', result: '{}' }), true);
  });

  test('a reply before the first flip landed, and finish() with a request still pending', async () => {
    const { store, t, input, status } = await setup();
    const asked = input.asking(1);
    input.settled(1);
    await input.finish();
    await asked;
    assert.equal(await status(), 'working');
    const again = input.asking(2);
    await input.finish();
    await again;
    assert.equal(await status(), 'working', 'the outcome is stored on a working task');
    assert.equal(await store.settle(t.taskId, 'R', { status: 'completed', result: '{}' }), true);
  });

  test('the runner dies while the task waits for the client: it fails (owner lost) when the lease lapses', async () => {
    const { store, t, input, status, turn, clock } = await setup();
    await input.asking(1);
    await turn();
    assert.equal(await status(), 'input_required');
    clock.t += 4999;
    assert.equal(await status(), 'input_required', 'within the lease');
    clock.t += 2; // nobody renewed it: the instance is gone
    assert.equal(await status(), 'failed');
    assert.deepEqual((await store.get(t.taskId, t.owner))?.error, OWNER_LOST);
  });

  test('a task cancelled while it waits stays cancelled', async () => {
    const { store, t, input, status, turn } = await setup();
    await input.asking(1);
    await turn();
    assert.equal((await store.cancel(t.taskId, t.owner))?.status, 'cancelled');
    input.settled(1);
    await input.finish();
    assert.equal(await status(), 'cancelled');
  });
});
