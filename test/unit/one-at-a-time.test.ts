// flow/one-at-a-time.ts: jobs in order, each after the one before settled; a rejection reaches only
// its own caller.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OneAtATime } from '../../src/flow/one-at-a-time.js';

test('jobs run one at a time, in the order they came, a rejection reaching only its caller', async () => {
  const q = new OneAtATime();
  const log: string[] = [];
  let running = 0;
  const job =
    (name: string, fail = false) =>
    async () => {
      running++;
      assert.equal(running, 1, `${name} runs alone`);
      log.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`end ${name}`);
      running--;
      if (fail) throw new Error(name);
      return name;
    };
  const a = q.run(job('a'));
  const b = q.run(job('b', true));
  const c = q.run(job('c'));
  assert.equal(await a, 'a');
  await assert.rejects(b, /b/);
  assert.equal(await c, 'c');
  assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  // Idle again: a new job starts at once (on the next microtasks, not behind anything).
  let started = false;
  const d = q.run(async () => {
    started = true;
  });
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(started, true);
  await d;
});
