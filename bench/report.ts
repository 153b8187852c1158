// bench/results/latest.md: the tables of one run, with ratios sluice/raw and sdk/sluice taken
// within the run, and the targets with a "target met?" column.
import { auto, num, table, times, yesNo } from './format.js';
import { profileMarkdown } from './profile.js';
import { idleSection, slowSection } from './report-memory.js';
import type { BenchResults, EchoSummary } from './results.js';
import { ratio } from './stats.js';
import { evaluateTargets } from './targets.js';

const GIB = 1024 ** 3;

function header(r: BenchResults): string {
  const m = r.meta;
  const v = m.versions;
  return [
    `# Sluice benchmark: ${r.plan.name} run`,
    '',
    `${m.date}, ${num((r.elapsedMs ?? 0) / 1000)} s. node ${m.node}; sluice ${v.sluice} (${v.sluiceCommit}), ` +
      `@modelcontextprotocol/sdk ${v.sdk}, undici ${v.undici}, zod ${v.zod}.`,
    `Machine: ${m.machine.cores}× ${m.machine.cpuModel}, ${num(m.machine.memoryBytes / GIB, 1)} GiB, kernel ${m.machine.kernel}. ` +
      `Load average ${m.load.loadavgStart.map((x) => x.toFixed(2)).join(' ')} at start, ` +
      `${(m.load.loadavgEnd ?? []).map((x) => x.toFixed(2)).join(' ')} at end; CPU pressure at start \`${m.load.cpuPressureStart}\`.`,
    `Repetitions: ${r.plan.reps} (interleaved, order rotated per repetition); tables show medians. ` +
      'Server CPU is the child process’s own process.cpuUsage() (all threads), per completed operation.',
    '',
  ].join('\n');
}

/** Both checks met; undefined when neither side could be measured, else only the measured side counts. */
function bothMet(
  a: number,
  okA: (v: number) => boolean,
  b: number,
  okB: (v: number) => boolean,
): boolean | undefined {
  const parts = [Number.isFinite(a) ? okA(a) : undefined, Number.isFinite(b) ? okB(b) : undefined].filter(
    (x): x is boolean => x !== undefined,
  );
  return parts.length === 0 ? undefined : parts.every(Boolean);
}

function targetsSection(r: BenchResults): string {
  const rows = evaluateTargets(r).map((t) => [t.target, t.goal, t.measured, yesNo(t.met)]);
  return `## Targets\n\n${table(['target', 'goal', 'measured', 'target met?'], rows, 'llrl')}\n`;
}

function echoSection(r: BenchResults): string {
  const echo = r.summary?.echo ?? [];
  if (echo.length === 0) return '';
  const find = (server: string, e: EchoSummary): EchoSummary | undefined =>
    echo.find((x) => x.server === server && x.mode === e.mode && x.c === e.c);
  const cpuRows = echo
    .filter((e) => e.server === 'raw')
    .map((e) => {
      const sl = find('sluice', e)?.cpuPerReqUs;
      const sdk = find('sdk', e)?.cpuPerReqUs;
      const bare = find('sdk-bare', e)?.cpuPerReqUs;
      const sluiceRaw = ratio(sl, e.cpuPerReqUs);
      const sdkSluice = ratio(sdk, sl);
      return [
        e.mode,
        String(e.c),
        String(e.s),
        auto(e.cpuPerReqUs),
        auto(sl),
        auto(sdk),
        auto(bare),
        times(sluiceRaw),
        times(sdkSluice),
        times(ratio(bare, e.cpuPerReqUs)),
        times(ratio(sl, bare)),
        yesNo(
          bothMet(
            sluiceRaw,
            (v) => v <= 5,
            sdkSluice,
            (v) => v >= 3.5,
          ),
        ),
      ];
    });
  const rows = echo.map((e) => [
    e.mode,
    String(e.c),
    e.server,
    num(e.rps),
    auto(e.p50Ms),
    auto(e.p99Ms),
    auto(e.cpuPerReqUs),
    num(e.serverCores, 2),
    num(e.clientCores, 2),
    `${e.okReps}/${e.reps}${e.firstError === undefined ? '' : ` (${e.firstError.slice(0, 60)})`}`,
  ]);
  return [
    '## (a) tools/call echo',
    '',
    'Server CPU µs per request (the figure that survives a noisy machine):',
    '',
    table(
      [
        'mode',
        'C',
        'S',
        'raw',
        'sluice',
        'sdk',
        'sdk-bare',
        'sluice/raw (≤ 5x)',
        'sdk/sluice (≥ 3.5x)',
        'sdk-bare/raw',
        'sluice/sdk-bare',
        'target met?',
      ],
      cpuRows,
      'lrrrrrrrrrrl',
    ),
    '',
    '`sdk-bare` is the SDK’s `McpServer` with the same tools behind the least transport that can host it',
    '(bench/servers/sdk-bare.ts: no checks, no event ids, one `res.end`): what hosting the SDK through its',
    '`Transport` interface costs a transport that adds nothing. `sluice/sdk-bare` is Sluice against it.',
    '',
    'Throughput and latency (req/s is capped by the load generator when client cores ≈ 1):',
    '',
    table(
      [
        'mode',
        'C',
        'server',
        'req/s',
        'p50 ms',
        'p99 ms',
        'CPU µs/req',
        'server cores',
        'client cores',
        'ok reps',
      ],
      rows,
      'lrlrrrrrrl',
    ),
    '',
  ].join('\n');
}

