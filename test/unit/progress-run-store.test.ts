// Progress in the replay store (events/progress-run.ts): notifications that come with their parts are
// kept as runs of values that render every frame again byte for byte; a resume from any id (inside
// a run, at its edges, between runs and other frames) gets exactly the frames after it; the byte
// and count bounds hold as frame by frame, eviction drops whole runs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { StoredEvent } from '../../src/events/event-store.js';
import { MemoryEventStore } from '../../src/events/memory-event-store.js';
import { PROGRESS_RUN_MAX_BYTES, PROGRESS_RUN_MAX_SPAN_MS } from '../../src/events/progress-run.js';
import { ProgressJson } from '../../src/jsonrpc/progress-json.js';
import { encodeJsonFrame } from '../../src/sse/encode.js';
import { encodeSeq } from '../../src/sse/event-id.js';

const PREFIX = 'AbCdEfGhIj.1.';

type Step =
  | { kind: 'progress'; token: string | number; progress: number; total: number | undefined; message: string }
  | { kind: 'other'; text: string };

/** Appends the steps as the stream's log would (frames numbered from `seq0`); returns every frame sent. */
function play(store: MemoryEventStore, steps: Step[], seq0 = 1): StoredEvent[] {
  const pj = new ProgressJson();
  const sent: StoredEvent[] = [];
  steps.forEach((s, k) => {
    const seq = seq0 + k;
    const id = PREFIX + encodeSeq(seq);
    if (s.kind === 'other') {
      const frame = encodeJsonFrame(
        id,
        JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: s.text } }),
      );
      store.append('s', 1, { seq, frame });
      sent.push({ seq, frame });
      return;
    }
    const n = {
      method: 'notifications/progress',
      params: { progressToken: s.token, progress: s.progress, total: s.total, message: s.message },
    };
    const e = pj.read(n);
    assert.ok(e !== undefined);
    assert.equal(e.json, JSON.stringify({ ...n, jsonrpc: '2.0' }));
    const frame = encodeJsonFrame(id, e.json);
    store.append('s', 1, { seq, frame, progress: e });
    sent.push({ seq, frame });
  });
  return sent;
}

function replayed(store: MemoryEventStore, after: number): StoredEvent[] | string {
  const r = store.replay('s', 1, after);
  return r.status === 'ok' ? r.events.map((e) => ({ seq: e.seq, frame: e.frame })) : r.status;
}

const progressSteps = (count: number, message = ''): Step[] =>
  Array.from({ length: count }, (_, i) => ({
    kind: 'progress' as const,
    token: 'tok',
    progress: i + 1,
    total: count,
    message,
  }));

