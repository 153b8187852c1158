/**
 * The client on Deno must not run a tool twice either (client-stale-resend.test.ts is the same on Node). A
 * loopback proxy in front of the test server forwards the first request that carries each `cut-…` marker
 * and then resets the client's connection before any response byte; the client runs in Deno
 * (test/runtimes/deno-client-cut.mjs) with its default adapter. Deno's own HTTP stack re-sends a request
 * whose reused connection was reset (measured with 2.9.6: the fetch adapter over a pooled `fetch` ran every
 * cut call twice; Deno's `node:http` re-sent it without its body, and the server answered 408), so on Deno
 * Sluice sends what must not go twice on a connection of its own (src/client/http-default.ts): each such
 * call runs once and fails with the typed not-idempotent error, and a call with an idempotency key is
 * re-sent and succeeds.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import { requestCutProxy } from '../helpers/request-cut-proxy.js';
import { repoRoot } from '../helpers/spawn-serve.js';
import { startServer } from '../helpers/test-server.js';

const DENO = join(repoRoot(), 'node_modules', '.bin', 'deno');
const REQUIRE = process.env['SLUICE_REQUIRE_RUNTIMES'] === '1';

function unavailable(): string | undefined {
  if (!existsSync(DENO)) return `${DENO} is missing (run 'npm ci')`;
  const r = spawnSync(DENO, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0 ? undefined : `deno --version failed: ${r.error?.message ?? r.stderr.slice(-300)}`;
}
const missing = unavailable();
if (missing !== undefined && !REQUIRE)
  process.stderr.write(`\n*** SKIPPED the client on Deno: ${missing}\n\n`);

test('on Deno, a call cut after it was sent runs once: not-idempotent error; a keyed call is re-sent', {
  skip: missing !== undefined && !REQUIRE ? `SKIPPED: ${missing}` : false,
}, async () => {
  if (missing !== undefined) assert.fail(`Deno cannot run (SLUICE_REQUIRE_RUNTIMES=1): ${missing}`);
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
  const script = join(repoRoot(), 'test', 'runtimes', 'deno-client-cut.mjs');
  const child = spawn(
    DENO,
    ['run', '--allow-net=127.0.0.1', '--allow-read', '--allow-env', script, proxy.url, 'default'],
    {
      cwd: repoRoot(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const code = await withDeadline(
    new Promise<number | null>((resolve) => child.once('close', resolve)),
    60_000,
    'the Deno client',
  ).catch((e: unknown) => {
    child.kill('SIGKILL');
    throw e;
  });
  assert.equal(code, 0, `deno exited ${code}\n${err}\n${out}`);
  const outcomes = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { call: string; outcome: string });
  assert.deepEqual(
    outcomes.map((o) => [o.call, o.outcome.split(' ')[0]]),
    [
      ['cut-default-0', 'SLUICE_CLIENT_NOT_IDEMPOTENT'],
      ['cut-default-1', 'SLUICE_CLIENT_NOT_IDEMPOTENT'],
      ['cut-default-2', 'SLUICE_CLIENT_NOT_IDEMPOTENT'],
      ['cut-default-keyed', 'ok'],
    ],
    out,
  );
  assert.deepEqual(cuts, ['cut-default-0', 'cut-default-1', 'cut-default-2', 'cut-default-keyed']);
  // Three cut calls once each; the keyed one twice (the cut copy and its re-send, allowed for it).
  assert.equal(srv.probe.started.get('echo'), 5, 'executions on the server');
});
