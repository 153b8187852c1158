/**
 * The official MCP conformance server suite (0.1.16) against the real
 * `sluice serve`. The CLI needs Node ≥ 22 (fs.globSync), so it runs on the
 * Node 22 binary that tools/conformance pins, while Sluice stays on Node 20.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  assertActiveSuitePasses,
  conformanceCli,
  describeChecks,
  outDir,
  readResults,
  removeOutDirs,
  runCli,
  SCENARIO_DEADLINE_MS,
  summary,
} from '../helpers/conformance.js';
import { type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

let server: SpawnedServe | undefined;
const extraServers: SpawnedServe[] = [];

before(async () => {
  conformanceCli(); // fail first with the install hint, before starting anything
  server = await spawnServe();
});

after(async () => {
  await server?.close();
  await Promise.all(extraServers.map((s) => s.close()));
  removeOutDirs();
});

test('every active scenario of the conformance server suite passes (default auto mode)', async () => {
  assert.ok(server);
  await assertActiveSuitePasses(server);
});

// The response mode changes how progress, logs and server→client requests
// reach the client, so each mode must survive the whole suite on its own.
for (const mode of ['json', 'sse']) {
  test(`every active scenario passes with --mode ${mode}`, async () => {
    const modal = await spawnServe(['--mode', mode]);
    extraServers.push(modal);
    try {
      await assertActiveSuitePasses(modal);
    } finally {
      await modal.close();
    }
  });
}

// Hibernation after every answer: each request meets a fresh server, handed the client's initialize,
// initialized and last logging/setLevel again (core/era-2025/wake.ts). The suite must not notice.
test('every active scenario passes with --hibernate-after-ms 0 (a fresh server for every request)', async () => {
  const sleepy = await spawnServe(['--hibernate-after-ms', '0', '--metrics']);
  extraServers.push(sleepy);
  try {
    await assertActiveSuitePasses(sleepy);
    // It did hibernate: sessions were woken (the suite makes far more requests than this).
    const metrics = await (await fetch(new URL('/metrics', sleepy.url))).text();
    const woke = Number(/^sluice_session_wakes_total\{outcome="woke"\} (\d+)$/m.exec(metrics)?.[1]);
    assert.ok(woke >= 20, `woken ${woke} times`);
    assert.match(metrics, /^sluice_session_wakes_total\{outcome="failed"\} 0$/m);
  } finally {
    await sleepy.close();
  }
});

test('pending scenario server-sse-polling: priming event, retry, resume via GET — no failures or warnings', async () => {
  assert.ok(server);
  const dir = outDir();
  const run = await runCli(
    ['server', '--url', server.url, '--scenario', 'server-sse-polling', '-o', dir],
    SCENARIO_DEADLINE_MS,
    'conformance server-sse-polling',
  );
  const results = readResults(dir);
  const checks = results.get('server-sse-polling');
  assert.ok(checks, `no checks.json for server-sse-polling\n${summary(run.output)}`);
  const bad = describeChecks(results, ['FAILURE', 'WARNING']);
  assert.equal(
    bad,
    '',
    `server-sse-polling reported problems:\n${bad}\n--- server stderr ---\n${server.stderr()}`,
  );
  assert.equal(run.code, 0, summary(run.output));
  // A JSON reply or an uninterrupted stream yields only INFO checks, which
  // would pass the test above vacuously: demand the three scored successes.
  const succeeded = checks.filter((c) => c.status === 'SUCCESS').map((c) => c.id);
  for (const id of ['server-sse-priming-event', 'server-sse-retry-field', 'server-sse-disconnect-resume']) {
    assert.ok(succeeded.includes(id), `${id} did not succeed:\n${JSON.stringify(checks, null, 2)}`);
  }
});

test('pending scenario json-schema-2020-12: the tool schema survives tools/list verbatim', async () => {
  assert.ok(server);
  const dir = outDir();
  const run = await runCli(
    ['server', '--url', server.url, '--scenario', 'json-schema-2020-12', '-o', dir],
    SCENARIO_DEADLINE_MS,
    'conformance json-schema-2020-12',
  );
  const results = readResults(dir);
  const bad = describeChecks(results, ['FAILURE', 'WARNING']);
  assert.equal(bad, '', `json-schema-2020-12 reported problems:\n${bad}`);
  assert.equal(run.code, 0, summary(run.output));
  const succeeded = (results.get('json-schema-2020-12') ?? []).filter((c) => c.status === 'SUCCESS');
  assert.equal(
    succeeded.length,
    4,
    'expected 4 successful checks (tool found, $schema, $defs, additionalProperties)',
  );
});
