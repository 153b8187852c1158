// The core's runtime-neutral scheduler: setImmediate where the runtime has it, else a
// MessageChannel, else setTimeout(0); each runs tasks after the current task, in order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pickScheduler, type SchedulerGlobals } from '../../src/core/stream/schedule.js';

async function order(g: SchedulerGlobals): Promise<string[]> {
  const { runSoon } = pickScheduler(g);
  const seen: string[] = [];
  const done = new Promise<void>((resolve) => {
    runSoon(() => seen.push('a'));
    runSoon(() => seen.push('b'));
    runSoon(() => {
      seen.push('c');
      resolve();
    });
  });
  queueMicrotask(() => seen.push('microtask'));
  seen.push('sync');
  await done;
  return seen;
}

test('setImmediate is used where it exists', async () => {
  const g: SchedulerGlobals = { setImmediate, MessageChannel, setTimeout };
  assert.equal(pickScheduler(g).kind, 'setImmediate');
  assert.deepEqual(await order(g), ['sync', 'microtask', 'a', 'b', 'c']);
});

test('without setImmediate (Workers without nodejs_compat, browsers): a MessageChannel, tasks after the current one, in order', async () => {
  const g: SchedulerGlobals = { MessageChannel, setTimeout };
  assert.equal(pickScheduler(g).kind, 'MessageChannel');
  assert.deepEqual(await order(g), ['sync', 'microtask', 'a', 'b', 'c']);
});

test('with neither: setTimeout(0)', async () => {
  const g: SchedulerGlobals = { setTimeout };
  assert.equal(pickScheduler(g).kind, 'setTimeout');
  assert.deepEqual(await order(g), ['sync', 'microtask', 'a', 'b', 'c']);
});

test('runSoonFor calls the shared function with its argument, in order with runSoon, under each mechanism', async () => {
  for (const g of [
    { setImmediate, MessageChannel, setTimeout },
    { MessageChannel, setTimeout },
    { setTimeout },
  ]) {
    const { runSoon, runSoonFor } = pickScheduler(g as SchedulerGlobals);
    const seen: string[] = [];
    const note = (x: { name: string }): void => {
      seen.push(x.name);
    };
    await new Promise<void>((resolve) => {
      runSoonFor(note, { name: 'a' });
      runSoon(() => seen.push('b'));
      runSoonFor(note, { name: 'c' });
      runSoon(resolve);
      seen.push('sync');
    });
    assert.deepEqual(seen, ['sync', 'a', 'b', 'c'], Object.keys(g).join(','));
  }
});
