/**
 * scripts/test-preload.cjs, which `npm test` loads into every test file's process: node:test's own
 * async hook is never enabled (no init and no destroy hook exists while tests run, so no promise is
 * tracked), yet a test declared in a describe() body still belongs to its suite, runs after the
 * suite's before() and fails the run when it fails. Each case runs a small test file in a child.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runChildTests } from '../helpers/child-tests.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-preload-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const PRELOAD = join(repoRoot(), 'scripts', 'test-preload.cjs');

const FIXTURE = `
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { before, describe, test } from 'node:test';
const hooks = createRequire(import.meta.url)('internal/async_hooks');
let ready = false;
describe('a suite', () => {
  before(async () => { await new Promise((r) => setTimeout(r, 20)); ready = true; });
  test('a test in it', async () => {
    await Promise.resolve();
    assert.equal(ready, true, 'the suite ran its before() first');
    assert.equal(hooks.destroyHooksExist(), false, 'no destroy hook');
    assert.equal(hooks.initHooksExist(), false, 'no init hook');
  });
  test('a failing test in it', { skip: !process.env.FAIL }, () => assert.fail('fails'));
});
`;

async function run(name: string, preload: boolean, env: NodeJS.ProcessEnv = {}) {
  const file = join(dir, `${name}.test.mjs`);
  writeFileSync(file, FIXTURE);
  const args = ['--expose-internals', ...(preload ? ['--require', PRELOAD] : [])];
  return runChildTests(process.execPath, [file], { label: name, ms: 20_000, args, env });
}

test('with the preload: no async hook, and the suite still holds its tests', async () => {
  const r = await run('with', true);
  assert.equal(r.code, 0, r.out);
  assert.equal(r.pass, 1, r.out);
  // The TAP report nests the test under its suite.
  assert.match(r.out, /^# Subtest: a suite\n {4}# Subtest: a test in it\n {4}ok 1 - a test in it/m);
});

test('with the preload, a failing test still fails the run', async () => {
  const r = await run('failing', true, { FAIL: '1' });
  assert.notEqual(r.code, 0, r.out);
  assert.equal(r.fail, 1, r.out);
});

test('without it, node:test enables its hook (what the preload removes)', async () => {
  const r = await run('without', false);
  assert.notEqual(r.code, 0, r.out);
  assert.match(r.out, /no destroy hook/);
});
