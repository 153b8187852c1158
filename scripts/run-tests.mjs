// `npm test`: lint, then every compiled test file under dist/test with node's own runner.
// The build runs first (npm's pretest). Each test file bounds its own waits; the global
// --test-timeout is a last line of defence so a hang can never stall CI.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

run(process.execPath, ['node_modules/@biomejs/biome/bin/biome', 'check', 'src', 'test', 'bench', 'scripts']);
const only = process.argv.slice(2);

/**
 * The compiled test files: `*.test.js` only. Given a directory, node's runner (20.x) also runs every
 * other `.js` file under a `test/` folder — the helpers, each counted as one passing test of its own.
 */
function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.js') ? [join(dir, e.name)] : [],
    )
    .sort();
}

run(process.execPath, [
  // Memory assertions (no growth after hostile input, bounded caches) call gc() first.
  '--expose-gc',
  '--test',
  '--test-reporter=spec',
  // Three files at once on a 2-core machine: most files wait on child processes and sockets more
  // than they compute (measured: 8.4 min against 9.8 min with two).
  '--test-concurrency=3',
  '--test-timeout=420000',
  ...(only.length > 0 ? only : testFiles('dist/test')),
]);
