// The Redis copy in packs (cluster/replica-packs.ts, replica-scripts.ts): one element per batch,
// progress runs kept as values. Against a frame-by-frame model: whatever the batch splits, contents
// (progress runs, other frames, non-ASCII text, large frames) and bounds, a replay from every cursor
// is exactly the frames after it with their seqs, or `evicted` exactly where one frame per element
// would have evicted, and the copy's byte count is the frames' UTF-8 bytes. Also: a batch re-sent in
// part (the script cuts inside a pack), a gap, fin/reqs/TTL, and elements of another format.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { keys } from '../../src/cluster/keys.js';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { EventReplica, type ReplicaLimits } from '../../src/cluster/replica.js';
import { encodePacks, unpackAfter } from '../../src/cluster/replica-packs.js';
import { type ProgressEvent, ProgressJson } from '../../src/jsonrpc/progress-json.js';
import { encodeJsonFrame } from '../../src/sse/encode.js';
import { encodeSeq, eventIdPrefix } from '../../src/sse/event-id.js';
import { findRedis, REDIS_MISSING, type Redis, startRedis } from '../helpers/redis.js';

type Step =
  | { kind: 'progress'; progress: number; total: number | undefined; message: string | undefined }
  | { kind: 'other'; text: string; pad: number };

interface Event {
  seq: number;
  frame: string;
  progress: ProgressEvent | undefined;
}

const PREFIX = eventIdPrefix('AbCdEfGhIj', 1);

/** The frames a stream's log would write for these steps, numbered from `seq0`. */
function events(steps: readonly Step[], seq0 = 1): Event[] {
  const pj = new ProgressJson();
  return steps.map((s, k) => {
    const seq = seq0 + k;
    const id = PREFIX + encodeSeq(seq);
    if (s.kind === 'other') {
      const json = JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { data: s.text + 'x'.repeat(s.pad) },
      });
      return { seq, frame: encodeJsonFrame(id, json), progress: undefined };
    }
    const params: Record<string, unknown> = { progressToken: 'tok', progress: s.progress };
    if (s.total !== undefined) params['total'] = s.total;
    if (s.message !== undefined) params['message'] = s.message;
    const e = pj.read({ method: 'notifications/progress', params });
    assert.ok(e !== undefined);
    return { seq, frame: encodeJsonFrame(id, e.json), progress: e };
  });
}

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('progress' as const),
      progress: fc.oneof(fc.integer(), fc.double()),
      total: fc.option(fc.integer({ min: 0, max: 1e6 }), { nil: undefined }),
      // A message held over a run, or another (non-ASCII, escapes) from time to time.
      message: fc.option(fc.constantFrom('working', 'é ✓ 𝄞', 'tab\there "q"'), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('other' as const),
      text: fc.string({ unit: 'grapheme', maxLength: 12 }),
      pad: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })),
    }),
  },
);

/**
 * A run of progress counting by a constant step (a tool's usual loop): packed as start and step (R)
 * while its values stay under 2^51, as values (P) past that; starts and steps near and past that
 * limit, negative and zero steps.
 */
const counting: fc.Arbitrary<Step[]> = fc
  .record({
    start: fc.oneof(
      // Near zero, the values' digits (so their frames' bytes) change inside a run.
      fc.integer({ min: -120, max: 120 }),
      fc.integer({ min: -1e6, max: 1e6 }),
      fc.constantFrom(2 ** 51 - 40, -(2 ** 51) + 40, 2 ** 53 - 10, 1e21),
    ),
    by: fc.oneof(fc.constant(1), fc.integer({ min: -5, max: 5 }), fc.constantFrom(2 ** 50, 0.5)),
    n: fc.integer({ min: 2, max: 40 }),
    total: fc.option(fc.integer({ min: 0, max: 1e6 }), { nil: undefined }),
    message: fc.option(fc.constantFrom('working', 'é ✓ 𝄞'), { nil: undefined }),
  })
  .map(({ start, by, n, total, message }) =>
    Array.from({ length: n }, (_, i) => ({
      kind: 'progress' as const,
      progress: start + i * by,
      total,
      message,
    })),
  );

/** Steps, with counting runs among single ones. */
const steps = (maxLength: number): fc.Arbitrary<Step[]> =>
  fc
    .array(fc.oneof({ weight: 3, arbitrary: step.map((s) => [s]) }, { weight: 1, arbitrary: counting }), {
      minLength: 1,
      maxLength,
    })
    .map((runs) => runs.flat());

