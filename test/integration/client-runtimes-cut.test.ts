/**
 * The client on Deno and Bun must not run a tool twice either (client-stale-resend.test.ts is the same
 * on Node). A loopback proxy in front of the test server forwards the first request that carries each
 * `cut-…` marker and then resets the client's connection before any response byte; the client runs in
 * the runtime (test/runtimes/client-cut.mjs). Every cut call without an idempotency key must run once
 * and fail with the typed not-idempotent error; a keyed one must be re-sent and succeed.
 * - Deno, the transport's default adapter (and a fetch that never reuses a connection, as docs/client.md
 *   says to pass one): Deno's own HTTP stack re-sends a request whose reused connection was reset
 *   (measured with 2.9.6: a pooled `fetch` ran every cut call twice; Deno's `node:http` re-sent it
 *   without its body, and the server answered 408), so on Deno Sluice sends what must not go twice on a
 *   connection of its own (src/client/http-default.ts).
 * - Bun: its default (`node:http`) and a `fetch` passed in (Bun reports the reset as ECONNRESET).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { requestCutProxy } from '../helpers/request-cut-proxy.js';
import { runProcess } from '../helpers/run-process.js';
import { repoRoot } from '../helpers/spawn-serve.js';
import { startServer } from '../helpers/test-server.js';

const REQUIRE = process.env['SLUICE_REQUIRE_RUNTIMES'] === '1';
const bin = (name: string): string => join(repoRoot(), 'node_modules', '.bin', name);
const SCRIPT = join(repoRoot(), 'test', 'runtimes', 'client-cut.mjs');

const RUNTIMES = [
  {
    name: 'Deno',
    binary: bin('deno'),
    command: (url: string, adapters: string[]) =>
      ['run', '--allow-net=127.0.0.1', '--allow-read', '--allow-env', SCRIPT, url].concat(adapters),
    adapters: ['default', 'unpooled'],
  },
  {
    name: 'Bun',
    binary: bin('bun'),
    command: (url: string, adapters: string[]) => [SCRIPT, url].concat(adapters),
    adapters: ['default', 'fetch'],
  },
];

function unavailable(binary: string): string | undefined {
  if (!existsSync(binary)) return `${binary} is missing (run 'npm ci')`;
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0
    ? undefined
    : `${binary} --version failed: ${r.error?.message ?? r.stderr.slice(-300)}`;
}

for (const rt of RUNTIMES) {
  const missing = unavailable(rt.binary);
  if (missing !== undefined && !REQUIRE)
    process.stderr.write(`\n*** SKIPPED the client on ${rt.name}: ${missing}\n\n`);

  test(`on ${rt.name} (${rt.adapters.join(', ')}), a call cut after it was sent runs once: not-idempotent error; a keyed call is re-sent`, {
    skip: missing !== undefined && !REQUIRE ? `SKIPPED: ${missing}` : false,
  }, async () => {
    if (missing !== undefined) assert.fail(`${rt.name} cannot run (SLUICE_REQUIRE_RUNTIMES=1): ${missing}`);
    const srv = await startServer({ streamAfterMs: 5_000 });
    after(() => srv.close());
    // The first request carrying each `cut-…` marker is cut.
    const cuts: string[] = [];
    const proxy = await requestCutProxy(srv, (request) => {
      const marker = /cut-[a-z]+-[a-z0-9]+/.exec(request)?.[0];
      if (marker === undefined || cuts.includes(marker)) return false;
      cuts.push(marker);
      return true;
    });
    after(() => proxy.close());
    const { code, out, err } = await runProcess(rt.binary, rt.command(proxy.url, rt.adapters), {
      ms: 60_000,
      label: `the client on ${rt.name}`,
      cwd: repoRoot(),
    });
    assert.equal(code, 0, `${rt.name} exited ${code}\n${err}\n${out}`);
    const outcomes = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { call: string; outcome: string });
    const expected = rt.adapters.flatMap((a) => [
      [`cut-${a}-0`, 'SLUICE_CLIENT_NOT_IDEMPOTENT'],
      [`cut-${a}-1`, 'SLUICE_CLIENT_NOT_IDEMPOTENT'],
      [`cut-${a}-2`, 'SLUICE_CLIENT_NOT_IDEMPOTENT'],
      [`cut-${a}-keyed`, 'ok'],
    ]);
    assert.deepEqual(
      outcomes.map((o) => [o.call, o.outcome.split(' ')[0]]),
      expected,
      out,
    );
    assert.deepEqual(
      cuts,
      expected.map(([call]) => call),
    );
    // Per adapter: three cut calls once each, the keyed one twice (the cut copy and its re-send).
    assert.equal(srv.probe.started.get('echo'), 5 * rt.adapters.length, 'executions on the server');
  });
}
