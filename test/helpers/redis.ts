/**
 * A real redis-server for a test: started on a free 127.0.0.1 port with no persistence, its working
 * directory a fresh temp dir, stopped (and the dir removed) by `stop()`. Never a system Redis.
 * `restart()` kills it and starts a new, empty one on the same port (a Redis restart that lost its
 * data, as the cluster tests need).
 *
 * Tests call `skipWithoutRedis(t)` first: without redis-server they are skipped loudly, never
 * silently passed. `.ci/run` installs it, so CI always runs them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { type Daemon, daemonBinary, freePort, spawnDaemon, stopDaemon, waitForPort } from './daemon.js';

export const REDIS_MISSING = 'SKIPPED: redis-server not installed — .ci/run installs it';

const redisBinary = daemonBinary('REDIS_SERVER', '/usr/bin/redis-server', 'redis-server', REDIS_MISSING);

/** The redis-server binary: $REDIS_SERVER, then /usr/bin/redis-server, then PATH; undefined when none. */
export const findRedis = redisBinary.find;

/** True when redis-server is missing; then the test is skipped and stderr says so loudly. */
export const skipWithoutRedis = redisBinary.skipWithout;

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

/** What redis-server wrote (the last 8 KB), shared by the servers of one test topology. */
export interface RedisLog {
  text: string;
}

/**
 * One redis-server on 127.0.0.1:`port`, no persistence, working in `dir`; `extra` arguments come
 * last (replication, cluster mode, or a config file first for a sentinel). Killed with SIGKILL
 * if the test process exits.
 */
export function launchRedis(
  bin: string,
  dir: string,
  port: number,
  log: RedisLog,
  extra: readonly string[] = [],
  configFile?: string,
): Daemon {
  const daemon = spawnDaemon(
    bin,
    [
      ...(configFile === undefined ? [] : [configFile]),
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
      ...extra,
    ],
    ['ignore', 'pipe', 'pipe'],
    'SIGKILL',
  );
  const append = (d: string): void => {
    log.text = (log.text + d).slice(-8_000);
  };
  daemon.child.stdout?.setEncoding('utf8').on('data', append);
  daemon.child.stderr?.setEncoding('utf8').on('data', append);
  return daemon;
}

/** Starts redis-server; throws (with its output) if it cannot be started within 10 s. */
export async function startRedis(): Promise<Redis> {
  const bin = findRedis();
  if (bin === undefined) throw new Error(REDIS_MISSING);
  const dir = await mkdtemp(join(tmpdir(), 'sluice-redis-'));
  const log = { text: '' };
  let port = 0;
  let started: Daemon | undefined;
  // Another process may take the free port between probe and bind: retry on a new one.
  for (let attempt = 0; attempt < 5 && started === undefined; attempt++) {
    port = await freePort();
    const d = launchRedis(bin, dir, port, log);
    if ((await waitForPort(d, port, 10_000)) === 'ready') started = d;
    else await stopDaemon(d, 'SIGKILL', 'redis-server');
  }
  if (started === undefined) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`redis-server did not start:\n${log.text}`);
  }
  let current: Daemon = started;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    output: () => log.text,
    async restart() {
      await stopDaemon(current, 'SIGKILL', 'redis-server');
      // The port is free again once the process is gone; bind the same one.
      for (let attempt = 0; attempt < 50; attempt++) {
        const d = launchRedis(bin, dir, port, log);
        if ((await waitForPort(d, port, 2_000)) === 'ready') {
          current = d;
          return;
        }
        await stopDaemon(d, 'SIGKILL', 'redis-server');
        await delay(50);
      }
      throw new Error(`redis-server did not restart on port ${port}:\n${log.text}`);
    },
    async stop() {
      await stopDaemon(current, 'SIGTERM', 'redis-server');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