/** What one frame per element keeps: the newest frames within the bounds, at least one. */
function model(all: readonly Event[], l: { maxCount: number; maxBytes: number }): Event[] {
  const kept = [...all];
  let bytes = kept.reduce((s, e) => s + Buffer.byteLength(e.frame), 0);
  while (kept.length > l.maxCount || (bytes > l.maxBytes && kept.length > 1))
    bytes -= Buffer.byteLength((kept.shift() as Event).frame);
  return kept;
}

const utf8 = (frames: readonly Event[]): number => frames.reduce((s, e) => s + Buffer.byteLength(e.frame), 0);

describe('replica packs, codec', () => {
  test('packs split back into the frames after any cursor; headers count frames and UTF-8 bytes', () => {
    fc.assert(
      fc.property(steps(40), fc.nat(100), (st, c) => {
        const ev = events(st, 5);
        const packs = encodePacks(
          5,
          ev.map((e) => e.frame),
          ev.map((e) => e.progress),
        );
        assert.ok(packs !== undefined);
        let bytes = 0;
        for (const p of packs) bytes += Number(/^\d+ \d+ (\d+) /.exec(p)?.[1]);
        assert.equal(bytes, utf8(ev));
        const after = 4 + (c % (ev.length + 1));
        assert.deepEqual(
          unpackAfter(packs, after, 4 + ev.length),
          ev.filter((e) => e.seq > after).map((e) => ({ seq: e.seq, frame: e.frame })),
        );
      }),
      { numRuns: 300 },
    );
  });

  test('a frame that does not end at its first blank line is never packed', () => {
    assert.equal(encodePacks(1, ['data: a\n\ndata: b\n\n'], [undefined]), undefined);
    assert.equal(encodePacks(1, ['data: a\n'], [undefined]), undefined);
  });

  test('a progress run packs its values, not its frames', () => {
    const ev = events(
      Array.from({ length: 1000 }, (_, i) => ({
        kind: 'progress' as const,
        progress: i,
        total: 1000,
        message: undefined,
      })),
    );
    const packs = encodePacks(
      1,
      ev.map((e) => e.frame),
      ev.map((e) => e.progress),
    );
    assert.equal(packs?.length, 1);
    // Counting by one with a constant total: start and step, whatever the run's length.
    assert.match(packs?.[0] ?? '', /^1 1000 \d+ R\n[\s\S]*\n2\n\+0 1\n=1000\n$/);
    const stored = (packs ?? []).join('').length;
    assert.ok(stored < 200, `${stored} bytes stored for ${utf8(ev)} bytes of frames`);
    // Values with no step between them are kept one line per event.
    const squares = events(
      Array.from({ length: 1000 }, (_, i) => ({
        kind: 'progress' as const,
        progress: i * i,
        total: 1000,
        message: undefined,
      })),
    );
    const p = encodePacks(
      1,
      squares.map((e) => e.frame),
      squares.map((e) => e.progress),
    );
    assert.match(p?.[0] ?? '', /^1 1000 \d+ P\n/);
    const kept = (p ?? []).join('').length;
    assert.ok(kept * 8 < utf8(squares), `${kept} bytes stored for ${utf8(squares)} bytes of frames`);
  });
});