function floodSection(r: BenchResults): string {
  const flood = r.summary?.flood ?? [];
  if (flood.length === 0) return '';
  const raw = flood.find((f) => f.server === 'raw');
  const sluice = flood.find((f) => f.server === 'sluice');
  const rows = flood.map((f) => [
    f.server,
    num(f.eventsPerSec),
    `${num(f.events)} / ${num(f.sent)}`,
    num(f.totalMs),
    auto(f.firstEventMs),
    auto(f.cpuPerEventUs),
    auto(f.megabytesPerSec),
    `${num(f.serverCores, 2)} / ${num(f.clientCores, 2)}`,
    times(ratio(raw?.eventsPerSec, f.eventsPerSec)),
    times(ratio(f.eventsPerSec, sluice?.eventsPerSec)),
    `${f.okReps}/${f.reps}${f.firstError === undefined ? '' : ` (${f.firstError.slice(0, 60)})`}`,
  ]);
  return [
    `## (b) Progress: one flood call, ${num(r.plan.flood.count)} events of ${r.plan.flood.payloadBytes}-byte message`,
    '',
    table(
      [
        'server',
        'events/s',
        'arrived / sent',
        'total ms',
        '1st event ms',
        'server CPU µs/event',
        'MB/s',
        'server / client cores',
        'raw ÷ this',
        'this ÷ sluice',
        'ok reps',
      ],
      rows,
      'lrrrrrrrrrl',
    ),
    '',
    'Events/s counts events that arrived; a server may coalesce progress events of one token under',
    'backpressure (fewer arrive, the last carries the final value). CPU per event is per event sent.',
    '',
  ].join('\n');
}

function clientSection(r: BenchResults): string {
  const client = r.summary?.client ?? [];
  if (client.length === 0) return '';
  const get = (c: string, w: string) => client.find((x) => x.client === c && x.workload === w);
  const rows = (['undici', 'sluice', 'sdk'] as const).map((c) => {
    const echo = get(c, 'echo');
    const flood = get(c, 'flood');
    const err = echo?.firstError ?? flood?.firstError;
    return [
      c === 'undici'
        ? 'raw undici'
        : c === 'sdk'
          ? 'SDK Client + SDK transport'
          : 'SDK Client + Sluice transport',
      auto(echo?.cpuPerUnitUs),
      num(echo?.unitsPerSec),
      auto(flood?.cpuPerUnitUs),
      num(flood?.unitsPerSec),
      `${times(ratio(echo?.cpuPerUnitUs, get('undici', 'echo')?.cpuPerUnitUs))} / ${times(ratio(flood?.cpuPerUnitUs, get('undici', 'flood')?.cpuPerUnitUs))}`,
      `${times(ratio(echo?.cpuPerUnitUs, get('sdk', 'echo')?.cpuPerUnitUs))} / ${times(ratio(flood?.cpuPerUnitUs, get('sdk', 'flood')?.cpuPerUnitUs))}`,
      err === undefined ? 'ok' : err.slice(0, 80),
    ];
  });
  return [
    '## (e) Client CPU against the raw server (only the client differs)',
    '',
    table(
      [
        'client',
        'CPU µs/echo',
        'echo/s',
        'CPU µs/progress event',
        'events/s',
        '÷ undici (echo / event)',
        '÷ SDK client (echo / event)',
        'check',
      ],
      rows,
      'lrrrrrrl',
    ),
    '',
  ].join('\n');
}

function unavailableSection(r: BenchResults): string {
  const entries = Object.entries(r.unavailable);
  if (entries.length === 0) return '';
  return `## Not measured\n\n${entries.map(([k, v]) => `- ${k}: ${v.split('\n')[0]}`).join('\n')}\n`;
}

export function renderMarkdown(r: BenchResults): string {
  const profiles =
    r.profiles.length === 0
      ? ''
      : `## Profiles (top self time)\n\n${r.profiles.map(profileMarkdown).join('\n')}`;
  return [
    header(r),
    targetsSection(r),
    echoSection(r),
    floodSection(r),
    idleSection(r),
    slowSection(r),
    clientSection(r),
    unavailableSection(r),
    profiles,
  ]
    .filter((s) => s !== '')
    .join('\n');
}
