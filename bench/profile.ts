// Top self-time functions of a V8 .cpuprofile (as written by `node --cpu-prof`). Idle samples
// are left out, so percentages are of the time the process was busy. Also a CLI:
//   node dist/bench/profile.js <file.cpuprofile | directory> [top=20]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ProfileEntry {
  selfPct: number;
  selfMs: number;
  fn: string;
  location: string;
}

export interface ProfileSummary {
  label: string;
  file: string;
  busyMs: number;
  top: ProfileEntry[];
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  /** µs on the system's monotonic clock (the one process.hrtime reads), as each sample's stamp. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const ROOT_URL = new URL('../../', import.meta.url).href;

function shortLocation(url: string, line: number): string {
  if (url === '') return '(native)';
  let u = url.startsWith(ROOT_URL) ? url.slice(ROOT_URL.length) : url;
  const nm = u.lastIndexOf('node_modules/');
  if (nm !== -1) u = u.slice(nm + 'node_modules/'.length);
  return `${u}:${line + 1}`;
}

/** One function's self time in a profile. */
export interface SelfTime {
  fn: string;
  /** The script's URL as V8 gives it ('' for native code). */
  url: string;
  location: string;
  us: number;
}

/**
 * The self time of each function of a .cpuprofile, idle samples left out; with `window`, only the
 * samples stamped within it (µs, the clock process.hrtime reads).
 */
export function selfTimes(
  file: string,
  window?: { fromUs: number; toUs: number },
): { busyUs: number; fns: SelfTime[] } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const selfUs = new Map<string, SelfTime>();
  let busyUs = 0;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] ?? 0;
    const frame = byId.get(id);
    // The delta before the next sample is the time spent in this one.
    const dt = profile.timeDeltas[i + 1] ?? 0;
    if (frame === undefined || frame.functionName === '(idle)') return;
    if (window !== undefined && (t < window.fromUs || t > window.toUs)) return;
    busyUs += dt;
    const fn = frame.functionName === '' ? '(anonymous)' : frame.functionName;
    const location = shortLocation(frame.url, frame.lineNumber);
    const key = `${fn}@${location}`;
    const entry = selfUs.get(key);
    if (entry === undefined) selfUs.set(key, { fn, url: frame.url, location, us: dt });
    else entry.us += dt;
  });
  return { busyUs, fns: [...selfUs.values()] };
}

export function summarizeProfile(file: string, label: string, top = 20): ProfileSummary {
  const { busyUs, fns } = selfTimes(file);
  const entries = fns
    .sort((a, b) => b.us - a.us)
    .slice(0, top)
    .map((e) => ({
      selfPct: (100 * e.us) / Math.max(1, busyUs),
      selfMs: e.us / 1000,
      fn: e.fn,
      location: e.location,
    }));
  return { label, file, busyMs: busyUs / 1000, top: entries };
}

/** Every .cpuprofile under `dir` (one level of label directories, as launch.ts writes them). */
export function summarizeProfileDir(dir: string, top = 20): ProfileSummary[] {
  const out: ProfileSummary[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.cpuprofile')) out.push(summarizeProfile(p, relative(dir, d) || name, top));
    }
  };
  walk(dir);
  return out;
}

export function profileMarkdown(s: ProfileSummary): string {
  const rows = s.top.map(
    (e) => `| ${e.selfPct.toFixed(1)} | ${e.selfMs.toFixed(0)} | \`${e.fn}\` ${e.location} |`,
  );
  return [
    `#### ${s.label} (busy ${(s.busyMs / 1000).toFixed(1)} s, \`${s.file}\`)`,
    '',
    '| self % | self ms | function (location) |',
    '|---:|---:|---|',
    ...rows,
    '',
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const target = process.argv[2];
  if (target === undefined) {
    process.stderr.write('usage: node dist/bench/profile.js <file.cpuprofile | directory> [top]\n');
    process.exit(2);
  }
  const top = Number(process.argv[3] ?? 20);
  const summaries = statSync(target).isDirectory()
    ? summarizeProfileDir(target, top)
    : [summarizeProfile(target, target, top)];
  for (const s of summaries) process.stdout.write(`${profileMarkdown(s)}\n`);
}
