// flow/late-deadline.ts: a deadline strikes after the loop has read what arrived in time, so a stall
// of this process does not fail an answer its peer sent before the deadline; it still strikes when
// nothing came, and never once cleared. A credited deadline also waits out its own stall again, so a
// peer's new connection made during the stall is accepted and read before it strikes.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { creditedDeadline, lateDeadline, lateInterval } from '../../src/flow/late-deadline.js';
import { answeringProcess, sendingProcess } from '../helpers/answering-process.js';
import { withDeadline } from '../helpers/deadline.js';
import { stall } from '../helpers/stall.js';

/** Runs `body` with a ref'd timer alive: creditedDeadline's timers are unref'd and keep no loop running. */
async function loopHeld(body: () => Promise<void>): Promise<void> {
  const hold = setInterval(() => {}, 1_000);
  try {
    await body();
  } finally {
    clearInterval(hold);
  }
}

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

test('an interval ticks after what came during a stall was read, and says how late its timer fired', async () => {
  const peer = await answeringProcess();
  try {
    const seen: string[] = [];
    let lateMs = -1;
    const ticked = new Promise<void>((resolve) => {
      const t = lateInterval((late) => {
        if (late < 200) return; // the ticks before the stall
        seen.push('tick');
        lateMs = late;
        t.clear();
        resolve();
      }, 20);
    });
    peer.socket.once('data', () => seen.push('answer'));
    await sleep(50);
    peer.socket.write('PING');
    stall(300);
    await withDeadline(ticked, 5_000, 'the tick after the stall');
    assert.deepEqual(seen, ['answer', 'tick'], 'the answer was read first');
    assert.ok(lateMs >= 200 && lateMs <= 300, `late by the stall (${lateMs} ms)`);
  } finally {
    peer.close();
  }
});

test('an interval ticks until cleared, then no more', async () => {
  const lates: number[] = [];
  const t = lateInterval((late) => lates.push(late), 20);
  await sleep(130);
  t.clear();
  const n = lates.length;
  assert.ok(n >= 2, `it ticked (${n})`);
  await sleep(60);
  assert.equal(lates.length, n);
});

test('a credited deadline: a new connection made during a stall past it is read before it strikes', async () => {
  const peer = await sendingProcess();
  const server: Server = createServer();
  try {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const outcome = new Promise<string>((resolve) => {
      const t = creditedDeadline(() => resolve('struck'), 50);
      server.once('connection', (socket) => {
        // The other process leaves as soon as it has the answer's first line.
        socket.on('error', () => {});
        socket.once('data', () => {
          t.clear();
          resolve('read');
          socket.end('HTTP/1.1 204 No Content\r\n\r\n');
        });
      });
    });
    peer.send(port, '127.0.0.1', 'PING\r\n');
    // The other process connects and writes while this one stalls: the connection is accepted in the
    // first loop turn after the stall, its bytes read in a later one. A long stall, so the other
    // process connects within it even on a loaded machine.
    stall(1_000);
    assert.equal(await withDeadline(outcome, 5_000, 'the outcome'), 'read');
  } finally {
    peer.close();
    server.close();
  }
});

test('a credited deadline strikes on time when nothing stalls; a stall of its own is waited again', async () => {
  await loopHeld(async () => {
    let t0 = performance.now();
    await withDeadline(new Promise<void>((resolve) => creditedDeadline(resolve, 60)), 5_000, 'on time');
    assert.ok(performance.now() - t0 >= 55, 'not before its time');
    t0 = performance.now();
    const struck = withDeadline(
      new Promise<void>((resolve) => creditedDeadline(resolve, 50)),
      5_000,
      'after',
    );
    stall(300);
    await struck;
    // Due at 50 ms, found 250 ms late: it waits 250 ms more.
    assert.ok(performance.now() - t0 >= 500, `the stall waited again (${performance.now() - t0} ms)`);
    let cleared = false;
    creditedDeadline(() => {
      cleared = true;
    }, 10).clear();
    const late = creditedDeadline(() => {
      cleared = true;
    }, 10);
    stall(100);
    // Cleared while it waits its stall again.
    setTimeout(() => late.clear(), 20);
    await sleep(200);
    assert.equal(cleared, false);
  });
});

test('a credited deadline gives its credit once: late again after it, it strikes', async () => {
  await loopHeld(async () => {
    const t0 = performance.now();
    const struck = withDeadline(
      new Promise<void>((resolve) => creditedDeadline(resolve, 50)),
      5_000,
      'the strike',
    );
    // Due at 50 ms, found 150 ms late: it waits 150 ms more, to about 350 ms. A second stall, from
    // about 250 ms to 1,050 ms, makes that wait late by some 700 ms too; waited again, the strike
    // would come at about 1,750 ms (on a loop that runs every timer late it would never come).
    stall(200);
    setTimeout(() => stall(800), 50);
    await struck;
    const took = performance.now() - t0;
    assert.ok(took >= 1_000 && took < 1_450, `struck once the second stall ended (${took} ms)`);
  });
});
