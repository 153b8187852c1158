/**
 * Test files run by node's runner in a child process (another Node binary, another environment)
 * and read back from its TAP report: the fetch-binding suites (fetch-suites.ts) and the Node-line
 * runs (conformance/node-lines.test.ts). The child's NODE_TEST_CONTEXT is cleared: a test file runs
 * with it set, and it would make the inner runner report to us in its binary protocol, not TAP.
 */
import assert from 'node:assert/strict';
import { runProcess } from './run-process.js';

export interface ChildTestRun {
  code: number | null;
  /** Its stdout and stderr, one after the other. */
  out: string;
  pass: number;
  /** -1 when the report has no count (the runner did not finish). */
  fail: number;
  skipped: number;
}

/** Runs `files` (with `args` before them) under `node --expose-gc --test --test-reporter=tap`. */
export async function runChildTests(
  node: string,
  files: readonly string[],
  o: { label: string; ms: number; env?: NodeJS.ProcessEnv; args?: readonly string[]; cwd?: string },
): Promise<ChildTestRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...o.env };
  delete env['NODE_TEST_CONTEXT'];
  const run = await runProcess(
    node,
    ['--expose-gc', '--test', '--test-reporter=tap', ...(o.args ?? []), ...files],
    { ms: o.ms, label: o.label, env, ...(o.cwd === undefined ? {} : { cwd: o.cwd }) },
  );
  const out = `${run.out}\n${run.err}`;
  const count = (name: string): number => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(out)?.[1] ?? -1);
  return {
    code: run.code,
    out,
    pass: Math.max(0, count('pass')),
    fail: count('fail'),
    skipped: count('skipped'),
  };
}

/**
 * Asserts the run passed: exit 0 with its failing lines named otherwise, no failure counted, and at
 * least `minPass` tests passed (exit 0 also happens when nothing ran).
 */
export function assertChildPassed(run: ChildTestRun, label: string, minPass: number): void {
  const failing = run.out
    .split('\n')
    .filter((l) => /^\s*not ok /.test(l))
    .join('\n');
  assert.equal(run.code, 0, `${label} failed:\n${failing}\n--- tail ---\n${run.out.slice(-6000)}`);
  assert.equal(run.fail, 0, `${label}:\n${run.out.slice(-3000)}`);
  assert.ok(run.pass >= minPass, `${label}: only ${run.pass} tests passed:\n${run.out.slice(-3000)}`);
}
