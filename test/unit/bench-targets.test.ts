/**
 * The bench's issue #25 echo row (bench/targets.ts): its verdict is the ratio of the medians, and
 * beside it the ratio of each repetition's own pair of cells, so a reader sees when the machine's
 * speed drifted between repetitions (the medians then pair cells measured minutes apart).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EchoResult } from '../../bench/load/echo.js';
import type { BenchResults, EchoRecord, EchoSummary } from '../../bench/results.js';
import { evaluateTargets } from '../../bench/targets.js';

function record(server: string, rep: number, cpuPerReqUs: number): EchoRecord {
  return { server, mode: 'json', c: 16, s: 16, rep, result: { cpuPerReqUs } as EchoResult };
}

function summary(server: string, cpuPerReqUs: number): EchoSummary {
  return {
    server,
    mode: 'json',
    c: 16,
    s: 16,
    okReps: 3,
    reps: 3,
    rps: 1,
    p50Ms: 1,
    p99Ms: 1,
    cpuPerReqUs,
    serverCores: 1,
    clientCores: 1,
  };
}

function row(echo: EchoRecord[], rawMedian: number, sluiceMedian: number) {
  const r = {
    echo,
    idle: [],
    slow: [],
    summary: { echo: [summary('raw', rawMedian), summary('sluice', sluiceMedian)], flood: [], client: [] },
  } as unknown as BenchResults;
  const found = evaluateTargets(r).find(
    (t) => t.target === 'echo json C=16: server CPU/req, sluice ÷ raw (issue #25)',
  );
  assert.ok(found !== undefined);
  return found;
}

test('the verdict is the ratio of medians; each repetition pair is shown beside it', () => {
  // Raw read 30, 50, 32 µs; Sluice 55, 110, 60: the medians (32 and 60) pair repetitions 2 and 2,
  // and each repetition's own ratio is below 2.2.
  const echo = [
    record('raw', 0, 30),
    record('sluice', 0, 55),
    record('raw', 1, 50),
    record('sluice', 1, 110),
    record('raw', 2, 32),
    record('sluice', 2, 60),
  ];
  const t = row(echo, 32, 60);
  assert.equal(t.met, true);
  assert.match(t.measured, /^1\.88x \(per repetition 1\.83x, 2\.20x, 1\.88x\)$/);
});

test('a repetition missing one of its cells is left out of the pairs; one pair alone is not shown', () => {
  const t = row([record('raw', 0, 30), record('sluice', 0, 66), record('sluice', 1, 70)], 30, 66);
  assert.equal(t.met, false);
  assert.equal(t.measured, '2.20x');
});
