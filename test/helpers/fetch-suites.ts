/**
 * Runs server integration suites, unchanged, against the fetch binding under Node: each suite file
 * runs in a child with SLUICE_TEST_BINDING=fetch, which makes startServer() serve createFetchHandler
 * through a node:http ↔ Request/Response adapter (test/helpers/fetch-adapter.ts) instead of
 * serve(). One test (one child) per suite, so each has its own deadline and a failure names it;
 * the suites are spread over test/integration/fetch-binding-*.test.ts so that no file runs longer
 * than the runner's per-file timeout on a loaded machine.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { withDeadline } from './deadline.js';
import { repoRoot } from './spawn-serve.js';

/** node:http-only tests each suite skips on this binding (socket timeouts, diagnostics channels). */
const NODE_ONLY_SKIPS: Record<string, number> = { 'server-ops': 2 };

export function fetchSuites(suites: readonly string[]): void {
  for (const suite of suites) {
    test(`${suite} passes against createFetchHandler (SLUICE_TEST_BINDING=fetch)`, async () => {
      const file = join(repoRoot(), 'dist', 'test', 'integration', `${suite}.test.js`);
      // A test file runs with NODE_TEST_CONTEXT set, which would make the inner runner report to us in
      // its binary protocol instead of TAP: clear it.
      const env: NodeJS.ProcessEnv = { ...process.env, SLUICE_TEST_BINDING: 'fetch' };
      delete env['NODE_TEST_CONTEXT'];
      const child = spawn(process.execPath, ['--expose-gc', '--test', '--test-reporter=tap', file], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      const collect = (c: string): void => {
        out = (out + c).slice(-512 * 1024);
      };
      child.stdout.setEncoding('utf8').on('data', collect);
      child.stderr.setEncoding('utf8').on('data', collect);
      const code = await withDeadline(
        new Promise<number | null>((resolve) => child.once('close', resolve)),
        150_000,
        `${suite} on the fetch binding`,
      ).catch((e: unknown) => {
        child.kill('SIGKILL');
        throw e;
      });
      const failing = out
        .split('\n')
        .filter((l) => /^\s*not ok /.test(l))
        .join('\n');
      assert.equal(
        code,
        0,
        `${suite} failed on the fetch binding:\n${failing}\n--- tail ---\n${out.slice(-6000)}`,
      );
      const pass = Number(/^# pass (\d+)$/m.exec(out)?.[1] ?? 0);
      const fail = Number(/^# fail (\d+)$/m.exec(out)?.[1] ?? -1);
      const skipped = Number(/^# skipped (\d+)$/m.exec(out)?.[1] ?? -1);
      assert.equal(fail, 0);
      // Exit 0 also happens when nothing ran.
      assert.ok(pass >= 1, `no test of ${suite} passed:\n${out.slice(-3000)}`);
      assert.equal(skipped, NODE_ONLY_SKIPS[suite] ?? 0, `unexpected skips:\n${out.slice(-3000)}`);
    });
  }
}
