// `npm test`'s pretest: the conformance and interop tools (scripts/install-tools.mjs) and the build
// (tsc) side by side. The installs mostly wait on the registry and the disk (about 45 s on a fresh
// clone of this 2-core machine, 2026-12-07) and the build mostly computes on one core, and neither
// reads what the other writes (tools/ is outside tsconfig's include): one after the other, their
// times added up on the way to the first test. Either failing fails `npm test`, after both ended.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function exitCode(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit' });
    child.once('error', () => resolve(1));
    child.once('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

const codes = await Promise.all([
  exitCode(['scripts/install-tools.mjs']),
  exitCode(['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json']),
]);
const failed = codes.find((c) => c !== 0);
if (failed !== undefined) process.exit(failed);
