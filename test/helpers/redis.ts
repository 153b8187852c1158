/**
 * A real redis-server for a test: started on a free 127.0.0.1 port with no persistence, its working
 * directory a fresh temp dir, stopped (and the dir removed) by `stop()`. Never a system Redis.
 * `restart()` kills it and starts a new, empty one on the same port (a Redis restart that lost its
 * data, as the cluster tests need).
 *
 * Tests call `skipWithoutRedis(t)` first: without redis-server they are skipped loudly, never
 * silently passed. `.ci/run` installs it, so CI always runs them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/** The redis-server binary: $REDIS_SERVER, then /usr/bin/redis-server, then PATH; undefined when none. */
export function findRedis(): string | undefined {
  const candidates = [
    process.env['REDIS_SERVER'],
    '/usr/bin/redis-server',
    ...(process.env['PATH'] ?? '').split(delimiter).map((d) => join(d, 'redis-server')),
  ];
  for (const c of candidates) {
    if (c === undefined || c.length === 0) continue;
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // Not there or not executable: try the next candidate.
    }
  }
  return undefined;
}

interface Skippable {
  skip(message?: string): void;
}

export const REDIS_MISSING = 'SKIPPED: redis-server not installed — .ci/run installs it';

/** True when redis-server is missing; then the test is skipped and stderr says so loudly. */
export function skipWithoutRedis(t: Skippable): boolean {
  if (findRedis() !== undefined) return false;
  process.stderr.write(`\n${'!'.repeat(72)}\n!! ${REDIS_MISSING}\n${'!'.repeat(72)}\n\n`);
  t.skip(REDIS_MISSING);
  return true;
}

export interface Redis {
  readonly port: number;
  /** `redis://127.0.0.1:PORT` */
  readonly url: string;
  /** Kills the server (SIGKILL: no chance to save) and starts an empty one on the same port. */
  restart(): Promise<void>;
  /** Stops the server (SIGTERM, SIGKILL after 5 s) and removes its temp dir. */
  stop(): Promise<void>;
  /** What the server wrote to stdout/stderr, for failure messages. */
  output(): string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Every server this process started, killed at exit so a crashing run leaves none behind. */
const live = new Set<ChildProcess>();
let exitHook = false;

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

function launch(bin: string, dir: string, port: number, log: { text: string }): ChildProcess {
  const child = spawn(
    bin,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--daemonize',
      'no',
      '--protected-mode',
      'yes',
      '--loglevel',
      'warning',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const append = (d: string): void => {
    log.text = (log.text + d).slice(-8_000);
  };
  child.stdout?.setEncoding('utf8').on('data', append);
  child.stderr?.setEncoding('utf8').on('data', append);
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function waitReady(child: ChildProcess, port: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    if (await canConnect(port)) return true;
    await delay(20);
  }
  return false;
}

/** Starts redis-server; throws (with its output) if it cannot be started within 10 s. */
export async function startRedis(): Promise<Redis> {
  const bin = findRedis();
  if (bin === undefined) throw new Error(REDIS_MISSING);
  const dir = await mkdtemp(join(tmpdir(), 'sluice-redis-'));
  const log = { text: '' };
  let port = 0;
  let child: ChildProcess | undefined;
  // Another process may take the free port between probe and bind: retry on a new one.
  for (let attempt = 0; attempt < 5 && child === undefined; attempt++) {
    port = await freePort();
    const c = launch(bin, dir, port, log);
    if (await waitReady(c, port, 10_000)) child = c;
    else {
      c.kill('SIGKILL');
      await exited(c);
    }
  }
  if (child === undefined) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`redis-server did not start:\n${log.text}`);
  }
  let current: ChildProcess = child;
  const stopChild = async (c: ChildProcess, signal: NodeJS.Signals): Promise<void> => {
    if (c.exitCode !== null || c.signalCode !== null) return;
    c.kill(signal);
    const t = setTimeout(() => c.kill('SIGKILL'), 5_000);
    await exited(c);
    clearTimeout(t);
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    output: () => log.text,
    async restart() {
      await stopChild(current, 'SIGKILL');
      // The port is free again once the process is gone; bind the same one.
      for (let attempt = 0; attempt < 50; attempt++) {
        const c = launch(bin, dir, port, log);
        if (await waitReady(c, port, 2_000)) {
          current = c;
          return;
        }
        c.kill('SIGKILL');
        await exited(c);
        await delay(50);
      }
      throw new Error(`redis-server did not restart on port ${port}:\n${log.text}`);
    },
    async stop() {
      await stopChild(current, 'SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
