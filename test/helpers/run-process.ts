/**
 * Runs a command to its end with a deadline (killed with SIGKILL past it) and gives back its exit
 * code, stdout and stderr; `onStderr` sees the stderr so far as it grows (a test that must act on
 * what the process prints while it runs, e.g. a login URL); `onSpawn` gets the process (a test that
 * signals it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { withDeadline } from './deadline.js';
import { reapWithMe } from './reaper.js';

export interface ProcessRun {
  code: number | null;
  out: string;
  err: string;
}

export function runProcess(
  command: string,
  args: readonly string[],
  o: {
    ms: number;
    label: string;
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    onStderr?: (err: string) => void;
    onSpawn?: (child: ChildProcess) => void;
  },
): Promise<ProcessRun> {
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
    ...(o.env === undefined ? {} : { env: o.env }),
  });
  reapWithMe(child);
  o.onSpawn?.(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    o.onStderr?.(err);
  });
  const done = new Promise<ProcessRun>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
  return withDeadline(done, o.ms, o.label).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw new Error(`${String(error)}\nstderr: ${err}\nstdout: ${out}`);
  });
}
