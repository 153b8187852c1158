// `npm test`: lint, then every compiled test file under dist/test with node's own runner.
// The build runs first (npm's pretest). Each test file bounds its own waits; the global
// --test-timeout is a last line of defence so a hang can never stall CI.
import { spawnSync } from 'node:child_process';

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

run(process.execPath, ['node_modules/@biomejs/biome/bin/biome', 'check', 'src', 'test', 'bench', 'scripts']);
const only = process.argv.slice(2);
run(process.execPath, [
  // Memory assertions (no growth after hostile input, bounded caches) call gc() first.
  '--expose-gc',
  '--test',
  '--test-reporter=spec',
  // Three files at once on a 2-core machine: most files wait on child processes and sockets more
  // than they compute (measured: 8.4 min against 9.8 min with two).
  '--test-concurrency=3',
  '--test-timeout=420000',
  ...(only.length > 0 ? only : ['dist/test/']),
]);
