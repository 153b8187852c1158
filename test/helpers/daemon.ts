/**
 * What the helpers that run a real daemon for a test (nginx.ts, redis.ts) share: find the binary,
 * skip loudly when it is missing, pick a free 127.0.0.1 port, spawn the daemon as a child that is
 * killed when this process exits, wait until its port accepts connections, and stop it within a
 * deadline. The daemon-specific parts (arguments, config, output capture, retries) stay with them.
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { withDeadline } from './deadline.js';
import { reapWithMe } from './reaper.js';

/** The part of node:test's TestContext this module needs. */
export interface Skippable {
  skip(message?: string): void;
}

/** A daemon binary a test needs. */
export interface DaemonBinary {
  /** Its path; undefined when none is executable. */
  find(): string | undefined;
  /**
   * True when it is missing; then the test is skipped and stderr says so loudly, so a run without
   * it can never pass silently.
   */
  skipWithout(t: Skippable): boolean;
}

/** Looks for $ENV_VAR, then the usual install path, then `name` on PATH; `missing` is the skip message. */
export function daemonBinary(envVar: string, usualPath: string, name: string, missing: string): DaemonBinary {
  const find = (): string | undefined => {
    const candidates = [
      process.env[envVar],
      usualPath,
      ...(process.env['PATH'] ?? '').split(delimiter).map((d) => join(d, name)),
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
  };
  return {
    find,
    skipWithout(t) {
      if (find() !== undefined) return false;
      process.stderr.write(`\n${'!'.repeat(72)}\n!! ${missing}\n${'!'.repeat(72)}\n\n`);
      t.skip(missing);
      return true;
    },
  };
}

/** A port that was free a moment ago (a throwaway listen(0)); a daemon may lose it to a race. */
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

export interface Daemon {
  readonly child: ChildProcess;
  /** Resolves with the exit code (or signal, or spawn error) once the process is gone. */
  readonly exited: Promise<string>;
  hasExited(): boolean;
}

/** Every daemon this process started, with the signal that ends it when this process exits. */
const live = new Map<ChildProcess, NodeJS.Signals>();
let exitHook = false;

/**
 * Spawns a daemon, tracked so that a crashing test run leaves none behind: at exit it gets
 * `exitSignal` (SIGTERM lets an nginx master take its workers down after we are gone). `env` is
 * added to this process's environment.
 */
export function spawnDaemon(
  bin: string,
  args: readonly string[],
  stdio: SpawnOptions['stdio'],
  exitSignal: NodeJS.Signals,
  env?: Record<string, string>,
): Daemon {
  const child = spawn(bin, args, {
    stdio,
    ...(env === undefined ? {} : { env: { ...process.env, ...env } }),
  });
  live.set(child, exitSignal);
  reapWithMe(child, exitSignal);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const [c, signal] of live) c.kill(signal);
    });
  }
  let gone = false;
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => {
      gone = true;
      live.delete(child);
      resolve(signal ?? String(code));
    });
    child.once('error', (e) => {
      gone = true;
      live.delete(child);
      resolve(`spawn error: ${e.message}`);
    });
  });
  return { child, exited, hasExited: () => gone };
}

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

/**
 * The inodes of the sockets listening on 127.0.0.1/0.0.0.0/:: `port` (Linux: /proc/net/tcp and tcp6,
 * state 0A); undefined where /proc cannot tell.
 */
function listenerInodes(port: number): Set<string> | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  try {
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f[1]?.endsWith(`:${hex}`) && f[3] === '0A' && f[9] !== undefined) inodes.add(f[9]);
      }
    }
  } catch {
    return undefined;
  }
  return inodes;
}

/** Whether `pid` or one of its children holds one of `inodes` open (undefined where /proc cannot tell). */
function holdsOneOf(pid: number, inodes: Set<string>): boolean | undefined {
  let pids: number[];
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    pids = [pid, ...(children === '' ? [] : children.split(/\s+/).map(Number))];
  } catch {
    return undefined;
  }
  for (const p of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${p}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${p}/fd/${fd}`));
        if (m?.[1] !== undefined && inodes.has(m[1])) return true;
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return false;
}

/**
 * Whether the process listening on `port` is the daemon. A port from freePort() can be taken by another
 * process (a server on port 0) before the daemon binds it: the port then accepts connections while the
 * daemon is still failing to bind. The likely cause of a CI failure here: a Caddy test's requests went to
 * such a stranger, which closed the socket on them. Where /proc cannot tell, accepting connections is taken
 * as the daemon's.
 */
function isTheDaemons(d: Daemon, port: number): boolean {
  const pid = d.child.pid;
  const inodes = listenerInodes(port);
  if (pid === undefined || inodes === undefined) return true;
  return holdsOneOf(pid, inodes) ?? true;
}

/**
 * 'ready' once the daemon listens on the port and it accepts connections; 'exited' if the daemon died first
 * (a stranger on the port: the daemon fails to bind, and exits); 'timeout' after ms.
 */
export async function waitForPort(
  d: Daemon,
  port: number,
  ms: number,
): Promise<'ready' | 'exited' | 'timeout'> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (d.hasExited()) return 'exited';
    if ((await canConnect(port)) && isTheDaemons(d, port)) return d.hasExited() ? 'exited' : 'ready';
    await delay(20);
  }
  return 'timeout';
}

/** Sends `signal`, then SIGKILL if the daemon is still there after 5 s; each wait has a deadline. */
export async function stopDaemon(d: Daemon, signal: NodeJS.Signals, label: string): Promise<void> {
  if (d.hasExited()) return;
  d.child.kill(signal);
  try {
    await withDeadline(d.exited, 5_000, `${label} exit after ${signal}`);
  } catch {
    d.child.kill('SIGKILL');
    await withDeadline(d.exited, 5_000, `${label} exit after SIGKILL`);
  }
}
