// CommandDeadlines (cluster/command-deadlines.ts): one timer bounds every command of a link, from
// sending to reply. An answer in time is passed through, a late one is refused at the deadline and
// ignored when it comes, and answered commands never keep a deadline (or the timer) alive.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CommandDeadlines } from '../../src/cluster/command-deadlines.js';
import { RedisUnavailableError } from '../../src/cluster/redis-link.js';
import { answeringProcess } from '../helpers/answering-process.js';
import { withDeadline } from '../helpers/deadline.js';
import { stall } from '../helpers/stall.js';

// The deadline timer is unref'd (a link's socket keeps a real process alive while a command is
// out); here nothing else would, so a timer stands in for the socket.
let alive: ReturnType<typeof setInterval> | undefined;
before(() => {
  alive = setInterval(() => undefined, 1_000);
});
after(() => clearInterval(alive));

function later<T>(ms: number, value: T): Promise<T> {
  return sleep(ms).then(() => value);
}

test('an answer in time passes through, value or error', async () => {
  const d = new CommandDeadlines(500);
  assert.equal(await d.bound(later(10, 'OK')), 'OK');
  const refused = new Error('WRONGTYPE');
  await assert.rejects(d.bound(sleep(10).then(() => Promise.reject(refused))), (e) => e === refused);
  assert.equal(d.pending, 0);
});

test('a command never answered is refused once its allowance has passed, not before', async () => {
  const d = new CommandDeadlines(120);
  const t0 = performance.now();
  await assert.rejects(
    withDeadline(d.bound(new Promise(() => undefined)), 5_000, 'the deadline'),
    (e) => e instanceof RedisUnavailableError && /within 120 ms/.test(e.message),
  );
  assert.ok(performance.now() - t0 >= 115, 'not before the allowance');
  assert.equal(d.pending, 0);
});

test('a late answer is ignored; commands keep their own deadlines in order', async () => {
  const d = new CommandDeadlines(150);
  let lateRejected = false;
  const late = d.bound(later(400, 'late')).catch((e: unknown) => {
    lateRejected = e instanceof RedisUnavailableError;
    return 'refused';
  });
  await sleep(100);
  // Sent 100 ms later: its deadline is 100 ms after the first one's.
  const second = d.bound(later(120, 'second'));
  const hung = d.bound(new Promise<string>(() => undefined)).catch(() => 'refused');
  assert.equal(await late, 'refused');
  assert.ok(lateRejected);
  assert.equal(await second, 'second', 'answered within its own allowance, after the first expired');
  assert.equal(await withDeadline(hung, 5_000, 'the third deadline'), 'refused');
  // The late answer arrives after its refusal: nothing happens (no unhandled rejection, no throw).
  await sleep(200);
  assert.equal(d.pending, 0);
});

test('many commands on a busy link: each answered one resolves, each hung one is refused', async () => {
  const d = new CommandDeadlines(200);
  const outcomes = await Promise.all(
    Array.from({ length: 300 }, (_, i) =>
      d.bound(i % 7 === 0 ? new Promise<number>(() => undefined) : later(i % 50, i)).then(
        (v) => v,
        (e: unknown) => (e instanceof RedisUnavailableError ? -1 : -2),
      ),
    ),
  );
  outcomes.forEach((v, i) => {
    assert.equal(v, i % 7 === 0 ? -1 : i);
  });
  assert.equal(d.pending, 0);
});

test('a process that stalls past the allowance does not fail a reply that came in time (read before the deadline strikes)', async () => {
  // The peer answers while this process is stalled: the reply waits in the socket. Timers run
  // before sockets are read, so without the deferred refusal the deadline, due during the stall,
  // would strike first.
  const peer = await answeringProcess();
  try {
    const d = new CommandDeadlines(100);
    for (let round = 0; round < 3; round++) {
      const reply = d.bound(
        new Promise<string>((resolve) => peer.socket.once('data', (b: Buffer) => resolve(String(b)))),
      );
      peer.socket.write('PING');
      stall(600); // six allowances
      assert.equal(await reply, '+OK\r\n', `round ${round}: the reply read, not refused`);
    }
    // Unanswered, it is still refused (one turn after the deadline at most).
    await assert.rejects(d.bound(new Promise(() => undefined)), RedisUnavailableError);
  } finally {
    peer.close();
  }
});
