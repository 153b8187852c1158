// The README's install lines for today (Sluice is not on the npm registry yet), run as written: `npm pack` in
// this checkout writes the tarball the README names, and the README's `npm install <tarball>
// @modelcontextprotocol/sdk zod` into an empty project gives a package whose `sluice/server` and
// `sluice/client` import, whose `npx sluice --version` answers, and (where Deno runs) whose `npm:sluice/fetch`
// Deno resolves from the project's node_modules. Offline: the peers are taken from this checkout's installed
// copies (`file:`), so the test needs no registry; the tarball itself is installed as a user installs it.
// Within about a minute (test/integration/package-install.test.ts is the full consumer test: types, serve and call).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const root = repoRoot();
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
};

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], cwd: string, ms: number): Promise<Result> {
  const child = spawn(cmd, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false', DENO_NO_UPDATE_CHECK: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<Result>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return withDeadline(done, ms, `${cmd} ${args.join(' ')}`).catch((e: unknown) => {
    child.kill('SIGKILL');
    throw e;
  });
}

/** The README's `sh` lines for today's install: the pack line and the install line. */
function readmeInstallLines(): { pack: string; install: string[] } {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const tarball = `${pkg.name}-${pkg.version}.tgz`;
  const pack = readme.split('\n').find((l) => /\bnpm pack\b/.test(l) && l.includes(tarball));
  assert.ok(pack !== undefined, `the README's pack line names ${tarball} (the version in package.json)`);
  const line = readme.split('\n').find((l) => /npm install \S+\.tgz /.test(l));
  assert.ok(line !== undefined, 'the README has an install line for the tarball');
  const command = line.slice(line.indexOf('npm install ')).split('#')[0]?.trim() ?? '';
  const words = command.split(/\s+/).slice(2);
  assert.ok(words[0]?.endsWith(`/${tarball}`), `the install line installs ${tarball}: ${command}`);
  assert.ok(readme.includes('npx sluice --version'), 'the README shows npx sluice --version');
  assert.match(
    readme,
    /After publication on the npm registry \(not yet\): `npm install sluice @modelcontextprotocol\/sdk zod`/,
    'the registry line is kept, marked as for after publication',
  );
  return { pack, install: words };
}

describe('installing Sluice today, as the README says', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-install-'));
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('npm pack, npm install <tarball> @modelcontextprotocol/sdk zod, import, npx sluice --version, Deno npm:', {
    timeout: 120_000,
  }, async (t) => {
    const { install } = readmeInstallLines();
    assert.ok(
      existsSync(join(root, 'dist', 'src', 'cli', 'main.js')),
      'built (npm run build) before packing',
    );
    // The README's `npm pack` builds first (prepack); here the build ran before the tests (pretest),
    // and building again would rewrite dist/ under the test files running beside this one.
    const pack = await run(
      npm,
      ['pack', '--json', '--ignore-scripts', '--pack-destination', dir],
      root,
      60_000,
    );
    assert.equal(pack.code, 0, pack.stderr);
    const tarball = (JSON.parse(pack.stdout) as { filename: string }[])[0]?.filename;
    assert.equal(tarball, `${pkg.name}-${pkg.version}.tgz`);

    // The README's install line, in an empty project next to the tarball: the tarball as written, the peers
    // from this checkout's installed copies instead of the registry, and so the package's own dependencies
    // (jose): offline, npm resolves a range only from a cached registry document, which `npm ci` on a
    // fresh machine never fetched (ENOTCACHED), and tests reach no registry.
    const project = join(dir, 'my-project');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'my-project', version: '1.0.0', private: true, type: 'module' }),
    );
    const local = (name: string) => `${name}@file:${realpathSync(join(root, 'node_modules', name))}`;
    const args = install.map((word) => {
      if (word.endsWith('.tgz')) return join(dir, tarball ?? '');
      if (word === '@modelcontextprotocol/sdk' || word === 'zod') return local(word);
      return word;
    });
    assert.deepEqual(
      install.slice(1),
      ['@modelcontextprotocol/sdk', 'zod'],
      'the README installs the peers the package needs',
    );
    const own = Object.keys(pkg.dependencies ?? {}).filter((name) => !install.includes(name));
    const installed = await run(
      npm,
      ['install', '--offline', '--no-audit', '--no-fund', ...args, ...own.map(local)],
      project,
      60_000,
    );
    assert.equal(installed.code, 0, installed.stdout + installed.stderr);

    writeFileSync(
      join(project, 'check.mjs'),
      [
        "import { createMcpHandler, serve } from 'sluice/server';",
        "import { StreamableHttpClientTransport } from 'sluice/client';",
        'console.log([createMcpHandler, serve, StreamableHttpClientTransport].map((f) => typeof f).join(" "));',
      ].join('\n'),
    );
    const imported = await run(process.execPath, ['check.mjs'], project, 30_000);
    assert.equal(imported.code, 0, imported.stderr);
    assert.equal(imported.stdout, 'function function function\n');

    const version = await run(npx, ['--no-install', 'sluice', '--version'], project, 30_000);
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout, `sluice ${pkg.version}\n`);

    const deno = join(root, 'node_modules', '.bin', 'deno');
    if (!existsSync(deno)) {
      process.stderr.write(
        '\n*** SKIPPED the Deno npm: import: node_modules/.bin/deno is missing (run npm ci)\n\n',
      );
      t.diagnostic('SKIPPED the Deno npm: import: no deno binary');
      return;
    }
    writeFileSync(
      join(project, 'deno.mjs'),
      "import { createFetchHandler } from 'npm:sluice/fetch';\nconsole.log(typeof createFetchHandler);\n",
    );
    const denoRun = await run(deno, ['run', '--allow-all', '--no-prompt', 'deno.mjs'], project, 60_000);
    assert.equal(denoRun.code, 0, denoRun.stderr);
    assert.equal(denoRun.stdout, 'function\n');
  });
});
