import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { RingBuffer } from '../../src/flow/ring-buffer.js';

const seqs = (r: RingBuffer<string>, after = 0) => r.after(after).map((e) => e.seq);

describe('flow/ring-buffer', () => {
  test('count bound: keeps the newest maxCount entries and counts evictions', () => {
    const r = new RingBuffer<string>({ maxCount: 3, maxBytes: 1e9, maxAgeMs: 1e9 });
    for (let i = 1; i <= 10; i++) r.push(i, `v${i}`, 1, 0);
    assert.equal(r.length, 3);
    assert.deepEqual(seqs(r), [8, 9, 10]);
    assert.equal(r.firstSeq, 8);
    assert.equal(r.evicted, 7);
    assert.equal(r.bytes, 3);
  });

  test('byte bound: evicts oldest until bytes fit; an entry larger than maxBytes does not stay', () => {
    const r = new RingBuffer<string>({ maxCount: 100, maxBytes: 10, maxAgeMs: 1e9 });
    r.push(1, 'a', 4, 0);
    r.push(2, 'b', 4, 0);
    assert.equal(r.bytes, 8);
    r.push(3, 'c', 4, 0);
    assert.deepEqual(seqs(r), [2, 3]);
    assert.equal(r.bytes, 8);
    r.push(4, 'd', 11, 0);
    assert.equal(r.length, 0);
    assert.equal(r.bytes, 0);
    assert.equal(r.firstSeq, undefined);
    assert.equal(r.evicted, 4);
  });

  test('age bound: entries older than maxAgeMs go on push and on evictExpired', () => {
    const r = new RingBuffer<string>({ maxCount: 100, maxBytes: 1e9, maxAgeMs: 100 });
    r.push(1, 'a', 1, 0);
    r.push(2, 'b', 1, 50);
    r.push(3, 'c', 1, 100);
    assert.deepEqual(seqs(r), [1, 2, 3], 'exactly maxAgeMs old is kept');
    r.push(4, 'd', 1, 101);
    assert.deepEqual(seqs(r), [2, 3, 4]);
    r.evictExpired(175);
    assert.deepEqual(seqs(r), [3, 4]);
    r.evictExpired(10_000);
    assert.equal(r.length, 0);
    assert.equal(r.bytes, 0);
    assert.equal(r.evicted, 4);
  });

  test('after(seq): entries strictly after the cursor, for cursors before, inside, between and past', () => {
    const r = new RingBuffer<string>({ maxCount: 100, maxBytes: 1e9, maxAgeMs: 1e9 });
    for (const s of [2, 4, 6, 8]) r.push(s, `v${s}`, 1, 0);
    assert.deepEqual(seqs(r, 0), [2, 4, 6, 8]);
    assert.deepEqual(seqs(r, 2), [4, 6, 8]);
    assert.deepEqual(seqs(r, 5), [6, 8]);
    assert.deepEqual(seqs(r, 8), []);
    assert.deepEqual(seqs(r, 99), []);
    assert.deepEqual(
      r.after(4).map((e) => e.value),
      ['v6', 'v8'],
    );
  });

  test('growth while wrapped keeps each slot (seq, bytes, time, value) together, in order', () => {
    // The store raises a live stream's bounds in place (events/memory-event-store.ts): evict with a
    // small bound so the head wraps, then raise it so the ring grows while wrapped, twice over.
    const limits = { maxCount: 3, maxBytes: 1e9, maxAgeMs: 1_000 };
    const r = new RingBuffer<number>(limits);
    for (let i = 1; i <= 7; i++) r.push(i, i * 10, i, i);
    assert.deepEqual(seqs(r as unknown as RingBuffer<string>), [5, 6, 7]);
    limits.maxCount = 1000;
    for (let i = 8; i <= 300; i++) r.push(i, i * 10, i, i);
    const all = r.after(0);
    assert.equal(r.length, 296);
    assert.deepEqual(
      all.map((e) => [e.seq, e.value, e.bytes, e.at]),
      Array.from({ length: 296 }, (_, k) => [k + 5, (k + 5) * 10, k + 5, k + 5]),
    );
    assert.equal(
      r.bytes,
      all.reduce((a, e) => a + e.bytes, 0),
    );
    assert.deepEqual(seqs(r as unknown as RingBuffer<string>, 297), [298, 299, 300]);
    // Times moved with their slots: the age bound drops exactly the entries older than the cutoff.
    r.evictExpired(1_100);
    assert.equal(r.firstSeq, 100);
    assert.equal(r.tail, 3000);
  });

  test('clear empties it; it is usable again', () => {
    const r = new RingBuffer<string>({ maxCount: 10, maxBytes: 100, maxAgeMs: 100 });
    for (let i = 1; i <= 9; i++) r.push(i, 'x', 5, 0);
    r.clear();
    assert.equal(r.length, 0);
    assert.equal(r.bytes, 0);
    assert.equal(r.firstSeq, undefined);
    r.push(10, 'y', 5, 0);
    assert.deepEqual(seqs(r), [10]);
  });

  test('model-based: any sequence of pushes and clock steps matches a naive model (property)', () => {
    const op = fc.record({
      bytes: fc.integer({ min: 0, max: 40 }),
      dt: fc.integer({ min: 0, max: 30 }),
      sweep: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.record({
          maxCount: fc.integer({ min: 1, max: 20 }),
          maxBytes: fc.integer({ min: 1, max: 120 }),
          maxAgeMs: fc.integer({ min: 1, max: 100 }),
        }),
        fc.array(op, { maxLength: 120 }),
        fc.nat({ max: 130 }),
        (limits, ops, cursor) => {
          const r = new RingBuffer<number>(limits);
          let model: { seq: number; bytes: number; at: number }[] = [];
          let evicted = 0;
          let now = 0;
          let seq = 0;
          const evictAge = () => {
            while (model.length > 0 && (model[0]?.at ?? 0) < now - limits.maxAgeMs) {
              model.shift();
              evicted++;
            }
          };
          for (const o of ops) {
            now += o.dt;
            if (o.sweep) {
              r.evictExpired(now);
              evictAge();
              continue;
            }
            seq++;
            r.push(seq, seq, o.bytes, now);
            model.push({ seq, bytes: o.bytes, at: now });
            evictAge();
            const total = () => model.reduce((a, e) => a + e.bytes, 0);
            while (model.length > limits.maxCount || (total() > limits.maxBytes && model.length > 0)) {
              model.shift();
              evicted++;
            }
          }
          assert.equal(r.length, model.length);
          assert.equal(
            r.bytes,
            model.reduce((a, e) => a + e.bytes, 0),
          );
          assert.equal(r.evicted, evicted);
          assert.equal(r.firstSeq, model[0]?.seq);
          assert.deepEqual(
            r.after(cursor).map((e) => e.seq),
            model.filter((e) => e.seq > cursor).map((e) => e.seq),
          );
          model = [];
        },
      ),
      { numRuns: 500 },
    );
  });

  test('counted entries: the count bound sums what each entry holds, a grown tail included', () => {
    const r = new RingBuffer<string>({ maxCount: 10, maxBytes: 1e9, maxAgeMs: 1e9 });
    r.push(1, 'a', 1, 0); // counts 1
    r.push(2, 'run', 1, 0, 4); // a run of 4 (seq 2..5)
    r.growTail(7, 1, 0, 2); // grew by 2 (to seq 7)
    assert.equal(r.count, 7);
    assert.equal(r.length, 2);
    r.push(8, 'b', 1, 0, 3); // 10: at the bound, nothing dropped
    assert.equal(r.count, 10);
    assert.equal(r.evicted, 0);
    r.push(9, 'c', 1, 0); // 11: the oldest entry goes (1)
    assert.deepEqual(seqs(r), [7, 8, 9]);
    assert.equal(r.count, 10);
    r.growTail(12, 1, 0, 3); // 13: the run of 6 goes, as a whole
    assert.deepEqual(seqs(r), [8, 12]);
    assert.equal(r.count, 7);
    // The newest entry is never dropped, even alone above the bound.
    r.growTail(30, 1, 0, 20);
    assert.deepEqual(seqs(r), [30]);
    assert.equal(r.count, 24);
    r.clear();
    assert.equal(r.count, 0);
  });
});
