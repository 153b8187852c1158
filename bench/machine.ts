// Where and with what a run happened: versions, machine, and how busy the machine was.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { readCpuPressure } from './proc.js';

export interface Meta {
  date: string;
  node: string;
  versions: { sluice: string; sluiceCommit: string; sdk: string; undici: string; zod: string };
  machine: { cpuModel: string; cores: number; memoryBytes: number; kernel: string };
  load: { loadavgStart: number[]; cpuPressureStart: string; loadavgEnd?: number[]; cpuPressureEnd?: string };
}

/** The repository root, from dist/bench/ (the compiled location of this file). */
const ROOT = new URL('../../', import.meta.url);

function version(pkg: string): string {
  const path = pkg === 'sluice' ? 'package.json' : `node_modules/${pkg}/package.json`;
  try {
    return (JSON.parse(readFileSync(new URL(path, ROOT), 'utf8')) as { version?: string }).version ?? '?';
  } catch {
    return '?'; // A missing package shows as "?" in the report rather than stopping the run.
  }
}

function commit(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    return dirty.trim() === '' ? sha : `${sha}+dirty-src`;
  } catch {
    return '?'; // Not a git checkout (e.g. an installed package): the version still identifies it.
  }
}

export function collectMeta(): Meta {
  const cpu = cpus();
  return {
    date: new Date().toISOString(),
    node: process.version,
    versions: {
      sluice: version('sluice'),
      sluiceCommit: commit(),
      sdk: version('@modelcontextprotocol/sdk'),
      undici: version('undici'),
      zod: version('zod'),
    },
    machine: {
      cpuModel: cpu[0]?.model ?? '?',
      cores: cpu.length,
      memoryBytes: totalmem(),
      kernel: release(),
    },
    load: { loadavgStart: loadavg(), cpuPressureStart: readCpuPressure() ?? 'n/a' },
  };
}

/** Records how busy the machine was at the end of the run. */
export function finishMeta(meta: Meta): void {
  meta.load.loadavgEnd = loadavg();
  meta.load.cpuPressureEnd = readCpuPressure() ?? 'n/a';
}
