// The memory store holds a stream's first event alone beside its ring while it is all the stream
// holds (events/stream-log.ts). That must be a matter of memory only: these tests hold the store
// against one that puts every event into its ring at once (`holdFirstAlone: false`), given the
// same events.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { StoredEvent } from '../../src/events/event-store.js';
import { MemoryEventStore, type MemoryEventStoreOptions } from '../../src/events/memory-event-store.js';

const priming = (seq: number): StoredEvent => ({
  seq,
  frame: `id: x.0.${seq}\nretry: 1000\ndata: \n\n`,
});
const frame = (seq: number, size = 20): StoredEvent => ({
  seq,
  frame: `id: x.0.${seq}\ndata: ${'y'.repeat(size)}\n\n`,
});

describe("events/memory-event-store: a stream's first event held alone", () => {
  test('a stream that only primed replays its priming event, counts it, and moves it into the ring in order', () => {
    const s = new MemoryEventStore();
    const p = priming(1);
    s.append('s', 0, p);
    assert.deepEqual(s.replay('s', 0, 0), { status: 'ok', events: [{ seq: 1, frame: p.frame }] });
    assert.deepEqual(s.replay('s', 0, 1), { status: 'ok', events: [] });
    assert.equal(s.replay('s', 0, 2).status, 'unknown');
    assert.deepEqual(s.stats().events, 1);
    assert.equal(s.stats().bytes, p.frame.length);
    assert.ok(s.fill('s', 0) > 0);
    s.append('s', 0, frame(2));
    const r = s.replay('s', 0, 0);
    assert.deepEqual(r.status === 'ok' ? r.events.map((e) => e.seq) : r, [1, 2]);
    assert.equal(s.stats().bytes, p.frame.length + frame(2).frame.length);
    s.dropSession('s');
    assert.deepEqual([s.stats().bytes, s.stats().streams], [0, 0]);
    s.close();
  });

  test('a priming event ages out like any other', () => {
    let t = 1_000;
    const s = new MemoryEventStore({ limits: { maxAgeMs: 100 }, now: () => t });
    s.append('s', 0, priming(1));
    t += 500;
    assert.deepEqual(s.replay('s', 0, 1), { status: 'ok', events: [] });
    assert.equal(s.replay('s', 0, 0).status, 'evicted');
    assert.deepEqual([s.stats().events, s.stats().evictions, s.stats().bytes], [0, 1, 0]);
    s.close();
  });

  const where = { session: fc.integer({ min: 0, max: 2 }), stream: fc.integer({ min: 0, max: 2 }) };
  const ops = fc.array(
    fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          op: fc.constant('append' as const),
          ...where,
          priming: fc.boolean(),
          size: fc.integer({ min: 0, max: 300 }),
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 400 }) }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          op: fc.constant('replay' as const),
          ...where,
          back: fc.integer({ min: -1, max: 6 }),
          allowGap: fc.boolean(),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          op: fc.constant('end' as const),
          ...where,
          graceMs: fc.integer({ min: 0, max: 500 }),
        }),
      },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('drop' as const), session: where.session }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('sweep' as const) }) },
    ),
    { maxLength: 80 },
  );
  const options = fc.record({
    maxCount: fc.integer({ min: 1, max: 6 }),
    maxBytes: fc.integer({ min: 10, max: 1500 }),
    maxAgeMs: fc.integer({ min: 1, max: 1000 }),
    tolerableDisconnectMs: fc.integer({ min: 0, max: 3000 }),
    maxTotalBytes: fc.integer({ min: 50, max: 4000 }),
    maxFinishedStreams: fc.integer({ min: 1, max: 4 }),
  });

  type Options = typeof options extends fc.Arbitrary<infer T> ? T : never;
  type Ops = typeof ops extends fc.Arbitrary<infer T> ? T : never;

  /** Runs `list` on a store that holds first events alone and on one that does not; asserts they answer alike. */
  function holdAgainstRing(o: Options, list: Ops): void {
    let t = 10_000;
    const make = (holdFirstAlone: boolean): MemoryEventStore => {
      const { maxTotalBytes, maxFinishedStreams, ...limits } = o;
      const opts: MemoryEventStoreOptions = {
        limits,
        maxTotalBytes,
        maxFinishedStreams,
        now: () => t,
        sweepMs: 1e9,
        holdFirstAlone,
      };
      return new MemoryEventStore(opts);
    };
    const beside = make(true);
    const inRing = make(false);
    const seqs = new Map<string, number>();
    try {
      for (const [i, x] of list.entries()) {
        if (x.op === 'advance') t += x.ms;
        else if (x.op === 'sweep') {
          beside.sweep();
          inRing.sweep();
        } else if (x.op === 'drop') {
          beside.dropSession(`s${x.session}`);
          inRing.dropSession(`s${x.session}`);
        } else {
          const key = `s${x.session}/${x.stream}`;
          const seq = seqs.get(key) ?? 0;
          const id = `s${x.session}`;
          if (x.op === 'append') {
            const e = x.priming ? priming(seq + 1) : frame(seq + 1, x.size);
            seqs.set(key, seq + 1);
            beside.append(id, x.stream, e);
            inRing.append(id, x.stream, { seq: e.seq, frame: e.frame });
          } else if (x.op === 'end') {
            beside.endStream(id, x.stream, x.graceMs);
            inRing.endStream(id, x.stream, x.graceMs);
          } else {
            const after = Math.max(0, seq - x.back);
            const opt = { allowGap: x.allowGap };
            assert.deepEqual(
              beside.replay(id, x.stream, after, opt),
              inRing.replay(id, x.stream, after, opt),
              `op ${i}`,
            );
          }
          assert.equal(beside.fill(id, x.stream), inRing.fill(id, x.stream), `fill after op ${i}`);
        }
        assert.deepEqual(beside.stats(), inRing.stats(), `stats after op ${i}`);
      }
    } finally {
      beside.close();
      inRing.close();
    }
  }

  test('property: what the store answers is the same as if the first event had gone into the ring', () => {
    fc.assert(fc.property(options, ops, holdAgainstRing), { numRuns: 400 });
  });

  test('a first event that aged out within a second still counts in the rate the next event is sized by', () => {
    // fast-check's counterexample (seed -943319499): a 99-byte frame aged out of its stream 2 ms after
    // it came, and a 298-byte one came in the same second. In the ring the meter had seen both (397
    // bytes in one second; a quarter of a second's disconnect of that is 99.25 bytes: the bound
    // raised to 100); the store that held the first alone had forgotten it and left the bound at 99.
    holdAgainstRing(
      {
        maxCount: 1,
        maxBytes: 99,
        maxAgeMs: 1,
        tolerableDisconnectMs: 250,
        maxTotalBytes: 400,
        maxFinishedStreams: 1,
      },
      [
        { op: 'append', session: 2, stream: 0, priming: false, size: 81 },
        { op: 'advance', ms: 2 },
        { op: 'sweep' },
        { op: 'append', session: 2, stream: 0, priming: false, size: 280 },
      ],
    );
  });
});
