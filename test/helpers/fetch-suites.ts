/**
 * Runs server integration suites, unchanged, against the fetch binding under Node: each suite file
 * runs in a child with SLUICE_TEST_BINDING=fetch, which makes startServer() serve createFetchHandler
 * through a node:http ↔ Request/Response adapter (test/helpers/fetch-adapter.ts) instead of
 * serve(). One test (one child) per suite, so each has its own deadline and a failure names it;
 * the suites are spread over test/integration/fetch-binding-*.test.ts so that no file runs longer
 * than the runner's per-file timeout on a loaded machine.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertChildPassed, runChildTests } from './child-tests.js';
import { repoRoot } from './spawn-serve.js';

/**
 * node:http-only tests each suite skips on this binding (socket timeouts, diagnostics channels; in
 * server-post, the two `Expect: 100-continue` cases: a fetch handler never sees the interim answer).
 */
const NODE_ONLY_SKIPS: Record<string, number> = { 'server-ops': 2, 'server-post': 2 };

export function fetchSuites(suites: readonly string[]): void {
  for (const suite of suites) {
    test(`${suite} passes against createFetchHandler (SLUICE_TEST_BINDING=fetch)`, async () => {
      const file = join(repoRoot(), 'dist', 'test', 'integration', `${suite}.test.js`);
      const run = await runChildTests(process.execPath, [file], {
        label: `${suite} on the fetch binding`,
        ms: 150_000,
        env: { SLUICE_TEST_BINDING: 'fetch' },
      });
      assertChildPassed(run, `${suite} on the fetch binding`, 1);
      assert.equal(run.skipped, NODE_ONLY_SKIPS[suite] ?? 0, `unexpected skips:\n${run.out.slice(-3000)}`);
    });
  }
}
