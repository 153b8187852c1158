// The package as a consumer gets it: `npm pack`, then `npm install <tarball>` into a fresh project in a
// temporary directory, offline: tests reach no registry, so the peers (the SDK, zod), TypeScript and the
// package's own dependencies come from this checkout's installed copies (`file:`, the versions this repo
// tests with), while the tarball itself is installed as a user installs it. From there:
// nothing but the built library, CLI, types, README and LICENSE is shipped and no install script runs;
// both entry points import as ESM and serve + call a tool; their types resolve under tsc (NodeNext) and
// are real (a wrong call does not compile); `npx sluice serve` and `npx sluice call` work.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import { reapWithMe } from '../helpers/reaper.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const root = repoRoot();
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], cwd: string, ms: number): Promise<Result> {
  const child = spawn(cmd, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false' },
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

function manifestOf(dir: string): { dependencies?: Record<string, string> } {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
}

/** `name` as this checkout installed it, for an offline install: `name@file:<its directory>`. */
function local(name: string): string {
  return `${name}@file:${realpathSync(join(root, 'node_modules', name))}`;
}

const CONSUMER_ESM = `
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { z } from 'zod';
import { serve } from 'sluice/server';
import { StreamableHttpClientTransport } from 'sluice/client';

const served = await serve({
  port: 0,
  createServer: () => {
    const s = new McpServer({ name: 'consumer', version: '1.0.0' });
    s.registerTool('shout', { inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: 'text', text: text.toUpperCase() }],
    }));
    return s;
  },
});
const client = new Client({ name: 'consumer-client', version: '1.0.0' });
await client.connect(new StreamableHttpClientTransport(new URL(served.url)));
const result = await client.callTool({ name: 'shout', arguments: { text: 'packed' } });
console.log(result.content[0].text);
await client.close();
await served.close({ graceMs: 100 });
`;

const CONSUMER_TS = `
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpHandler, type McpHandler, UnsupportedServerError } from 'sluice/server';
import { StreamableHttpClientTransport } from 'sluice/client';

const handler: McpHandler = createMcpHandler({ createServer: () => new McpServer({ name: 'x', version: '1' }), maxSessions: 10 });
const transport: StreamableHttpClientTransport = new StreamableHttpClientTransport(new URL('http://127.0.0.1:1/mcp'));
const code: string = new UnsupportedServerError('m').code;
export { code, handler, transport };
`;

/** Must not compile: proves the types are real, not `any`. */
const CONSUMER_TS_WRONG = `
import { createMcpHandler } from 'sluice/server';
export const h = createMcpHandler({ maxSessions: 'many' });
`;

const TSCONFIG = (file: string) =>
  JSON.stringify({
    compilerOptions: {
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
    },
    files: [file],
  });

describe('the packed tarball, installed into a fresh project', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-pack-'));
  const project = join(dir, 'consumer');
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) if (c.exitCode === null && c.pid !== undefined) process.kill(-c.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('pack, install, import, typecheck, npx sluice serve and call', { timeout: 400_000 }, async () => {
    // 1. Pack: only the allowlisted files. The build ran before the tests (pretest): `prepack`
    // would build again, rewriting dist/ under the test files running beside this one.
    const pack = await run(
      npm,
      ['pack', '--json', '--ignore-scripts', '--pack-destination', dir],
      root,
      60_000,
    );
    assert.equal(pack.code, 0, pack.stderr);
    const packed = (JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[])[0];
    assert.ok(packed !== undefined);
    const paths = packed.files.map((f) => f.path);
    const outside = paths.filter(
      (p) => !/^dist\/src\/.+\.(js|d\.ts)$/.test(p) && !['README.md', 'LICENSE', 'package.json'].includes(p),
    );
    assert.deepEqual(outside, [], 'only dist/src JS and types, README, LICENSE, package.json');
    for (const must of [
      'dist/src/server/index.js',
      'dist/src/server/index.d.ts',
      'dist/src/client/index.js',
      'dist/src/cli/main.js',
      'LICENSE',
    ])
      assert.ok(paths.includes(must), must);

    // 2. Install into an empty project, offline: the tarball, and beside it the peers, TypeScript and the
    // package's own dependencies from this checkout's copies (offline, npm resolves a version range only from
    // a cached registry document, which `npm ci` never fetched: ENOTCACHED).
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }),
    );
    const own = Object.keys(manifestOf(root).dependencies ?? {});
    const install = await run(
      npm,
      [
        'install',
        '--offline',
        '--no-audit',
        '--no-fund',
        join(dir, packed.filename),
        ...['@modelcontextprotocol/sdk', 'zod', 'typescript', ...own].map(local),
      ],
      project,
      300_000,
    );
    assert.equal(install.code, 0, install.stderr);
    const installLog = install.stdout + install.stderr;
    assert.doesNotMatch(installLog, /EBADENGINE/, 'every installed package accepts this Node');
    const installed = join(project, 'node_modules', 'sluice');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare'])
      assert.equal(manifest.scripts?.[hook], undefined, `no ${hook} script runs in a consumer's install`);
    assert.ok(!existsSync(join(installed, 'tools')), 'no conformance tooling');
    assert.deepEqual(readdirSync(join(installed, 'dist')), ['src']);

    // 3. ESM import of both entry points, and a real round trip.
    writeFileSync(join(project, 'index.mjs'), CONSUMER_ESM);
    const esm = await run(process.execPath, ['index.mjs'], project, 30_000);
    assert.equal(esm.code, 0, esm.stderr);
    assert.equal(esm.stdout, 'PACKED\n');

    // 4. Types resolve under tsc with NodeNext resolution, and are real.
    writeFileSync(join(project, 'check.ts'), CONSUMER_TS);
    writeFileSync(join(project, 'tsconfig.json'), TSCONFIG('check.ts'));
    const tsc = await run(npx, ['--no-install', 'tsc', '-p', 'tsconfig.json'], project, 120_000);
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);
    writeFileSync(join(project, 'wrong.ts'), CONSUMER_TS_WRONG);
    writeFileSync(join(project, 'tsconfig.wrong.json'), TSCONFIG('wrong.ts'));
    const wrong = await run(npx, ['--no-install', 'tsc', '-p', 'tsconfig.wrong.json'], project, 120_000);
    assert.notEqual(wrong.code, 0);
    assert.match(
      wrong.stdout + wrong.stderr,
      /wrong\.ts\(3,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/,
    );

    // 5. The CLI through npx: serve on a free port, call a demo tool.
    const serveChild = spawn(npx, ['--no-install', 'sluice', 'serve', '--port', '0'], {
      cwd: project,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    reapWithMe(serveChild, 'SIGTERM', true);
    children.push(serveChild);
    let serveOut = '';
    let serveErr = '';
    serveChild.stderr.setEncoding('utf8').on('data', (d: string) => (serveErr += d));
    const url = await withDeadline(
      new Promise<string>((resolve, reject) => {
        serveChild.stdout.setEncoding('utf8').on('data', (d: string) => {
          serveOut += d;
          const m = /^sluice listening on (\S+)$/m.exec(serveOut);
          if (m?.[1] !== undefined) resolve(m[1]);
        });
        serveChild.on('exit', (code) => reject(new Error(`npx sluice serve exited ${code}: ${serveErr}`)));
      }),
      60_000,
      'npx sluice serve: listening line',
    );
    const call = await run(
      npx,
      ['--no-install', 'sluice', 'call', url, 'echo', '--arg', 'text=5'],
      project,
      60_000,
    );
    assert.equal(call.code, 0, call.stderr);
    assert.equal(call.stdout, '5\n');
    const exited = new Promise<number | null>((resolve) => serveChild.on('exit', (code) => resolve(code)));
    if (serveChild.pid !== undefined) process.kill(-serveChild.pid, 'SIGTERM');
    await withDeadline(exited, 20_000, 'npx sluice serve exit after SIGTERM');
  });
});
