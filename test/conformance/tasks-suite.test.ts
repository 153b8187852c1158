/**
 * The tasks extension's scenarios of the official conformance CLI 0.2.0-alpha.12
 * (tools/conformance-next, `conformance list --server`: every `tasks-*`), each run against
 * `sluice serve`: alone (tasks in memory), and as two `sluice serve --redis` instances behind nginx
 * round-robin (no affinity), where a scenario's tasks/get, tasks/update and tasks/cancel land on
 * whichever instance. Every check must succeed; the one scenario the harness itself skips
 * (tasks-status-notifications, pending a rewrite upstream) must report SKIPPED and nothing else.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { conformanceCli, readResults, runCli, summary } from '../helpers/conformance-cli.js';
import { type Nginx, RECOMMENDED_LOCATION, skipWithoutNginx, startNginx } from '../helpers/nginx.js';
import { type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';
import { type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

const TOOL = 'conformance-next';
const HARNESS_SKIPPED = new Set(['tasks-status-notifications']);
const outDirs: string[] = [];
after(() => {
  for (const dir of outDirs) rmSync(dir, { recursive: true, force: true });
});

async function taskScenarios(): Promise<string[]> {
  const run = await runCli(TOOL, ['list', '--server'], 30_000, 'conformance list');
  assert.equal(run.code, 0, run.output);
  const server = run.output.split(/Client scenarios/)[0] ?? '';
  return [...server.matchAll(/^\s*- (tasks-\S+)/gm)].map((m) => m[1] ?? '');
}

async function runAll(url: string, stderr: () => string): Promise<void> {
  const scenarios = await taskScenarios();
  assert.ok(scenarios.length >= 10, `expected ≥ 10 tasks-* scenarios, got ${scenarios.join(', ')}`);
  for (const scenario of scenarios) {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-tasks-conformance-'));
    outDirs.push(dir);
    const run = await runCli(
      TOOL,
      ['server', '--url', url, '--scenario', scenario, '-o', dir],
      90_000,
      scenario,
    );
    const checks = readResults(dir).get(scenario) ?? [];
    assert.ok(checks.length > 0, `${scenario}: no result\n${summary(run.output)}`);
    const want = HARNESS_SKIPPED.has(scenario) ? 'SKIPPED' : 'SUCCESS';
    const bad = checks.filter((c) => c.status !== want);
    assert.deepEqual(
      bad.map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ''}`),
      [],
      `${scenario}\n--- output ---\n${summary(run.output)}\n--- server stderr ---\n${stderr()}`,
    );
  }
}

describe('conformance 0.2.0-alpha.12 tasks-* scenarios', () => {
  test('sluice serve, tasks in memory', async () => {
    conformanceCli(TOOL);
    const server = await spawnServe();
    try {
      await runAll(server.url, () => server.stderr());
    } finally {
      await server.close();
    }
  });

  test('two sluice serve --redis behind nginx round-robin', async (t) => {
    if (skipWithoutRedis(t) || skipWithoutNginx(t)) return;
    conformanceCli(TOOL);
    let redis: Redis | undefined;
    let nginx: Nginx | undefined;
    const servers: SpawnedServe[] = [];
    try {
      redis = await startRedis();
      for (let i = 0; i < 2; i++) servers.push(await spawnServe(['--redis', redis.url]));
      const ports = servers.map((s) => Number(new URL(s.url).port));
      nginx = await startNginx({
        upstreamPort: ports[0] ?? 0,
        upstreamPorts: ports,
        location: `${RECOMMENDED_LOCATION}\n    proxy_set_header Host $http_host;`,
      });
      await runAll(nginx.url, () => servers.map((s) => s.stderr()).join('\n'));
    } finally {
      await nginx?.stop();
      for (const s of servers) await s.close();
      await redis?.stop();
    }
  });
});
