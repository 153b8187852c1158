// Where a relaying member's CPU goes, read from a V8 profile in every run of section (i): issue #25
// asks each missed target to be stated "with the profile that explains a miss", and the forwarded
// CPU row is the one the hop misses. A fourth `sluice serve --redis` member runs under --cpu-prof;
// after a warm-up, the section sends it a bounded number of sequential echo calls for the owner's
// session, which it forwards. Only the samples taken between the first and the last of those calls
// are counted (V8 stamps samples with the system's monotonic clock, the one process.hrtime reads
// here), so the member's start-up and warm-up are left out. Self time is grouped by where the code
// lives: Node's HTTP server and client, its sockets and streams, native code (the system calls and
// V8's own work), the collector, Sluice, crypto (the hop's signature), the rest.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, spawnListening } from '../../test/helpers/spawn-serve.js';
import { selfTimes } from '../profile.js';

export interface RelayProfile {
  requests: number;
  /** CPU the profile saw busy in the window, per request (µs). */
  busyUsPerRequest: number;
  /** Each group's share of the busy samples, largest first (percent). */
  groups: { group: string; pct: number }[];
  /** The functions with the most self time in the window. */
  top: { fn: string; where: string; pct: number }[];
}

/** The group a function's self time counts in. */
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

/** Self time per group and per function of the samples stamped within [fromUs, toUs]. */
function summarize(file: string, fromUs: number, toUs: number, requests: number): RelayProfile {
  const { busyUs, fns } = selfTimes(file, { fromUs, toUs });
  const groups = new Map<string, number>();
  for (const f of fns) {
    const g = groupOf(f.fn, f.url);
    groups.set(g, (groups.get(g) ?? 0) + f.us);
  }
  const pct = (us: number): number => (100 * us) / Math.max(1, busyUs);
  return {
    requests,
    busyUsPerRequest: busyUs / Math.max(1, requests),
    groups: [...groups].map(([group, us]) => ({ group, pct: pct(us) })).sort((a, b) => b.pct - a.pct),
    top: fns
      .sort((a, b) => b.us - a.us)
      .slice(0, 8)
      .map((f) => ({ fn: f.fn, where: f.location, pct: pct(f.us) })),
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
    return summarize(join(dir, file), from, to, requests);
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
