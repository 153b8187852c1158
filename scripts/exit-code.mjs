// The exit code of a child process (1 when it could not start, 128 when a signal ended it), for the
// scripts that run several at once (pretest.mjs, run-tests.mjs).
import { spawn } from 'node:child_process';

/** Runs `cmd args` with `options` (node:child_process spawn's) and resolves with its exit code. */
export function exitCode(cmd, args, options) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, options);
    child.once('error', () => resolve(1));
    child.once('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}
