// Partial output in the replay store (issue 21, item 4): consecutive deltas are stored as runs that
// replay exactly from any id inside them, so they are bounded by bytes, not by event count; and a
// stream's bounds follow its measured rate within the budget.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createParser } from 'eventsource-parser';
import { MemoryEventStore } from '../../src/events/memory-event-store.js';
import { RUN_MAX_BYTES, type StoredDelta } from '../../src/events/partial-run.js';
import { escapeJsonText, PARTIAL_META_KEY, PartialTemplate } from '../../src/jsonrpc/partial.js';
import { encodeJsonFrame } from '../../src/sse/encode.js';
import { encodeSeq } from '../../src/sse/event-id.js';

const template = new PartialTemplate('progress', 'tok');
const id = (seq: number) => `tag.1.${encodeSeq(seq)}`;

/** Appends `texts` as deltas of one request (event seqs from `seq0`), each also as its own frame. */
function appendDeltas(
  store: MemoryEventStore,
  owner: object,
  seq0: number,
  index0: number,
  texts: string[],
): void {
  texts.forEach((t, k) => {
    const escaped = escapeJsonText(t);
    const d: StoredDelta = { template, owner, index: index0 + k, escaped, id: id(seq0 + k) };
    store.append('s', 1, {
      seq: seq0 + k,
      frame: encodeJsonFrame(d.id, template.text(d.index, 1, escaped)),
      partial: d,
    });
  });
}

/** The deltas a replay carries: text, marker and ids, checked for order. */
function read(frames: string[]): { text: string; first: number; deltas: number; lastId: string | undefined } {
  let text = '';
  let first = -1;
  let next = -1;
  let lastId: string | undefined;
  const p = createParser({
    onEvent: (e) => {
      const m = JSON.parse(e.data);
      const mark = m.params._meta[PARTIAL_META_KEY] as { seq: number; n: number };
      if (first < 0) first = next = mark.seq;
      assert.equal(mark.seq, next, 'deltas in order, none missing');
      next += mark.n;
      assert.equal(m.params.progress, mark.seq + mark.n);
      text += m.params.message;
      lastId = e.id;
    },
  });
  for (const f of frames) p.feed(f);
  return { text, first, deltas: next - first, lastId };
}

