// The memory sections of the report: (c) idle sessions with streams, (d) the slow consumer.
import { auto, num, table, yesNo } from './format.js';
import type { BenchResults } from './results.js';
import { FLAT_MB_PER_SEC, IDLE_CORES } from './targets.js';

export function idleSection(r: BenchResults): string {
  if (r.idle.length === 0) return '';
  const rows = r.idle.map(({ server, result: x }) => [
    server,
    num(x.streams),
    `${num(x.rssIdleMb)} → ${num(x.rssSessionsMb)} → ${num(x.rssStreamsMb)}`,
    auto(x.kibPerSessionStream),
    auto(x.heapKibPerSession),
    auto(x.heapKibPerStream),
    x.youngMbIdle === undefined ? '–' : `${num(x.youngMbIdle, 1)} → ${num(x.youngMbStreams, 1)}`,
    x.kibPerSessionStreamBeyondYoung === undefined ? '–' : auto(x.kibPerSessionStreamBeyondYoung),
    `${num(x.openSessionsMs / 1000, 1)} / ${num(x.openStreamsMs / 1000, 1)}`,
    x.kibPerSessionStreamSettled === undefined
      ? '–'
      : `${auto(x.kibPerSessionStreamSettled)}${x.settled ? '' : ' (unsettled)'}`,
    x.youngMbSettled === undefined ? '–' : num(x.youngMbSettled, 1),
    x.settleMs === undefined ? '–' : num(x.settleMs / 1000, 1),
    server === 'sluice' ? yesNo(x.ok ? x.kibPerSessionStream <= 45 : undefined) : '',
    x.ok ? 'ok' : (x.error ?? 'failed').slice(0, 80),
  ]);
  return [
    '## (c) Idle sessions, each with an open GET stream (fresh server per row)',
    '',
    table(
      [
        'server',
        'streams',
        'RSS MB idle → sessions → streams',
        'KiB per session+stream',
        'heap KiB/session',
        'heap KiB/stream',
        'young gen MB idle → streams',
        'KiB per session+stream beyond young gen',
        'open sessions / streams s',
        'settled: KiB per session+stream beyond young gen',
        'settled: young gen MB',
        'settle s',
        'target met? (≤ 45 KiB)',
        'check',
      ],
      rows,
      'lrlrrrlrrlrrrll',
    ),
    '',
    '*Settled*: the streams stay open and nothing is sent; after every 5 s of quiet a forced GC (which, finding the allocation rate low, gives back the young generation the openings grew), until, for two readings in a row, the young generation is at its floor and RSS less the young generation holds still (or 60 s); then RSS less the young generation, against the same at the idle reading, itself settled. The 1 s reading still holds the young generation the burst of openings grew; an idle server gives it back at its next GC.',
    '',
  ].join('\n');
}

export function slowSection(r: BenchResults): string {
  if (r.slow.length === 0) return '';
  const p = r.plan.slow;
  const rows = r.slow.map(({ server, result: x }) => [
    server,
    `${num(x.retainedBeforeMb)} → ${num(x.retainedPausedEndMb)} → ${num(x.retainedAfterMb)}`,
    auto(x.growthMbPerSec),
    num(x.rssPeakMb),
    num(x.coresPaused, 2),
    num(x.coresAfterClose, 2),
    num(Math.max(...x.samples.map((s) => s.kernelKib))),
    server === 'sluice'
      ? yesNo(x.ok ? x.growthMbPerSec <= FLAT_MB_PER_SEC && x.coresAfterClose <= IDLE_CORES : undefined)
      : '',
    x.ok ? 'ok' : (x.error ?? 'failed').slice(0, 80),
  ]);
  const sampleRows = r.slow.flatMap(({ server, result: x }) =>
    x.samples.map((s) => [
      server,
      s.phase,
      num(s.t, 1),
      num(s.rssMb),
      num(s.retainedMb),
      num(s.cores, 2),
      num(s.kernelKib),
    ]),
  );
  return [
    `## (d) Slow consumer: client paused ${p.pauseMs / 1000} s, ${p.payloadBytes}-byte events, then disconnects`,
    '',
    table(
      [
        'server',
        'retained MB before → end of pause → after close',
        'growth MB/s (2nd half)',
        'peak RSS MB',
        'cores paused',
        'cores after close',
        'kernel KiB',
        'target met?',
        'check',
      ],
      rows,
      'llrrrrrll',
    ),
    '',
    '<details><summary>Samples, one per second (retained is after a forced GC; – when the child',
    'did not answer in time, or after the disconnect, where GC is not forced so that CPU is not disturbed)</summary>',
    '',
    table(['server', 'phase', 't s', 'RSS MB', 'retained MB', 'cores', 'kernel KiB'], sampleRows, 'llrrrrr'),
    '',
    '</details>',
    '',
  ].join('\n');
}