describe('progress runs in the replay store', () => {
  test('random streams of progress and other frames: a replay from every cursor is exactly what followed it', () => {
    const step: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          kind: fc.constant('progress' as const),
          token: fc.constantFrom('a', 'b', 7),
          progress: fc.oneof(fc.integer(), fc.double()),
          total: fc.constantFrom(undefined, 100, 1.5),
          message: fc.constantFrom('', 'step', '"é"\n', '\ud800'),
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('other' as const), text: fc.string() }) },
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60 }), (steps) => {
        const store = new MemoryEventStore();
        const sent = play(store, steps);
        for (let after = 0; after <= sent.length; after++)
          assert.deepEqual(replayed(store, after), sent.slice(after), `after ${after}`);
        store.close();
      }),
      { numRuns: 300 },
    );
  });

  test('one flood is a few entries; resume inside a run, at its first and last id, and after the end', () => {
    const store = new MemoryEventStore();
    const sent = play(store, progressSteps(5_000, 'working'));
    const stats = store.stats();
    const bytes = sent.reduce((n, e) => n + e.frame.length, 0);
    assert.equal(stats.bytes, bytes, 'the bytes of the frames, as if each were kept');
    assert.ok(stats.events < 5_000 / 50, `${stats.events} entries for 5,000 events`);
    assert.ok(stats.events >= Math.floor(bytes / PROGRESS_RUN_MAX_BYTES), 'runs stop growing at their bound');
    // A run ends with the frame that takes it to its byte bound: cursors around the first two ends.
    const ends: number[] = [];
    let run = 0;
    for (const e of sent) {
      run += e.frame.length;
      if (run >= PROGRESS_RUN_MAX_BYTES) {
        ends.push(e.seq);
        run = 0;
      }
    }
    const [end1 = 0, end2 = 0] = ends;
    for (const after of [0, 1, 2, end1 - 1, end1, end1 + 1, end2 - 1, end2, end2 + 1, 4_998, 4_999, 5_000])
      assert.deepEqual(replayed(store, after), sent.slice(after), `after ${after}`);
    for (let after = 0; after <= 5_000; after += 397)
      assert.deepEqual(replayed(store, after), sent.slice(after));
    store.close();
  });

  test('the byte bound holds as frame by frame; eviction drops whole runs, oldest first; older cursors are refused', () => {
    const maxBytes = 200_000;
    const store = new MemoryEventStore({
      limits: { maxBytes, maxCount: 1_000_000, tolerableDisconnectMs: 0 },
    });
    const sent = play(store, progressSteps(20_000, 'm'));
    const stats = store.stats();
    assert.ok(stats.bytes <= maxBytes, `${stats.bytes} bytes kept`);
    assert.ok(stats.bytes > maxBytes - PROGRESS_RUN_MAX_BYTES - 200, 'at most one run less than the bound');
    assert.ok(stats.evictions > 0);
    // The first kept event: replays from before it are refused, from it on exact.
    const all = store.replay('s', 1, 0, { allowGap: true });
    assert.equal(all.status, 'ok');
    const first = all.status === 'ok' ? (all.events[0]?.seq ?? 0) : 0;
    assert.ok(first > 1);
    assert.deepEqual(all.status === 'ok' ? all.events : [], sent.slice(first - 1));
    assert.equal(replayed(store, first - 2), 'evicted');
    for (const after of [first - 1, first, first + 1, 19_999, 20_000])
      assert.deepEqual(replayed(store, after), sent.slice(after), `after ${after}`);
    store.close();
  });

  test('the count bound counts frames, in runs or not; a run holds at most a quarter of it', () => {
    // Two tokens alternating in blocks of 10: a new token is a new layout, so a new run.
    const steps: Step[] = [];
    for (let b = 0; b < 8; b++)
      for (let i = 0; i < 10; i++)
        steps.push({ kind: 'progress', token: b % 2 === 0 ? 'x' : 'y', progress: i, total: 10, message: '' });
    // maxCount 3: runs of one frame, so exactly the last three frames are kept, as frame by frame.
    const small = new MemoryEventStore({
      limits: { maxCount: 3, maxBytes: 1 << 30, tolerableDisconnectMs: 0 },
    });
    const sent = play(small, steps);
    assert.equal(small.stats().events, 3, 'three frames kept');
    assert.equal(replayed(small, 76), 'evicted');
    for (const after of [77, 78, 79, 80])
      assert.deepEqual(replayed(small, after), sent.slice(after), `after ${after}`);
    small.close();
    // maxCount 40: runs of up to 10 frames (each block one run), four of them kept: 40 frames.
    const large = new MemoryEventStore({
      limits: { maxCount: 40, maxBytes: 1 << 30, tolerableDisconnectMs: 0 },
    });
    play(large, steps);
    assert.equal(large.stats().events, 4, 'four runs');
    assert.equal(replayed(large, 39), 'evicted');
    for (const after of [40, 45, 50, 79, 80])
      assert.deepEqual(replayed(large, after), sent.slice(after), `after ${after}`);
    large.close();
  });

  test('a run stops growing after its span, so the age bound sees every event at most that late', () => {
    let now = 0;
    const maxAgeMs = 10_000;
    const store = new MemoryEventStore({ now: () => now, limits: { maxAgeMs, tolerableDisconnectMs: 0 } });
    const pj = new ProgressJson();
    const sent: StoredEvent[] = [];
    // One event every 100 ms for 5 s: runs of at most the span's worth of events.
    for (let seq = 1; seq <= 50; seq++) {
      const e = pj.read({ method: 'notifications/progress', params: { progressToken: 't', progress: seq } });
      assert.ok(e !== undefined);
      const frame = encodeJsonFrame(PREFIX + encodeSeq(seq), e.json);
      store.append('s', 1, { seq, frame, progress: e });
      sent.push({ seq, frame });
      now += 100;
    }
    const perRun = PROGRESS_RUN_MAX_SPAN_MS / 100 + 1;
    assert.equal(store.stats().events, Math.ceil(50 / perRun));
    assert.deepEqual(replayed(store, 0), sent);
    // Event 1 was appended at 0: past maxAgeMs plus the span, it is gone; the newest ones are not.
    now = maxAgeMs + PROGRESS_RUN_MAX_SPAN_MS + 1;
    assert.equal(replayed(store, 0), 'evicted');
    assert.deepEqual(replayed(store, 40), sent.slice(40));
    store.close();
  });

  test('a frame the run would not render the same (no id here) is kept as text', () => {
    const store = new MemoryEventStore();
    const e = new ProgressJson().read({
      method: 'notifications/progress',
      params: { progressToken: 1, progress: 1 },
    });
    assert.ok(e !== undefined);
    const frame = `data: ${e.json}\n\n`;
    store.append('s', 1, { seq: 1, frame, progress: e });
    const other = `id: ${PREFIX}2\ndata: ${e.json.replace('"progress":1', '"progress":2')}\n\n`;
    store.append('s', 1, { seq: 2, frame: other, progress: e });
    assert.deepEqual(replayed(store, 0), [
      { seq: 1, frame },
      { seq: 2, frame: other },
    ]);
    store.close();
  });
});
