// Where a relaying member's CPU goes, read from a V8 profile in every run of section (i): issue #25
// asks each missed target to be stated "with the profile that explains a miss", and the forwarded
// CPU row is the one the hop misses. A fourth `sluice serve --redis` member runs under --cpu-prof;
// after a warm-up, the section sends it a bounded number of sequential echo calls for the owner's
// session, which it forwards. Only the samples taken between the first and the last of those calls
// are counted (V8 stamps samples with the system's monotonic clock, the one process.hrtime reads
// here), so the member's start-up and warm-up are left out. Self time is grouped by where the code
// lives: Node's HTTP server and client, its sockets and streams, native code (the system calls and
// V8's own work), the collector, Sluice, crypto (the hop's signature), the rest.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, spawnListening } from '../../test/helpers/spawn-serve.js';

export interface RelayProfile {
  requests: number;
  /** CPU the profile saw busy in the window, per request (µs). */
  busyUsPerRequest: number;
  /** Each group's share of the busy samples, largest first (percent). */
  groups: { group: string; pct: number }[];
  /** The functions with the most self time in the window. */
  top: { fn: string; where: string; pct: number }[];
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The group a frame's self time counts in. */
function groupOf(fn: string, url: string): string {
  if (fn === '(garbage collector)') return 'garbage collection';
  if (url === '') return 'native: system calls, V8 and libuv';
  if (/^node:(_http_|http$|internal\/http)/.test(url)) return "Node's HTTP server and client";
  if (/^node:(net$|stream$|internal\/(streams|stream_base_commons|net))/.test(url))
    return "Node's sockets and streams";
  if (/^node:internal\/crypto/.test(url) || url === 'node:crypto') return 'crypto (the hop signature)';
  if (url.includes('/dist/src/')) return 'Sluice';
  if (url.includes('/node_modules/')) return 'dependencies';
  return 'the rest of Node (timers, events, …)';
}

function where(url: string, line: number): string {
  if (url === '') return '(native)';
  const i = url.lastIndexOf('/dist/src/');
  return `${i === -1 ? url : url.slice(i + 1)}:${line + 1}`;
}

/** Self time per group and per function of the samples stamped within [fromUs, toUs]. */
function summarize(p: CpuProfile, fromUs: number, toUs: number, requests: number): RelayProfile {
  const frames = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const groups = new Map<string, number>();
  const fns = new Map<string, { fn: string; where: string; us: number }>();
  let busy = 0;
  let t = p.startTime;
  p.samples.forEach((id, i) => {
    t += p.timeDeltas[i] ?? 0;
    // The time until the next sample is spent where this one was taken.
    const dt = p.timeDeltas[i + 1] ?? 0;
    const f = frames.get(id);
    if (t < fromUs || t > toUs || f === undefined || f.functionName === '(idle)') return;
    busy += dt;
    const g = groupOf(f.functionName, f.url);
    groups.set(g, (groups.get(g) ?? 0) + dt);
    const fn = f.functionName === '' ? '(anonymous)' : f.functionName;
    const key = `${fn}@${f.url}:${f.lineNumber}`;
    const e = fns.get(key) ?? { fn, where: where(f.url, f.lineNumber), us: 0 };
    e.us += dt;
    fns.set(key, e);
  });
  const pct = (us: number): number => (100 * us) / Math.max(1, busy);
  return {
    requests,
    busyUsPerRequest: busy / Math.max(1, requests),
    groups: [...groups].map(([group, us]) => ({ group, pct: pct(us) })).sort((a, b) => b.pct - a.pct),
    top: [...fns.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, 8)
      .map((e) => ({ fn: e.fn, where: e.where, pct: pct(e.us) })),
  };
}

const nowUs = (): number => Number(process.hrtime.bigint() / 1_000n);

/**
 * Starts a profiled member on `redisUrl`, sends it `warmUp` then `requests` calls through `call`
 * (each must be forwarded to the owner), stops it and reads its profile. With
 * SLUICE_BENCH_PROFILE_RELAY=DIR the .cpuprofile is kept there (open it in Chrome's DevTools).
 */
export async function profileRelay(
  redisUrl: string,
  call: (url: string) => Promise<void>,
  requests: number,
  warmUp = 300,
): Promise<RelayProfile> {
  const keep = process.env['SLUICE_BENCH_PROFILE_RELAY'];
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'sluice-relay-profile-'));
  const before = new Set(keep === undefined ? [] : readdirSync(dir));
  try {
    const member = await spawnListening(process.execPath, [
      '--cpu-prof',
      // A sample every 250 µs instead of every 1 ms: a forwarded echo costs a few hundred µs. (At
      // 100 µs the profiler's own cost doubled the member's CPU per request.)
      '--cpu-prof-interval=250',
      `--cpu-prof-dir=${dir}`,
      join(repoRoot(), 'dist', 'src', 'cli', 'main.js'),
      ...['serve', '--port', '0', '--redis', redisUrl, '--keepalive-ms', '0'],
    ]);
    let from = 0;
    let to = 0;
    try {
      for (let i = 0; i < warmUp; i++) await call(member.url);
      from = nowUs();
      for (let i = 0; i < requests; i++) await call(member.url);
      to = nowUs();
    } finally {
      // A clean exit writes the profile.
      await member.close();
    }
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && !before.has(f));
    if (file === undefined) throw new Error(`the profiled member wrote no .cpuprofile in ${dir}`);
    return summarize(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, from, to, requests);
  } finally {
    if (keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

export function renderRelayProfile(p: RelayProfile): string {
  const groups = p.groups.map((g) => `${g.group} ${g.pct.toFixed(0)} %`).join(', ');
  const top = p.top.map((f) => `\`${f.fn}\` ${f.where} ${f.pct.toFixed(1)} %`).join('; ');
  return (
    `The relaying member's CPU by profile (a fourth member under \`--cpu-prof\`, ${p.requests} forwarded echo calls ` +
    `after a warm-up, self time of the samples between the first and the last; ${Math.round(p.busyUsPerRequest)} µs ` +
    `busy per request, the profiler's own cost included): ${groups}. Top functions: ${top}.`
  );
}
