// The proxy tests' clump count (test/helpers/stream-checks.ts): events read together right after a
// stall of the reading process are not a proxy holding them; events together without such a stall
// are. The first case is a CI run's own figures (a 918 ms stall of the test process).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clumped } from '../helpers/stream-checks.js';

const CI_RUN = [171, 1558, 1558, 1558, 1582, 1682, 1830, 1929, 2041, 2150];

test('events read together right after a stall of this process are not counted as clumps', () => {
  assert.equal(clumped(CI_RUN), 3, 'without the stall, three clumps');
  assert.equal(clumped(CI_RUN, [{ from: 640, to: 1557 }]), 0);
});

test('a clump with no stall to explain it, or away from the stall, still counts', () => {
  const held = [100, 900, 900, 901, 902, 1500, 1600, 1700, 1800, 1900];
  assert.equal(clumped(held), 3);
  assert.equal(clumped(held, [{ from: 1200, to: 1400 }]), 3, 'a stall elsewhere excuses nothing');
  assert.equal(clumped(held, [{ from: 300, to: 840 }]), 3, 'nor one that ended more than 50 ms before');
});
