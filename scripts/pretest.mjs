// `npm test`'s pretest: the conformance and interop tools (scripts/install-tools.mjs) and the build
// (tsc, then the `sluice` command's bundle: scripts/bundle-cli.mjs) side by side. The installs mostly
// wait on the registry and the disk (about 45 s on a fresh clone of this 2-core machine, 2026-12-07)
// and the build mostly computes on one core, and neither reads what the other writes (tools/ is
// outside tsconfig's include): one after the other, their times added up on the way to the first test.
// Either failing fails `npm test`, after both ended.
import { fileURLToPath } from 'node:url';
import { exitCode } from './exit-code.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

const options = { cwd: root, stdio: 'inherit' };
const codes = await Promise.all([
  exitCode(process.execPath, ['scripts/install-tools.mjs'], options),
  (async () => {
    const tsc = await exitCode(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'],
      options,
    );
    return tsc !== 0 ? tsc : exitCode(process.execPath, ['scripts/bundle-cli.mjs'], options);
  })(),
]);
const failed = codes.find((c) => c !== 0);
if (failed !== undefined) process.exit(failed);