describe('partial output in the replay store', () => {
  test('20,000 deltas within the default bounds: one entry per run, a replay from every cursor is exact', () => {
    const store = new MemoryEventStore();
    const texts = Array.from({ length: 20_000 }, (_, i) => `w${i} "q" \\ é\n`);
    appendDeltas(store, {}, 1, 0, texts);
    const st = store.stats();
    assert.equal(st.evictions, 0, 'nothing evicted');
    assert.ok(st.events < 100, `${st.events} entries`);
    for (const cursor of [0, 1, 2, 777, 19_999, 20_000]) {
      const r = store.replay('s', 1, cursor);
      assert.equal(r.status, 'ok');
      const got = read(r.status === 'ok' ? r.events.map((e) => e.frame) : []);
      assert.equal(got.text, texts.slice(cursor).join(''), `after ${cursor}`);
      if (cursor < 20_000) {
        assert.equal(got.first, cursor, 'the marker starts at the first delta after the cursor');
        assert.equal(got.lastId, id(20_000), 'the newest id');
        const frames = r.status === 'ok' ? r.events : [];
        assert.equal(frames[0]?.seq, cursor + 1, 'the first frame holds one delta');
        assert.ok(frames.length < 200, `${frames.length} frames`);
        frames.forEach((f, k) => {
          assert.ok(k === 0 || f.seq > (frames[k - 1]?.seq ?? 0), 'seqs increase');
          assert.match(
            f.frame,
            new RegExp(`^id: ${id(f.seq).replace(/\./g, '\\.')}\n`),
            'each frame has its own id',
          );
        });
      }
    }
    store.close();
  });

  test('runs break at another request, a non-delta event and a gap; each still replays exactly', () => {
    const store = new MemoryEventStore();
    const a = {};
    const b = {};
    appendDeltas(store, a, 1, 0, ['a0', 'a1', 'a2']);
    appendDeltas(store, b, 4, 0, ['b0', 'b1']);
    store.append('s', 1, { seq: 6, frame: encodeJsonFrame(id(6), '{"jsonrpc":"2.0","method":"x"}') });
    appendDeltas(store, a, 7, 3, ['a3']);
    appendDeltas(store, a, 8, 5, ['a5']); // a delta index gap: a new run
    assert.equal(store.stats().events, 5);
    const r = store.replay('s', 1, 2);
    assert.equal(r.status, 'ok');
    const events = r.status === 'ok' ? r.events : [];
    // One frame per delta here: a replayed run's first frame holds one delta.
    assert.deepEqual(
      events.map((e) => e.seq),
      [3, 4, 5, 6, 7, 8],
    );
    assert.match(events[0]?.frame ?? '', /"message":"a2".*"seq":2,"n":1/);
    store.close();
  });

  test(`a run stops at ${RUN_MAX_BYTES} bytes, so the byte bound evicts old text in slices, never the newest run`, () => {
    const store = new MemoryEventStore({ limits: { maxBytes: 4 * RUN_MAX_BYTES, tolerableDisconnectMs: 0 } });
    const chunk = 'x'.repeat(1024);
    appendDeltas(store, {}, 1, 0, Array(1000).fill(chunk));
    const st = store.stats();
    assert.ok(st.bytes <= 4 * RUN_MAX_BYTES + 2048, `${st.bytes} bytes`);
    assert.ok(st.evictions > 0);
    assert.equal(store.replay('s', 1, 0).status, 'evicted');
    const r = store.replay('s', 1, 990);
    assert.equal(read(r.status === 'ok' ? r.events.map((e) => e.frame) : []).text, chunk.repeat(10));
    store.close();
  });

  test('a sized stream gets bounds of its own: a quiet stream of any session keeps the configured ones', () => {
    let now = 1_000;
    const store = new MemoryEventStore({
      now: () => now,
      limits: { maxCount: 8, maxBytes: 1024, tolerableDisconnectMs: 10_000 },
      maxTotalBytes: 4 * 1024 * 1024,
      sweepMs: 1e9,
    });
    store.append('quiet', 0, { seq: 1, frame: 'q' });
    store.append('s', 0, { seq: 1, frame: 'q' });
    for (let i = 1; i <= 100; i++) {
      store.append('s', 1, { seq: i, frame: 'y'.repeat(100) });
      now += 10;
    }
    assert.equal(store.stats().streamsSized, 1);
    // The others still evict at the configured bounds (8 events, 1024 bytes).
    for (const [session, stream] of [
      ['quiet', 0],
      ['s', 0],
    ] as const) {
      for (let i = 2; i <= 12; i++) store.append(session, stream, { seq: i, frame: 'z' });
      assert.equal(store.replay(session, stream, 3).status, 'evicted', `${session}/${stream}`);
      assert.equal(store.replay(session, stream, 4).status, 'ok', `${session}/${stream}`);
    }
    store.close();
  });

  test('a stream is sized by its measured rate within the budget; stats report it', () => {
    let now = 1_000;
    const store = new MemoryEventStore({
      now: () => now,
      limits: { maxCount: 8, maxBytes: 1024, tolerableDisconnectMs: 10_000 },
      maxTotalBytes: 4 * 1024 * 1024,
    });
    // 100 events of 100 bytes in one second: 10 kB/s, 100 kB for a 10 s disconnect.
    for (let i = 1; i <= 100; i++) {
      store.append('s', 1, { seq: i, frame: 'y'.repeat(100) });
      now += 10;
    }
    let st = store.stats();
    assert.equal(st.evictions, 0, 'sized before anything was evicted');
    assert.equal(st.streamsSized, 1);
    assert.ok(
      st.largestStreamBound >= 100 * 100 && st.largestStreamBound <= 1024 * 1024,
      `${st.largestStreamBound}`,
    );
    // A flood is capped at a quarter of the budget.
    for (let i = 101; i <= 20_000; i++) store.append('s', 1, { seq: i, frame: 'z'.repeat(1000) });
    st = store.stats();
    assert.equal(st.largestStreamBound, 1024 * 1024);
    assert.ok(st.bytes <= 1024 * 1024);
    store.endStream('s', 1, 60_000);
    assert.equal(store.stats().streamsSized, 0, 'finished streams are not counted');
    store.close();
  });

  test('fill: how full a live stream is', () => {
    const store = new MemoryEventStore({
      limits: { maxCount: 10, maxBytes: 1000, tolerableDisconnectMs: 0 },
    });
    assert.equal(store.fill('s', 1), 0);
    for (let i = 1; i <= 5; i++) store.append('s', 1, { seq: i, frame: 'f'.repeat(10) });
    assert.equal(store.fill('s', 1), 0.5);
    store.close();
  });
});
