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
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import { repoRoot } from '../helpers/spawn-serve.js';
import { type Running, startServer } from '../helpers/test-server.js';

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

/** Forwards the first request carrying each `cut-…` marker, then resets the client's connection. */
async function markerCutProxy(
  target: Running,
): Promise<{ url: string; cuts: string[]; close(): Promise<void> }> {
  const cuts: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    let dead = false;
    client.on('data', (chunk: Buffer) => {
      if (dead) return;
      const marker = /cut-[a-z]+-[a-z0-9]+/.exec(chunk.toString('latin1'))?.[0];
      if (marker !== undefined && !cuts.includes(marker)) {
        cuts.push(marker);
        dead = true;
        upstream.write(chunk, () => client.resetAndDestroy());
        upstream.removeAllListeners('data');
        upstream.on('data', () => undefined);
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!dead) client.write(chunk);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', () => {
      if (!dead) upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: target.url.replace(`:${target.port}/`, `:${port}/`),
    cuts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

test('on Deno, a call cut after it was sent runs once: not-idempotent error; a keyed call is re-sent', {
  skip: missing !== undefined && !REQUIRE ? `SKIPPED: ${missing}` : false,
}, async () => {
  if (missing !== undefined) assert.fail(`Deno cannot run (SLUICE_REQUIRE_RUNTIMES=1): ${missing}`);
  const srv = await startServer({ streamAfterMs: 5_000 });
  after(() => srv.close());
  const proxy = await markerCutProxy(srv);
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
  assert.deepEqual(proxy.cuts, ['cut-default-0', 'cut-default-1', 'cut-default-2', 'cut-default-keyed']);
  // Three cut calls once each; the keyed one twice (the cut copy and its re-send, allowed for it).
  assert.equal(srv.probe.started.get('echo'), 5, 'executions on the server');
});
