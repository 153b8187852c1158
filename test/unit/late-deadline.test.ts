// flow/late-deadline.ts: a deadline strikes after the loop has read what arrived in time, so a stall
// of this process does not fail an answer its peer sent before the deadline; it still strikes when
// nothing came, and never once cleared.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { lateDeadline } from '../../src/flow/late-deadline.js';
import { answeringProcess } from '../helpers/answering-process.js';
import { withDeadline } from '../helpers/deadline.js';
import { stall } from '../helpers/stall.js';

test('an answer that came during a stall past the deadline is read before the deadline strikes', async () => {
  const peer = await answeringProcess();
  try {
    for (let round = 0; round < 3; round++) {
      const outcome = new Promise<string>((resolve) => {
        const t = lateDeadline(() => resolve('struck'), 50);
        peer.socket.once('data', () => {
          t.clear();
          resolve('answered');
        });
      });
      peer.socket.write('PING');
      stall(400);
      assert.equal(await outcome, 'answered', `round ${round}`);
    }
  } finally {
    peer.close();
  }
});

test('with no answer it strikes, not before its time; cleared, it never does', async () => {
  const t0 = performance.now();
  await withDeadline(new Promise<void>((resolve) => lateDeadline(resolve, 60)), 5_000, 'the strike');
  assert.ok(performance.now() - t0 >= 55, 'not before its time');
  let struck = false;
  lateDeadline(() => {
    struck = true;
  }, 20).clear();
  // Cleared between its timer and its immediate, too: both timers are due after the stall, and run
  // in the order they were made, before any immediate.
  const late = lateDeadline(() => {
    struck = true;
  }, 10);
  setTimeout(() => late.clear(), 10);
  stall(50);
  await sleep(60);
  assert.equal(struck, false);
});
