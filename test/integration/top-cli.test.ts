// `sluice top` as a user runs it, against real `sluice serve --metrics` processes under load: one
// JSON line per interval off a terminal with numbers that move, --once, a cluster's forwarded
// share, an instance that goes away mid-run, clear errors for bad input, and the screen redrawn in
// place on a real terminal (tmux; skipped loudly without it).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { TopReport } from '../../src/cli/top/report.js';
import { daemonBinary, freePort } from '../helpers/daemon.js';
import { withDeadline } from '../helpers/deadline.js';
import { initializeBody, send } from '../helpers/http.js';
import { driveLoad } from '../helpers/observe-load.js';
import { findRedis, REDIS_MISSING, startRedis } from '../helpers/redis.js';
import { repoRoot, spawnServe } from '../helpers/spawn-serve.js';

const CLI = join(repoRoot(), 'dist', 'src', 'cli', 'main.js');
const TMUX_MISSING = 'SKIPPED: tmux not installed — the terminal (in-place redraw) test needs it';
const tmux = daemonBinary('TMUX_BIN', '/usr/bin/tmux', 'tmux', TMUX_MISSING);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `sluice top ...args` off a terminal (stdout is a pipe) to completion, within `ms`. */
function top(args: string[], ms = 30_000): Promise<Ran> {
  const child = spawn(process.execPath, [CLI, 'top', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const done = new Promise<Ran>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
  return withDeadline(done, ms, `sluice top ${args.join(' ')}`).catch((e: unknown) => {
    child.kill('SIGKILL');
    throw e;
  });
}

function reports(r: Ran): TopReport[] {
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TopReport);
}

/** `sluice top` running off a terminal, its JSON lines read as they come. */
function startTop(args: string[]) {
  const child = spawn(process.execPath, [CLI, 'top', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const lines = (): TopReport[] =>
    stdout
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l) as TopReport);
  return {
    lines,
    /** Waits until `n` more lines than now have arrived. */
    async more(n: number, label: string): Promise<void> {
      const want = lines().length + n;
      const by = Date.now() + 20_000;
      while (lines().length < want) {
        assert.ok(Date.now() < by, `${label}: ${lines().length}/${want} lines; stderr: ${stderr}`);
        await delay(50);
      }
    },
    /** SIGTERM: top ends its loop and exits 0. */
    async stop(): Promise<number | null> {
      child.kill('SIGTERM');
      return withDeadline(closed, 10_000, 'sluice top exiting on SIGTERM');
    },
  };
}

describe('sluice top', () => {
  test('off a terminal: one JSON line per interval; the numbers move with the load', async () => {
    const srv = await spawnServe(['--metrics'], {}, 45_000);
    after(() => srv.close());
    const run = startTop([srv.url, '--interval', '0.5']);
    await run.more(1, 'a first idle interval');
    const load = await driveLoad([srv.url], { rounds: 3, deadlineMs: 30_000, pauseMs: 200 });
    // Two intervals after the load: the second lies wholly after it.
    await run.more(2, 'intervals after the load');
    assert.equal(await run.stop(), 0);
    const lines = run.lines();
    for (const l of lines) {
      // At least the pause; at most the pause plus one scrape's 5 s timeout.
      assert.ok(
        l.intervalSeconds >= 0.5 && l.intervalSeconds < 5.6,
        `interval ${l.intervalSeconds}: ${JSON.stringify(l)}`,
      );
      assert.deepEqual(l.instances, [{ url: srv.url.replace(/\/mcp$/, '/metrics'), up: true }]);
      assert.equal(l.forwarded, null, 'no cluster, no forwarded section');
    }
    assert.equal(load.rounds, 3);
    assert.equal(lines[0]?.requestsPerSecond, 0, 'idle before the load');
    const busy = lines.filter((l) => l.requestsPerSecond > 0);
    assert.ok(busy.length >= 1, `no interval saw requests: ${JSON.stringify(lines)}`);
    assert.ok(
      lines.some((l) => l.sessions > 0),
      'sessions seen',
    );
    const call = busy.flatMap((l) => l.methods).find((m) => m.method === 'tools/call');
    assert.ok(call !== undefined && call.perSecond > 0, 'tools/call has a rate');
    assert.ok(
      call.p50 !== null && call.p99 !== null && call.p50 <= call.p99,
      `p50 ${call.p50} p99 ${call.p99}`,
    );
    assert.ok(
      lines.some((l) => l.replays.servedPerSecond > 0),
      'a replay was served in some interval',
    );
    assert.ok(
      lines.some((l) => (l.replays.declinedPerSecond['malformed'] ?? 0) > 0),
      'a malformed cursor declined',
    );
    assert.ok(
      lines.some((l) => (l.errorsPerSecond['origin'] ?? 0) > 0),
      'origin refusals counted as errors',
    );
    assert.ok(
      lines.some((l) => l.writeStalls.perSecond > 0),
      'the slow reader stalled writes',
    );
    // After the load the rate falls back to zero: it is a rate, not a running total.
    assert.equal(lines.at(-1)?.requestsPerSecond, 0, JSON.stringify(lines.map((l) => l.requestsPerSecond)));
    assert.equal(lines.at(-1)?.sessions, 0, 'the load deleted its sessions');
  });

  test('--once with the /metrics URL: a single report after one interval', async () => {
    const srv = await spawnServe(['--metrics'], {}, 45_000);
    after(() => srv.close());
    const metrics = srv.url.replace(/\/mcp$/, '/metrics');
    const started = Date.now();
    const lines = reports(await top([metrics, '--once', '--interval', '0.3']));
    assert.equal(lines.length, 1);
    assert.ok(Date.now() - started >= 300);
    assert.equal(lines[0]?.instances[0]?.url, metrics);
    assert.equal(lines[0]?.sessions, 0);
  });

  test('a cluster of two: summed, with the forwarded share; an instance that dies is reported down', async (t) => {
    if (findRedis() === undefined) {
      process.stderr.write(`\n!! ${REDIS_MISSING}\n\n`);
      t.skip(REDIS_MISSING);
      return;
    }
    const redis = await startRedis();
    after(() => redis.stop());
    const a = await spawnServe(['--metrics', '--redis', redis.url], {}, 45_000);
    after(() => a.close());
    const b = await spawnServe(['--metrics', '--redis', redis.url], {}, 45_000);
    after(() => b.close());
    // One idle session on each instance, kept open: the load's own sessions come and go between
    // scrapes, so only a held one makes "sessions summed while both up" a fact rather than a race.
    for (const url of [a.url, b.url]) {
      const init = await send(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(initializeBody()),
      });
      assert.equal(init.status, 200);
    }
    const run = startTop([a.url, b.url, '--interval', '0.5']);
    await run.more(1, 'a first interval');
    await driveLoad([a.url, b.url], { rounds: 3, deadlineMs: 30_000, pauseMs: 200, slowEvery: 0 });
    await run.more(1, 'an interval after the load');
    await b.close();
    await run.more(2, 'intervals with b gone');
    assert.equal(await run.stop(), 0);
    const lines = run.lines();
    const loaded = lines.filter((l) => l.forwarded !== null && l.forwarded.perSecond > 0);
    assert.ok(loaded.length >= 1, `no interval forwarded: ${JSON.stringify(lines.map((l) => l.forwarded))}`);
    // Each session's calls go through both instances: about a third of what clients sent is
    // forwarded in a busy interval (an interval catching the tail of the load may see less).
    const shares = loaded.map((l) => l.forwarded?.share ?? 0);
    assert.ok(Math.max(...shares) > 0.2 && Math.max(...shares) <= 1, `shares ${shares}`);
    assert.ok(
      loaded.some((l) => (l.forwarded?.hopP99 ?? 0) > 0),
      'hop latency measured',
    );
    assert.ok(
      lines.some((l) => l.sessions >= 2 && l.instances.every((i) => i.up)),
      `sessions summed while both up: ${JSON.stringify(lines.map((l) => [l.sessions, l.instances.map((i) => i.up)]))}`,
    );
    const last = lines.at(-1);
    assert.equal(last?.instances[0]?.up, true);
    assert.equal(last?.instances[1]?.up, false);
    assert.match(last?.instances[1]?.error ?? '', /ECONNREFUSED|no answer/);
  });

  test('bad input: not a URL, no server, not Prometheus text, no --metrics, bad options', async () => {
    const notUrl = await top(['localhost:3000']);
    assert.equal(notUrl.code, 2);
    assert.match(notUrl.stderr, /'localhost:3000' is not an http\(s\) URL|is not a URL/);
    const noArgs = await top([]);
    assert.equal(noArgs.code, 2);
    assert.match(noArgs.stderr, /give the URL/);
    const badInterval = await top(['http://127.0.0.1:1/mcp', '--interval', '0']);
    assert.equal(badInterval.code, 2);
    assert.match(badInterval.stderr, /--interval must be/);
    const port = await freePort();
    const refused = await top([`http://127.0.0.1:${port}/mcp`, '--once']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`127\\.0\\.0\\.1:${port}/metrics: ECONNREFUSED`));
    assert.equal(refused.stdout, '');

    const html: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html>\n<title>Welcome</title>\n');
    });
    await new Promise<void>((r) => html.listen(0, '127.0.0.1', r));
    after(() => new Promise<void>((r) => html.close(() => r())));
    const address = html.address();
    assert.ok(typeof address === 'object' && address !== null);
    const page = await top([`http://127.0.0.1:${address.port}/metrics`, '--once']);
    assert.equal(page.code, 1);
    assert.match(page.stderr, /the answer is not Prometheus text \(content-type 'text\/html'; line 1: /);

    const plain = await spawnServe([], {}, 45_000);
    after(() => plain.close());
    const off = await top([plain.url, '--once']);
    assert.equal(off.code, 1);
    assert.match(off.stderr, /HTTP 404 \(is the server started with --metrics\?\)/);
  });

  test('on a terminal: one screen redrawn in place, numbers moving; q quits', async (t) => {
    if (tmux.skipWithout(t)) return;
    const bin = tmux.find() as string;
    const srv = await spawnServe(['--metrics'], {}, 45_000);
    after(() => srv.close());
    const dir = mkdtempSync(join(tmpdir(), 'sluice-tmux-'));
    const sock = join(dir, 'sock');
    const tm = (...args: string[]) =>
      spawnSync(bin, ['-S', sock, ...args], { encoding: 'utf8', timeout: 10_000 });
    after(() => {
      tm('kill-server');
      rmSync(dir, { recursive: true, force: true });
    });
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} top ${srv.url} --interval 0.5`;
    const started = tm('new-session', '-d', '-s', 'top', '-x', '110', '-y', '40', command);
    assert.equal(started.status, 0, started.stderr);
    const screen = (): string => tm('capture-pane', '-p', '-t', 'top').stdout;
    const until = async (pred: (s: string) => boolean, label: string): Promise<string> => {
      const by = Date.now() + 15_000;
      for (;;) {
        const s = screen();
        if (pred(s)) return s;
        assert.ok(Date.now() < by, `${label}; screen:\n${s}`);
        await delay(100);
      }
    };
    await until((s) => s.includes('sluice top'), 'the first frame');
    // Watched while the load runs: a frame drawn during it shows it.
    const [busy] = await Promise.all([
      until((s) => /tools\/call\s+\d/.test(s) && !/requests 0\.00\/s/.test(s), 'a frame with the load'),
      driveLoad([srv.url], { rounds: 4, deadlineMs: 30_000, pauseMs: 300, slowEvery: 0 }),
    ]);
    // Drawn in place: one header, one table, however many frames were drawn.
    assert.equal(busy.split('sluice top —').length - 1, 1, busy);
    assert.equal(busy.split('\nmethod').length - 1, 1, busy);
    assert.match(busy, /instances 1\/1 up/);
    await until((s) => /requests 0\.00\/s/.test(s), 'the rate falling back to 0 after the load');
    tm('send-keys', '-t', 'top', 'q');
    const by = Date.now() + 10_000;
    while (tm('has-session', '-t', 'top').status === 0) {
      assert.ok(Date.now() < by, 'q did not quit sluice top');
      await delay(100);
    }
  });
});
