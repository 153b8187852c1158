/**
 * docs/authorization.md "End to end on one machine", run as written: the ```js authorization server is read from
 * the document and run with node (on a free port instead of 4000), the ```sh commands are run with the
 * document's URLs pointed at the test's ports (and without `--open`: the test is the browser, a headless user
 * agent that follows oidc-provider's development login and consent pages). A change to the document is a change
 * to what this test runs.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import { HeadlessBrowser } from '../helpers/headless-browser.js';
import { reapWithMe } from '../helpers/reaper.js';
import { repoRoot, type SpawnedServe, spawnListening } from '../helpers/spawn-serve.js';

const SECTION = '\n## End to end on one machine\n';
const cli = join(repoRoot(), 'dist', 'src', 'cli', 'main.js');

function recipe(): { as: string; commands: string[] } {
  const doc = readFileSync(join(repoRoot(), 'docs', 'authorization.md'), 'utf8');
  const start = doc.indexOf(SECTION);
  if (start < 0) throw new Error('docs/authorization.md has no "End to end on one machine" section');
  const block = (fence: string): string => {
    const open = doc.indexOf(`\`\`\`${fence}\n`, start);
    const close = doc.indexOf('\n```', open + 1);
    if (open < 0 || close < 0) throw new Error(`the section has no \`\`\`${fence} block`);
    return doc.slice(open + fence.length + 4, close + 1);
  };
  const commands = block('sh')
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.length > 0);
  return { as: block('js'), commands };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: NodeJS.ProcessEnv, onStderr?: (text: string) => void): Promise<Ran> {
  const child: ChildProcess = spawn(process.execPath, [cli, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    onStderr?.(stderr);
  });
  const done = new Promise<Ran>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return withDeadline(done, 30_000, `sluice ${args.join(' ')}`).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
}

/** Runs the document's authorization server; resolves with its issuer once it prints it. */
async function startAs(script: string): Promise<{ issuer: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  reapWithMe(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-8192);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const issuer = await withDeadline(
    new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /^issuer (http:\/\/127\.0\.0\.1:\d+)$/m.exec(out);
        if (m?.[1] !== undefined) resolve(m[1]);
      });
      void exited.then(() => reject(new Error(`the authorization server exited: ${err}`)));
    }),
    15_000,
    'the documented authorization server printing its issuer',
  ).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return {
    issuer,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await withDeadline(exited, 5000, 'the authorization server exiting');
    },
  };
}

describe('docs/authorization.md: end to end on one machine', () => {
  const { as: asScript, commands } = recipe();
  let dir: string;
  let as: { issuer: string; stop(): Promise<void> };
  let issuer: string;
  let server: SpawnedServe | undefined;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    // Inside the repository, so `import 'oidc-provider'` resolves from its node_modules.
    const scratch = join(repoRoot(), 'dist', 'recipes');
    mkdirSync(scratch, { recursive: true });
    dir = mkdtempSync(join(scratch, 'oauth-'));
    writeFileSync(join(dir, 'as.mjs'), asScript);
    as = await startAs(join(dir, 'as.mjs'));
    issuer = as.issuer;
    env = { ...process.env, XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'sluice-recipe-')) };
  });
  after(async () => {
    await server?.close();
    await as?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (typeof env?.['XDG_CONFIG_HOME'] === 'string')
      rmSync(env['XDG_CONFIG_HOME'], { recursive: true, force: true });
  });

  test('serve, login (the browser logs in and consents), tools, logout', async () => {
    assert.deepEqual(
      commands.map((c) => c.split(' ').slice(0, 2).join(' ')),
      ['sluice serve', 'sluice login', 'sluice tools', 'sluice logout'],
    );
    let endpoint = '';
    const point = (c: string): string[] =>
      c
        .replaceAll('http://127.0.0.1:4000', issuer)
        .replaceAll('http://127.0.0.1:3000/mcp', endpoint)
        .split(' ')
        .slice(1)
        .filter((a) => a !== '--open');
    const [serveLine, loginLine, toolsLine, logoutLine] = commands as [string, string, string, string];
    const serveArgs = point(serveLine);
    serveArgs[serveArgs.indexOf('--port') + 1] = '0';
    server = await spawnListening(process.execPath, [cli, ...serveArgs]);
    endpoint = server.url;

    const browser = new HeadlessBrowser();
    let visiting: Promise<URL> | undefined;
    const login = await run(point(loginLine), env, (text) => {
      const m = /^\s+(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)$/m.exec(text);
      if (m?.[1] === undefined || visiting !== undefined) return;
      const authorizationUrl = new URL(m[1]);
      const redirectUri = authorizationUrl.searchParams.get('redirect_uri') ?? 'missing redirect_uri';
      visiting = browser.authorize(authorizationUrl, redirectUri).then(async (back) => {
        // The loopback listener of `sluice login` is where the browser lands.
        const answer = await fetch(back);
        await answer.text();
        return back;
      });
      // Observed below; a failure must not go unhandled before that.
      visiting.catch(() => undefined);
    });
    assert.ok(visiting !== undefined, `no authorization URL printed: ${login.stderr}`);
    const back = await visiting;
    assert.equal(login.code, 0, login.stderr);
    assert.ok(back.searchParams.has('code') && back.searchParams.get('iss') === issuer);
    // Two pages submitted: the development login, then the consent.
    assert.equal(
      browser.visited.filter((v) => v.startsWith('POST /interaction/')).length,
      2,
      browser.visited.join(' '),
    );

    const tools = await run(point(toolsLine), env);
    assert.equal(tools.code, 0, tools.stderr);
    assert.match(tools.stdout, /echo/);

    const logout = await run(point(logoutLine), env);
    assert.equal(logout.code, 0, logout.stderr);
    const again = await run(point(toolsLine), env);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /sluice login/);
  });
});
