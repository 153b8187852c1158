/**
 * Dual era on one URL: the official conformance CLI 0.2.0-alpha.12 (tools/conformance-next) runs
 * the frozen requirement set of each revision against the same `sluice serve` endpoint:
 * `--requirements 2025-11-25` at the legacy wire (initialize, sessions) and
 * `--requirements 2026-07-28` at the modern wire (per-request _meta, no sessions). Both must exit
 * 0 with a result for every required server scenario; the two header-validation scenarios the
 * suite still marks pending (run, unscored, within the 2026-07-28 set) must pass too.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { conformanceCli, describeChecks, readResults, runCli, summary } from '../helpers/conformance-cli.js';
import { type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

const TOOL = 'conformance-next';
const SUITE_DEADLINE_MS = 170_000;
const PENDING_HEADER_SCENARIOS = ['http-header-validation', 'http-custom-header-server-validation'];

let server: SpawnedServe | undefined;
const outDirs: string[] = [];
function outDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-conformance-next-'));
  outDirs.push(dir);
  return dir;
}

before(async () => {
  conformanceCli(TOOL);
  server = await spawnServe();
});
after(async () => {
  await server?.close();
  for (const dir of outDirs) rmSync(dir, { recursive: true, force: true });
});

async function requiredServerScenarios(revision: string): Promise<string[]> {
  const run = await runCli(
    TOOL,
    ['list', '--server', '--requirements', revision],
    30_000,
    'conformance list',
  );
  assert.equal(run.code, 0, run.output);
  const server = run.output.split(/Client scenarios/)[0] ?? '';
  return [...server.matchAll(/^\s*- (\S+)/gm)].map((m) => m[1] ?? '');
}

for (const [revision, minimum] of [
  ['2025-11-25', 30],
  ['2026-07-28', 37],
] as const) {
  test(`--requirements ${revision} against the shared URL exits 0 with every required scenario run`, async () => {
    assert.ok(server);
    const dir = outDir();
    const run = await runCli(
      TOOL,
      ['server', '--url', server.url, '--requirements', revision, '-o', dir],
      SUITE_DEADLINE_MS,
      `conformance --requirements ${revision}`,
    );
    const required = await requiredServerScenarios(revision);
    assert.ok(
      required.length >= minimum,
      `expected ≥ ${minimum} required scenarios, got ${required.join(', ')}`,
    );
    const results = readResults(dir);
    const failures = describeChecks(results, ['FAILURE'], required);
    assert.equal(
      run.code,
      0,
      `exit ${run.code}\n${failures}\n--- output ---\n${summary(run.output)}\n--- server stderr ---\n${server.stderr()}`,
    );
    assert.equal(failures, '', 'exit 0 but a required scenario has FAILURE checks');
    assert.deepEqual(
      required.filter((s) => !results.has(s)),
      [],
      'required scenarios without results',
    );
    if (revision !== '2026-07-28') return;
    // The suite runs its pending scenarios too (unscored): the header ones must pass as well.
    for (const scenario of PENDING_HEADER_SCENARIOS) {
      const checks = results.get(scenario);
      assert.ok(checks, `no checks.json for pending ${scenario}`);
      assert.equal(describeChecks(results, ['FAILURE'], [scenario]), '', `pending ${scenario} failed`);
      const ok = checks.filter((c) => c.status === 'SUCCESS').length;
      assert.ok(
        ok >= 5,
        `pending ${scenario}: only ${ok} successful checks\n${JSON.stringify(checks, null, 2)}`,
      );
    }
  });
}