describe('replica packs against a real redis-server', { skip: findRedis() ? false : REDIS_MISSING }, () => {
  let redis: Redis;
  let link: RedisLink;
  before(async () => {
    redis = await startRedis();
    link = await connectNodeRedis({ url: redis.url, commandTimeoutMs: 2_000, connectTimeoutMs: 2_000 });
  });
  after(async () => {
    await link?.close();
    await redis?.stop();
  });

  let sidNo = 0;
  async function write(r: EventReplica, sid: string, ev: readonly Event[]): Promise<void> {
    for (const e of ev) r.append(sid, 1, e.seq, e.frame, e.progress);
    await r.flush();
  }

  test('random batches and bounds: every cursor replays as one frame per element would', async () => {
    await fc.assert(
      fc.asyncProperty(
        steps(50),
        fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 200, max: 12_000 }),
        // Frames a batch packs at a time (256 in service): small, so batches seal chunks, and the
        // bounds drop some whole, cut others, and keep others.
        fc.integer({ min: 1, max: 9 }),
        async (st, splits, maxCount, maxBytes, chunkFrames) => {
          const sid = `P${++sidNo}`;
          const limits: ReplicaLimits = { maxCount, maxBytes, maxAgeMs: 60_000, budgetBytes: 1 << 30 };
          const r = new EventReplica(link, limits, { chunkFrames });
          const ev = events(st);
          for (let i = 0, k = 0; i < ev.length; k++) {
            const n = splits[k % splits.length] as number;
            await write(r, sid, ev.slice(i, i + n));
            i += n;
          }
          const kept = model(ev, limits);
          const first = kept[0]?.seq ?? 1;
          assert.equal(r.stats.restarts, 0);
          assert.equal(r.stats.bytes, utf8(kept), 'bytes held are the kept frames');
          for (let c = 0; c <= ev.length + 1; c++) {
            const got = await r.replay(sid, 1, c);
            if (c > ev.length) assert.equal(got.status, 'ahead');
            else if (c + 1 < first) assert.deepEqual(got, { status: 'evicted' }, `cursor ${c}`);
            else {
              assert.equal(got.status, 'ok', `cursor ${c}`);
              if (got.status === 'ok')
                assert.deepEqual(
                  got.events,
                  kept.filter((e) => e.seq > c).map((e) => ({ seq: e.seq, frame: e.frame })),
                );
            }
          }
          r.dropSession(sid);
          await r.flush();
        },
      ),
      { numRuns: 40 },
    );
  });

  test('trims at and inside pack boundaries, by count and by bytes', async () => {
    const run = (n: number, from: number): Step[] =>
      Array.from({ length: n }, (_, i) => ({
        kind: 'progress' as const,
        progress: from + i,
        total: 100,
        message: undefined,
      }));
    // Count: packs of 4, 4, 4 and maxCount 6: the first pack goes whole, the second is cut to 2.
    const r = new EventReplica(link, {
      maxCount: 6,
      maxBytes: 1 << 20,
      maxAgeMs: 60_000,
      budgetBytes: 1 << 30,
    });
    const ev = events([...run(4, 0), ...run(4, 4), ...run(4, 8)]);
    for (let i = 0; i < 12; i += 4) await write(r, 'T1', ev.slice(i, i + 4));
    assert.deepEqual(await r.replay('T1', 1, 5), { status: 'evicted' });
    const at6 = await r.replay('T1', 1, 6);
    assert.equal(at6.status, 'ok');
    if (at6.status === 'ok')
      assert.deepEqual(
        at6.events.map((e) => e.seq),
        [7, 8, 9, 10, 11, 12],
      );
    const packs = await link.send(['LRANGE', keys.streamList('T1', 1), '0', '-1']);
    assert.deepEqual(
      (packs as string[]).map((p) => p.split('\n')[0]?.split(' ').slice(0, 2).join(' ')),
      ['7 2', '9 4'],
      'the head pack was cut, not dropped',
    );
    // Bytes: frames of ~1 KB, 2.5 KB kept: a batch of 3 plain frames keeps its last 2.
    const big = events([
      { kind: 'other', text: 'a', pad: 1000 },
      { kind: 'other', text: 'b', pad: 1000 },
      { kind: 'other', text: 'c', pad: 1000 },
      { kind: 'other', text: 'd', pad: 1000 },
    ]);
    const rb = new EventReplica(link, {
      maxCount: 100,
      maxBytes: 2_500,
      maxAgeMs: 60_000,
      budgetBytes: 1 << 30,
    });
    await write(rb, 'T2', big.slice(0, 2));
    await write(rb, 'T2', big.slice(2, 3));
    assert.deepEqual(await rb.replay('T2', 1, 0), { status: 'evicted' });
    const b1 = await rb.replay('T2', 1, 1);
    assert.equal(b1.status, 'ok');
    if (b1.status === 'ok')
      assert.deepEqual(
        b1.events.map((e) => e.seq),
        [2, 3],
      );
    assert.equal(rb.stats.bytes, utf8(big.slice(1, 3)));
    // Inside a counting run (R) whose values grow a digit: the walk's bytes follow each value.
    const rc = new EventReplica(link, {
      maxCount: 8,
      maxBytes: 1 << 20,
      maxAgeMs: 60_000,
      budgetBytes: 1 << 30,
    });
    const tens = events(run(13, 97));
    await write(rc, 'T5', tens.slice(0, 8)); // 97..104, one R pack
    await write(rc, 'T5', tens.slice(8)); // 105..109: the trim walks 97..101 inside the first
    assert.deepEqual(await rc.replay('T5', 1, 4), { status: 'evicted' });
    const c5 = await rc.replay('T5', 1, 5);
    assert.equal(c5.status, 'ok');
    if (c5.status === 'ok')
      assert.deepEqual(
        c5.events,
        tens.slice(5).map((e) => ({ seq: e.seq, frame: e.frame })),
      );
    assert.equal(rc.stats.bytes, utf8(tens.slice(5)), 'the bytes of 102..109, each by its own digits');
    r.dropSession('T1');
    rb.dropSession('T2');
    rc.dropSession('T5');
    await Promise.all([r.flush(), rb.flush(), rc.flush()]);
  });

  test('a batch re-sent in part stores only its new frames, cutting inside a pack of each kind', async () => {
    const ev = events([
      // Counting by one (an R pack), then squares (with what precedes them in a batch, a P pack).
      ...Array.from({ length: 9 }, (_, i) => ({
        kind: 'progress' as const,
        progress: i < 6 ? i : i * i,
        total: 10,
        message: 'é',
      })),
      { kind: 'other', text: 'x', pad: 0 },
      { kind: 'other', text: 'y', pad: 0 },
      { kind: 'other', text: 'z', pad: 0 },
    ]);
    const limits: ReplicaLimits = {
      maxCount: 100,
      maxBytes: 1 << 20,
      maxAgeMs: 60_000,
      budgetBytes: 1 << 30,
    };
    const a = new EventReplica(link, limits);
    const b = new EventReplica(link, limits);
    await write(a, 'T3', ev.slice(0, 3)); // seqs 1..3 (R)
    await write(b, 'T3', ev.slice(1, 5)); // again 2..3 (cut in an R pack), then 4..5
    await write(a, 'T3', ev.slice(4, 9)); // again 5 (cut in a P pack), then 6..9
    await write(b, 'T3', ev.slice(7, 11)); // again 8..9 (an R pack skipped whole), then 10..11 (F)
    await write(a, 'T3', ev.slice(9, 12)); // again 10..11 (cut in an F pack), then 12
    assert.equal(a.stats.restarts + b.stats.restarts, 0);
    const packs = await link.send(['LRANGE', keys.streamList('T3', 1), '0', '-1']);
    assert.deepEqual(
      (packs as string[]).map((p) => /^(\d+) \d+ \d+ ([FPR])\n/.exec(p)?.slice(1).join(' ')),
      ['1 R', '4 R', '6 P', '10 F', '12 F'],
    );
    const got = await a.replay('T3', 1, 0);
    assert.equal(got.status, 'ok');
    if (got.status === 'ok')
      assert.deepEqual(
        got.events,
        ev.map((e) => ({ seq: e.seq, frame: e.frame })),
      );
    assert.equal(a.stats.bytes, utf8(ev), "the script's byte count after the cuts");
    a.dropSession('T3');
    await a.flush();
  });

  test('a gap restarts the copy; fin, request ids and the grace TTL hold for packs', async () => {
    const limits: ReplicaLimits = {
      maxCount: 100,
      maxBytes: 1 << 20,
      maxAgeMs: 60_000,
      budgetBytes: 1 << 30,
    };
    const r = new EventReplica(link, limits);
    const ev = events(
      Array.from({ length: 10 }, (_, i) => ({
        kind: 'progress' as const,
        progress: i,
        total: 9,
        message: undefined,
      })),
    );
    r.describe('T4', 1, ['q', 3]);
    await write(r, 'T4', ev.slice(0, 4));
    await write(r, 'T4', ev.slice(6, 10)); // 5 and 6 never arrive
    assert.equal(r.stats.restarts, 1);
    assert.deepEqual(await r.replay('T4', 1, 2), { status: 'evicted' });
    r.endStream('T4', 1, 5_000);
    await r.flush();
    const got = await r.replay('T4', 1, 7);
    assert.equal(got.status, 'ok');
    if (got.status === 'ok') {
      assert.deepEqual(
        got.events.map((e) => e.seq),
        [8, 9, 10],
      );
      assert.equal(got.finished, true);
      assert.equal(got.requests, '["q",3]');
    }
    const pttl = Number(await link.send(['PTTL', keys.streamList('T4', 1)]));
    assert.ok(pttl > 0 && pttl <= 5_000, `grace TTL ${pttl}`);
    r.dropSession('T4');
    await r.flush();
  });

  test('an element of another format is never served: the copy reads as unknown', async () => {
    const r = new EventReplica(link, {
      maxCount: 100,
      maxBytes: 1 << 20,
      maxAgeMs: 60_000,
      budgetBytes: 1 << 30,
    });
    // What the release before packs stored: one frame per element (its keys were other names).
    await link.send(['HSET', keys.streamMeta('T5', 1), 'f', '1', 'l', '2', 'b', '40']);
    await link.send([
      'RPUSH',
      keys.streamList('T5', 1),
      'id: a.1.1\ndata: {}\n\n',
      'id: a.1.2\ndata: {}\n\n',
    ]);
    assert.deepEqual(await r.replay('T5', 1, 0), { status: 'unknown' });
    // A pack whose count does not match its frames.
    await link.send(['DEL', keys.streamList('T5', 1)]);
    await link.send(['RPUSH', keys.streamList('T5', 1), '1 2 20 F\nid: a.1.1\ndata: {}\n\n']);
    assert.deepEqual(await r.replay('T5', 1, 0), { status: 'unknown' });
    await link.send(['DEL', keys.streamMeta('T5', 1), keys.streamList('T5', 1)]);
  });
});
