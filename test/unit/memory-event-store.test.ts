import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryEventStore } from '../../src/events/memory-event-store.js';

function clock(start = 1_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}
const frame = (seq: number) => `id: x.1.${seq}\ndata: {"n":${seq}}\n\n`;
const seqsOf = (r: ReturnType<MemoryEventStore['replay']>) =>
  r.status === 'ok' ? r.events.map((e) => e.seq) : r.status;

describe('events/memory-event-store', () => {
  test('ok: events strictly after the cursor, oldest first, with their frames', () => {
    const s = new MemoryEventStore();
    for (let i = 1; i <= 5; i++) s.append('s1', 1, { seq: i, frame: frame(i) });
    const r = s.replay('s1', 1, 2);
    assert.equal(r.status, 'ok');
    assert.deepEqual(seqsOf(r), [3, 4, 5]);
    assert.equal(r.status === 'ok' ? r.events[0]?.frame : '', frame(3));
    assert.deepEqual(seqsOf(s.replay('s1', 1, 0)), [1, 2, 3, 4, 5]);
    assert.deepEqual(
      seqsOf(s.replay('s1', 1, 5)),
      [],
      'cursor at the newest event: nothing to replay, but ok',
    );
    s.close();
  });

  test('unknown: no such session, no such stream, a future cursor', () => {
    const s = new MemoryEventStore();
    s.append('s1', 1, { seq: 1, frame: frame(1) });
    assert.equal(s.replay('nope', 1, 0).status, 'unknown');
    assert.equal(s.replay('s1', 2, 0).status, 'unknown');
    assert.equal(s.replay('s1', 1, 2).status, 'unknown', 'a cursor the stream never issued');
    s.close();
  });

  test('sessions are isolated: the same stream number in another session is another log', () => {
    const s = new MemoryEventStore();
    s.append('a', 1, { seq: 1, frame: 'A1' });
    s.append('b', 1, { seq: 1, frame: 'B1' });
    s.append('b', 1, { seq: 2, frame: 'B2' });
    const r = s.replay('a', 1, 0);
    assert.deepEqual(r.status === 'ok' ? r.events.map((e) => e.frame) : r, ['A1']);
    assert.equal(s.replay('a', 1, 2).status, 'unknown');
    s.close();
  });

  test('evicted: the cursor is older than what the ring still holds (count bound)', () => {
    const s = new MemoryEventStore({ limits: { maxCount: 3 } });
    for (let i = 1; i <= 6; i++) s.append('s', 1, { seq: i, frame: frame(i) });
    assert.equal(s.replay('s', 1, 0).status, 'evicted');
    assert.equal(s.replay('s', 1, 2).status, 'evicted');
    assert.deepEqual(seqsOf(s.replay('s', 1, 3)), [4, 5, 6], 'first retained is cursor+1: no gap');
    assert.equal(s.stats().evictions, 3);
    s.close();
  });

  test('empty ring after age eviction: behind the last seq is evicted, at it is ok', () => {
    const c = clock();
    const s = new MemoryEventStore({ limits: { maxAgeMs: 100 }, now: c.now });
    s.append('s', 1, { seq: 1, frame: frame(1) });
    s.append('s', 1, { seq: 2, frame: frame(2) });
    c.advance(500);
    assert.equal(s.replay('s', 1, 1).status, 'evicted');
    assert.deepEqual(seqsOf(s.replay('s', 1, 2)), []);
    assert.equal(s.replay('s', 1, 3).status, 'unknown', 'future cursor stays recognisable after eviction');
    s.close();
  });

  test('byte bound evicts too', () => {
    // Fixed bounds (no sizing from the measured rate).
    const s = new MemoryEventStore({ limits: { maxBytes: 100, tolerableDisconnectMs: 0 } });
    for (let i = 1; i <= 10; i++) s.append('s', 1, { seq: i, frame: 'x'.repeat(30) });
    const st = s.stats();
    assert.ok(st.bytes <= 100);
    assert.equal(st.events, 3);
    assert.equal(s.replay('s', 1, 0).status, 'evicted');
    s.close();
  });

  test('endStream keeps the log for the grace period; sweep frees it after (injected clock)', () => {
    const c = clock();
    const s = new MemoryEventStore({ now: c.now, sweepMs: 1e9 });
    s.append('s', 1, { seq: 1, frame: frame(1) });
    s.append('s', 2, { seq: 1, frame: frame(1) });
    s.endStream('s', 1, 1_000);
    c.advance(999);
    s.sweep();
    assert.deepEqual(seqsOf(s.replay('s', 1, 0)), [1]);
    c.advance(1);
    s.sweep();
    assert.equal(s.replay('s', 1, 0).status, 'unknown');
    assert.deepEqual(seqsOf(s.replay('s', 2, 0)), [1], 'a stream not ended is untouched');
    assert.equal(s.stats().streams, 1);
    s.close();
  });

  test('sweep evicts aged entries of live streams and drops sessions left empty', () => {
    const c = clock();
    const s = new MemoryEventStore({ now: c.now, limits: { maxAgeMs: 50 }, sweepMs: 1e9 });
    s.append('s', 0, { seq: 1, frame: frame(1) });
    s.append('t', 1, { seq: 1, frame: frame(1) });
    s.endStream('t', 1, 10);
    c.advance(100);
    s.sweep();
    const st = s.stats();
    assert.equal(st.events, 0);
    assert.equal(st.streams, 1, 'the live stream 0 of s remains (empty), t is gone');
    assert.equal(st.evictions, 2);
    s.close();
  });

  test('dropSession frees every stream of that session at once', () => {
    const s = new MemoryEventStore();
    s.append('s', 0, { seq: 1, frame: 'a' });
    s.append('s', 1, { seq: 1, frame: 'b' });
    s.append('t', 1, { seq: 1, frame: 'c' });
    s.dropSession('s');
    s.dropSession('never-existed');
    assert.equal(s.replay('s', 0, 0).status, 'unknown');
    assert.equal(s.replay('s', 1, 0).status, 'unknown');
    assert.equal(s.replay('t', 1, 0).status, 'ok');
    const sized = { streamsSized: 0, largestStreamBound: 1024 * 1024 };
    assert.deepEqual(s.stats(), {
      streams: 1,
      events: 1,
      bytes: 1,
      evictions: 0,
      streamsEvicted: 0,
      ...sized,
    });
    s.close();
    assert.deepEqual(s.stats(), {
      streams: 0,
      events: 0,
      bytes: 0,
      evictions: 0,
      streamsEvicted: 0,
      streamsSized: 0,
      largestStreamBound: 0,
    });
  });

  test('the sweep timer runs on its own with a real clock', async () => {
    const s = new MemoryEventStore({ sweepMs: 20 });
    s.append('s', 1, { seq: 1, frame: 'a' });
    s.endStream('s', 1, 0);
    const deadline = Date.now() + 2_000;
    while (s.stats().streams > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(s.stats().streams, 0);
    s.close();
  });
});
