/**
 * Runs the official MCP conformance CLI (0.1.16) on the Node 22 binary that tools/conformance pins
 * (the CLI needs fs.globSync; Sluice stays on Node 20), and reads its per-scenario checks.json.
 * Shared by the server suite (sluice serve) and the runtime suites (Bun, Deno, workerd, fetch); the
 * CLI plumbing for both tool folders is in conformance-cli.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliRun } from './conformance-cli.js';
import * as cli from './conformance-cli.js';
import { describeChecks, readResults, summary } from './conformance-cli.js';

// Scenarios 0.1.16 marks pending: excluded from its default "active" suite.
export const PENDING = ['json-schema-2020-12', 'server-sse-polling'];
export const SUITE_DEADLINE_MS = 120_000; // the suite takes ~3 s locally
export const SCENARIO_DEADLINE_MS = 60_000;

export type { Check, CliRun } from './conformance-cli.js';
export { describeChecks, readResults, summary } from './conformance-cli.js';

/** tools/conformance (0.1.16): its CLI entry and pinned Node 22. */
export function conformanceCli(): { node: string; entry: string } {
  return cli.conformanceCli('conformance');
}

/** Runs the 0.1.16 CLI with `args`, bounded by `ms`. */
export function runCli(args: string[], ms: number, label: string): Promise<CliRun> {
  return cli.runCli('conformance', args, ms, label);
}

let listed: Promise<string[]> | undefined;

/** The server suite's scenarios, asked of the CLI once per process (a start of its Node 22 each time). */
export function listServerScenarios(): Promise<string[]> {
  listed ??= runCli(['list', '--server'], 30_000, 'conformance list --server').then((run) => {
    assert.equal(run.code, 0, `conformance list failed:\n${run.output}`);
    return [...run.output.matchAll(/^\s*- (\S+)/gm)].map((m) => m[1] ?? '');
  });
  return listed;
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
