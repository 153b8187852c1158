/**
 * Section (c)'s settled reading (bench/load/settle.ts): settled only once RSS less the young
 * generation held still over the given number of looks in a row, each with the young generation at
 * its floor.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SettleWatch } from '../../bench/load/settle.js';

const MB = 1024 * 1024;
const rule = { youngFloorBytes: 2 * MB, stillBytes: 256 * 1024, stillLooks: 3 };

test('not settled while the young generation is above its floor, however still RSS is', () => {
  const w = new SettleWatch(rule);
  for (let i = 0; i < 20; i++) assert.equal(w.look(28 * MB, 100 * MB), false);
});

test('settled on the third still look at the floor', () => {
  const w = new SettleWatch(rule);
  assert.equal(w.look(28 * MB, 106 * MB), false);
  assert.equal(w.look(1 * MB, 80 * MB), false);
  assert.equal(w.look(0.5 * MB, 79 * MB), false);
  // 79 → 78.5 → 78.5: moved 0.5 MB over the window.
  assert.equal(w.look(0.5 * MB, 79 * MB), false);
  assert.equal(w.look(0.5 * MB, 79 * MB + 1000), true);
});

test('a look with the young generation above its floor starts the count again', () => {
  // A keepalive round over 5,000 streams: the young generation grows by 3 MB, and RSS with it.
  const w = new SettleWatch(rule);
  w.look(1 * MB, 150 * MB);
  w.look(1 * MB, 150 * MB);
  assert.equal(w.look(4 * MB, 153 * MB), false);
  assert.equal(w.look(1 * MB, 150 * MB), false);
  assert.equal(w.look(1 * MB, 150 * MB), false);
  assert.equal(w.look(1 * MB, 150 * MB), true);
});

test('what the figure counts moving unsettles it: old space or malloc, not the young generation', () => {
  const w = new SettleWatch(rule);
  w.look(1 * MB, 150 * MB);
  w.look(1 * MB, 151 * MB);
  assert.equal(w.look(1 * MB, 151 * MB), false);
  assert.equal(w.look(0.2 * MB, 150.2 * MB), true);
});

test('bad rules are refused', () => {
  assert.throws(() => new SettleWatch({ ...rule, stillLooks: 0 }), RangeError);
  assert.throws(() => new SettleWatch({ ...rule, stillLooks: 1.5 }), RangeError);
  assert.throws(() => new SettleWatch({ ...rule, stillBytes: 0 }), RangeError);
  assert.throws(() => new SettleWatch({ ...rule, youngFloorBytes: Number.NaN }), RangeError);
});

test('property: settled exactly when the last stillLooks looks are all at the floor and RSS less young spans less than stillBytes', () => {
  const look = fc.record({
    young: fc.oneof(fc.integer({ min: 0, max: 40 * MB }), fc.integer({ min: 0, max: 2 * MB })),
    rss: fc.integer({ min: 50 * MB, max: 51 * MB }),
  });
  fc.assert(
    fc.property(fc.array(look, { maxLength: 30 }), fc.integer({ min: 1, max: 5 }), (looks, stillLooks) => {
      const r = { ...rule, stillLooks };
      const w = new SettleWatch(r);
      looks.forEach((l, i) => {
        const got = w.look(l.young, l.rss);
        const window = i + 1 >= stillLooks ? looks.slice(i + 1 - stillLooks, i + 1) : [];
        const beyond = window.map((x) => x.rss - x.young);
        const want =
          window.length === stillLooks &&
          window.every((x) => x.young <= r.youngFloorBytes) &&
          Math.max(...beyond) - Math.min(...beyond) < r.stillBytes;
        assert.equal(got, want);
      });
    }),
  );
});
