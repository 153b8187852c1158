/**
 * Children that die with the test file that started them. A file's own 'exit' hooks (daemon.ts)
 * stop its daemons when it ends normally or throws, but when node's runner ends a file for its
 * per-file timeout, or a run is killed, no hook of the file runs, and its `redis-server`, nginx and
 * `sluice serve` children outlived it, holding ports and CPU for the files after it. Here one
 * watchdog per file (reaper-watch.ts), connected to it by an IPC channel, stops them when that
 * channel drops, however the file ended.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

let registry: string | undefined;

/** Starts this process's watchdog; its registry file, which reapWithMe appends to. */
function start(): string {
  const file = join(tmpdir(), `sluice-reaper-${process.pid}.txt`);
  appendFileSync(file, '');
  const script = fileURLToPath(new URL('./reaper-watch.js', import.meta.url));
  // Its own session, so a signal to this process's group does not take it before it acts; no stdio,
  // so it never holds the runner's pipes open after this file is gone.
  const w = spawn(process.execPath, [script, file], {
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    detached: true,
  });
  w.unref();
  w.channel?.unref();
  return file;
}

/**
 * When process `pid` started (field 22 of /proc/PID/stat, in clock ticks since boot), so the watchdog
 * never signals another process that got the pid later (pids wrap at 32768 here, and a full test
 * run starts thousands); '-' where there is no /proc.
 */
export function startTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name, which is in parentheses and may hold spaces: field 3 onwards.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '-';
  } catch {
    return '-';
  }
}

/**
 * Stops `child` with `signal` (its whole process group with `group`: the child must then have been
 * spawned `detached`) if this process dies while `child` still runs.
 */
export function reapWithMe(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', group = false): void {
  const pid = child.pid;
  if (pid === undefined) return;
  registry ??= start();
  const file = registry;
  appendFileSync(file, `watch ${pid} ${signal} ${startTime(pid)}${group ? ' group' : ''}\n`);
  child.once('exit', () => appendFileSync(file, `gone ${pid}\n`));
}
