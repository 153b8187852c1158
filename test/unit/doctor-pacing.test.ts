// sluice doctor's pacing check (src/doctor/check-streaming.ts, stall-watch.ts): progress events the
// doctor read together right after a stall of its own event loop, and a silence holding such a
// stall, are not counted against the path; the same arrival times without a stall of its own to
// explain them still are. A CI run failed the nginx doctor test with "12 of 40 together, silences
// up to 531 ms" on a loaded machine.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { clumpsOf, confirmPacing, type Probe } from '../../src/doctor/check-streaming.js';
import { AFTER_STALL_MS, readAfterStall, stalledWithin } from '../../src/doctor/stall-watch.js';

/** 40 events produced 50 ms apart from t = 100; those produced during [from, to] are read at `to` + 1. */
function readThrough(stall: { from: number; to: number }): number[] {
  return Array.from({ length: 40 }, (_, i) => {
    const produced = 100 + 50 * i;
    return produced >= stall.from && produced <= stall.to ? stall.to + 1 + (i % 3) * 0.1 : produced;
  });
}

test('events read together after a stall of the doctor itself are not a buffer on the path', () => {
  const stall = { from: 1_000, to: 1_560 };
  const times = readThrough(stall);
  const blind = clumpsOf(times);
  assert.ok(blind.clumped * 4 > blind.events, `without the stall: ${JSON.stringify(blind)}`);
  assert.ok(blind.longestGapMs > 500);
  const seen = clumpsOf(times, [stall]);
  assert.equal(seen.clumped, 0);
  assert.ok(seen.longestGapMs <= 60, JSON.stringify(seen));
  // The window runs from the last punctual 10 ms tick to the late one: 550 ms late.
  assert.equal(seen.ownStallMs, 550);
});

test('the same burst with no stall of the doctor to explain it still counts', () => {
  const times = readThrough({ from: 1_000, to: 1_560 });
  const elsewhere = clumpsOf(times, [{ from: 200, to: 400 }]);
  assert.ok(elsewhere.clumped * 4 > elsewhere.events);
  assert.ok(elsewhere.longestGapMs > 500);
  const endedBefore = clumpsOf(times, [{ from: 700, to: 1_560 - 2 * AFTER_STALL_MS }]);
  assert.ok(endedBefore.clumped * 4 > endedBefore.events, 'a stall that ended well before excuses nothing');
});

test('a short stall inside a long silence leaves the rest of the silence to the path', () => {
  // A CI run's figures behind nginx with buffering on (a path that must fail): the events came in
  // two lumps, 1.2 s apart, and the doctor stalled 122 ms in between. Excusing the whole silence
  // for that stall made the verdict a mere warning.
  const times = [
    ...Array.from({ length: 22 }, (_, i) => 1_293 + i * 0.05),
    ...Array.from({ length: 18 }, (_, i) => 2_490 + i * 0.05),
  ];
  const c = clumpsOf(times, [{ from: 1_800, to: 1_932 }]);
  assert.ok(c.clumped * 4 > c.events, JSON.stringify(c));
  assert.ok(c.longestGapMs > 1_000, JSON.stringify(c));
  assert.equal(c.ownStallMs, 122);
});

test('a stall excuses exactly the arrivals during it or within AFTER_STALL_MS after, and its own part of a silence', () => {
  fc.assert(
    fc.property(
      fc.nat(10_000),
      fc.integer({ min: 1, max: 2_000 }),
      fc.integer({ min: -500, max: 12_000 }),
      (from, length, t) => {
        const w = [{ from, to: from + length }];
        assert.equal(readAfterStall(t, w), t >= from && t <= from + length + AFTER_STALL_MS);
        const overlap = Math.max(0, Math.min(t + 100, from + length) - Math.max(t, from));
        assert.equal(stalledWithin(t, t + 100, w), overlap);
      },
    ),
    { numRuns: 300 },
  );
});

/** A probe with a buffering verdict, as judgePost makes them. */
function probe(status: 'ok' | 'warn' | 'fail', paced: boolean, reason = `${status} — why`): Probe {
  return {
    label: 'tools/call reindex',
    note: '',
    verdict: { id: 'buffering', status, reason, details: { status } },
    ...(paced ? { paced: true as const } : {}),
  };
}

test('a pacing warning or failure is reported only when a second run repeats it', async () => {
  for (const first of ['warn', 'fail'] as const) {
    let runs = 0;
    const cleared = await confirmPacing(probe(first, true, `clumps (12 of 40) — held`), async () => {
      runs++;
      return probe('ok', false, 'delivered as produced');
    });
    assert.equal(runs, 1);
    assert.equal(cleared.verdict?.status, 'ok');
    assert.match(
      cleared.verdict?.reason ?? '',
      /^delivered as produced; a first run clumped \(clumps \(12 of 40\)\) and did not repeat/,
    );
    assert.deepEqual(cleared.verdict?.details?.['firstRun'], { status: first });

    const repeated = await confirmPacing(probe(first, true), async () => probe('warn', true, 'again'));
    assert.equal(repeated.verdict?.status, first, 'the first verdict stands when the second is not ok');
    assert.equal(repeated.verdict?.details?.['secondRun'], 'again');
  }
});

test('a second run that fails to run leaves the first verdict, saying why', async () => {
  const kept = await confirmPacing(probe('fail', true), async () => {
    throw new Error('socket hang up');
  });
  assert.equal(kept.verdict?.status, 'fail');
  assert.match(String(kept.verdict?.details?.['secondRun']), /socket hang up/);
});

test('an ok, or a verdict not drawn from pacing (one lump at the end), is not run again', async () => {
  for (const first of [probe('ok', true), probe('fail', false), probe('warn', false)]) {
    let runs = 0;
    const same = await confirmPacing(first, async () => {
      runs++;
      return probe('ok', false);
    });
    assert.equal(runs, 0);
    assert.equal(same, first);
  }
});
