import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryEventStore } from '../../src/events/memory-event-store.js';

const frame = (n: number, size = 10): string => `${n}`.padEnd(size, '.');

describe('events/memory-event-store: store-wide budget', () => {
  test('beyond maxFinishedStreams the oldest finished streams are freed first; live ones never', () => {
    const s = new MemoryEventStore({ maxFinishedStreams: 2, sweepMs: 1e9 });
    for (let id = 1; id <= 4; id++) {
      s.append('a', id, { seq: 1, frame: frame(id) });
      if (id !== 2) s.endStream('a', id, 60_000);
    }
    // Finished: 1, 3, 4 (three > two) → stream 1 freed; stream 2 is live and stays.
    assert.deepEqual(s.replay('a', 1, 0), { status: 'unknown' });
    for (const id of [2, 3, 4]) assert.equal(s.replay('a', id, 0).status, 'ok', `stream ${id}`);
    const st = s.stats();
    assert.equal(st.streams, 3);
    assert.equal(st.streamsEvicted, 1);
    assert.equal(st.bytes, 30);
    s.close();
  });

  test('beyond maxTotalBytes finished streams go, oldest first, until the store fits', () => {
    const s = new MemoryEventStore({ maxTotalBytes: 250, sweepMs: 1e9 });
    for (let id = 1; id <= 3; id++) {
      s.append('a', id, { seq: 1, frame: frame(id, 100) });
      s.endStream('a', id, 60_000);
    }
    // 300 bytes > 250 → stream 1 (the oldest finished) is freed.
    assert.equal(s.stats().bytes, 200);
    assert.deepEqual(s.replay('a', 1, 0), { status: 'unknown' });
    // A live stream pushing the store over the budget frees finished ones, never itself.
    s.append('a', 9, { seq: 1, frame: frame(9, 100) });
    s.append('a', 9, { seq: 2, frame: frame(9, 100) });
    assert.equal(s.replay('a', 9, 0).status, 'ok');
    assert.equal((s.replay('a', 9, 0) as { events: unknown[] }).events.length, 2);
    // Each 100-byte append tipped the store over: streams 2 and 3 went; stream 9 alone remains.
    assert.equal(s.stats().bytes, 200);
    assert.equal(s.stats().streams, 1);
    assert.equal(s.stats().streamsEvicted, 3);
    s.close();
  });

  test('byte accounting stays exact through eviction, sweep and dropSession', () => {
    let now = 0;
    const s = new MemoryEventStore({ limits: { maxCount: 2, maxAgeMs: 100 }, now: () => now, sweepMs: 1e9 });
    for (let seq = 1; seq <= 5; seq++) s.append('a', 1, { seq, frame: frame(seq) });
    assert.equal(s.stats().bytes, 20, 'the count bound keeps two frames');
    s.append('b', 1, { seq: 1, frame: frame(1, 7) });
    s.endStream('b', 1, 10);
    now = 50;
    s.sweep();
    assert.equal(s.stats().bytes, 20, 'b/1 freed after its grace');
    now = 500;
    s.sweep();
    assert.equal(s.stats().bytes, 0, 'aged entries evicted');
    s.append('a', 1, { seq: 6, frame: frame(6) });
    s.dropSession('a');
    const st = s.stats();
    assert.deepEqual([st.streams, st.events, st.bytes, st.streamsEvicted], [0, 0, 0, 0]);
    assert.equal(st.evictions, 5, 'three by the count bound, two by age (freed sessions are not evictions)');
    s.close();
  });
});
