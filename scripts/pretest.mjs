// `npm test`'s pretest: the build (tsc, then the `sluice` command's bundle: scripts/bundle-cli.mjs).
// The conformance and interop tools (scripts/install-tools.mjs) are installed by scripts/run-tests.mjs
// beside the first test files: the installs mostly wait on the registry (about 40 s on a fresh clone of
// this 2-core machine, 2026-12-07) while the build takes about 8, so here they delayed every test by
// half a minute; there only the files that need the tools wait for them.
import { fileURLToPath } from 'node:url';
import { exitCode } from './exit-code.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

const options = { cwd: root, stdio: 'inherit' };
const tsc = await exitCode(
  process.execPath,
  ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'],
  options,
);
const code = tsc !== 0 ? tsc : await exitCode(process.execPath, ['scripts/bundle-cli.mjs'], options);
if (code !== 0) process.exit(code);
