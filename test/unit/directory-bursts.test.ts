// The directory's per-session sweeps (cluster/directory.ts: housekeeping's touch, the writes again
// after Redis lost its data) go in bursts of at most BURST commands: every command's reply must come
// within the link's deadline from its send, and a burst the size of every session an instance owns
// would not. Against a link that answers a tick later and counts what is in flight.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTick } from 'node:timers/promises';
import { BURST, Directory, type DirectoryEntry } from '../../src/cluster/directory.js';
import type { RedisLink, RedisReply } from '../../src/cluster/redis-link.js';

function countingLink(answer: (args: readonly string[]) => RedisReply): {
  link: RedisLink;
  sent: string[][];
  maxInFlight: () => number;
} {
  const sent: string[][] = [];
  let inFlight = 0;
  let max = 0;
  const link: RedisLink = {
    async send(args) {
      sent.push([...args]);
      inFlight++;
      max = Math.max(max, inFlight);
      await nextTick();
      inFlight--;
      return answer(args);
    },
    async close() {},
  };
  return { link, sent, maxInFlight: () => max };
}

const sids = Array.from({ length: 2 * BURST + 500 }, (_, i) => `s${i}`);

test('touch: bursts of at most BURST, and the missing entries in order', async () => {
  // Every seventh entry is gone (PEXPIRE answers 0 for a missing key).
  const gone = new Set(sids.filter((_, i) => i % 7 === 3));
  const { link, sent, maxInFlight } = countingLink((args) =>
    args[0] === 'PEXPIRE' && gone.has(String(args[1]).slice(4, -1)) ? 0 : 1,
  );
  const missing = await new Directory(link, 30_000).touch(sids);
  assert.equal(sent.length, sids.length, 'one PEXPIRE per entry');
  assert.ok(maxInFlight() <= BURST, `at most ${BURST} in flight, saw ${maxInFlight()}`);
  assert.ok(maxInFlight() > 1, 'a burst is pipelined');
  assert.deepEqual(missing, [...gone]);
});

test('registerAll: every entry written once, in bursts of at most BURST', async () => {
  const { link, sent, maxInFlight } = countingLink(() => 1);
  const entry: DirectoryEntry = {
    owner: 'inc',
    address: 'http://127.0.0.1:1',
    epoch: 1,
    principal: '',
    tag: 't',
    version: '2025-11-25',
    init: '',
  };
  await new Directory(link, 30_000).registerAll(sids.map((sid): [string, DirectoryEntry] => [sid, entry]));
  // EVALSHA sha 1 key ...: the key is the fourth argument.
  const keys = sent.map((a) => a[3]);
  assert.equal(new Set(keys).size, sids.length);
  assert.equal(keys.length, sids.length);
  assert.ok(maxInFlight() <= BURST && maxInFlight() > 1, `in flight: ${maxInFlight()}`);
});
