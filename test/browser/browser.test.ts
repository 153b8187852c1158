/**
 * Sluice's client in a real browser: the test page (page.ts), bundled by esbuild for the browser, runs in
 * Debian's Chromium (headless, driven by playwright-core) against Sluice's server on another origin, so every
 * POST is a CORS request with a preflight. It connects (reading `Mcp-Session-Id` needs it exposed), lists tools,
 * reindexes with progress rendered into the page, cancels through an AbortSignal, resumes a stream the server
 * closed early, and runs 12 concurrent streaming calls. The page's screenshot goes to
 * test-artifacts/browser.png. Skipped loudly when Chromium is missing (.ci/run installs it).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import { LOOPBACK_ONLY_CHROMIUM_ARGS } from '../helpers/chromium-args.js';
import { withDeadline } from '../helpers/deadline.js';
import { startV2Server, type V2Server } from '../helpers/sdk-v2-server.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const CHROMIUM = process.env['SLUICE_CHROMIUM'] ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
const DEADLINE_MS = 60_000;
/** Chromium's limit of simultaneous HTTP/1.1 connections per host (and profile). */
const HTTP1_CONNECTIONS_PER_HOST = 6;

if (!available) {
  console.warn(
    `# browser.test: SKIPPED LOUDLY: no Chromium at ${CHROMIUM} (apt-get install chromium; .ci/run does)`,
  );
}

/**
 * The bundling config docs/client.md shows: platform browser (so esbuild honours package.json's `browser` map,
 * which swaps the Node HTTP adapter for the fetch one), ESM, everything bundled.
 */
async function bundle(entry: string): Promise<{ code: string; inputs: string[] }> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.text ?? '';
  return { code, inputs: Object.keys(result.metafile.inputs) };
}

const PAGE_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Sluice client in the browser</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 16px; width: 860px; }
h1 { font-size: 18px; margin: 0 0 8px; }
.row { display: flex; gap: 8px; align-items: center; margin: 2px 0; }
.label { width: 110px; } progress { width: 300px; } .note { color: #444; font-size: 12px; }
#log { margin-top: 10px; font: 12px monospace; white-space: pre-wrap; }
</style></head>
<body><h1>sluice/client in Chromium: <span id="status">loading</span></h1>
<div id="bars"></div><div id="log"></div>
<script type="module" src="/page.js"></script></body></html>`;

/** Serves the test page and its bundle from their own origin. */
async function startPageServer(script: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url === '/page.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(script);
    } else {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(PAGE_HTML);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

interface Timeline {
  index: number;
  firstProgress: number | undefined;
  ended: number | undefined;
  progress: number;
}

/** The most calls that were streaming progress at the same moment (from first progress to result). */
function maxOverlap(timelines: Timeline[]): number {
  const edges: [number, number][] = [];
  for (const t of timelines) {
    if (t.firstProgress === undefined || t.ended === undefined) continue;
    edges.push([t.firstProgress, 1], [t.ended, -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of edges) {
    now += d;
    max = Math.max(max, now);
  }
  return max;
}

describe('sluice/client bundled for the browser, in Chromium', {
  skip: available ? false : 'no Chromium',
}, () => {
  let browser: BrowserContext | undefined;
  let page: Page;
  let pageServer: Server | undefined;
  let served: Served | undefined;
  let profile: string | undefined;
  let mcpUrl: string;
  let bundleInputs: string[] = [];
  let bundleCode = '';
  let h2: Served | undefined;
  let v2: V2Server | undefined;
  let h2Skip = '';
  const requests: { method: string; url: string; headers: Record<string, string>; body: string }[] = [];

  before(async () => {
    const built = await bundle(join(root, 'dist/test/browser/page.js'));
    bundleInputs = built.inputs;
    bundleCode = built.code;
    const page0 = await startPageServer(built.code);
    pageServer = page0.server;
    served = await serve({
      createServer: () => createDemoServer(),
      port: 0,
      host: '127.0.0.1',
      allowedOrigins: [page0.origin],
    });
    mcpUrl = served.url;
    v2 = await startV2Server(page0.origin);
    ({ served: h2, skip: h2Skip } = await startHttp2(page0.origin));
    profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
    // A fresh profile directory per run (Playwright's persistent context is how it takes --user-data-dir).
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      viewport: { width: 900, height: 1100 },
      // The HTTP/2 server below uses a throwaway self-signed certificate.
      ignoreHTTPSErrors: true,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', ...LOOPBACK_ONLY_CHROMIUM_ARGS],
      timeout: DEADLINE_MS,
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('request', (r) => {
      requests.push({ method: r.method(), url: r.url(), headers: r.headers(), body: r.postData() ?? '' });
    });
    await page.goto(page0.origin, { timeout: DEADLINE_MS });
    await page.waitForFunction(() => 'sluiceTest' in window, undefined, { timeout: DEADLINE_MS });
  });

  after(async () => {
    if (page !== undefined) {
      mkdirSync(join(root, 'test-artifacts'), { recursive: true });
      await page
        .screenshot({ path: join(root, 'test-artifacts/browser.png'), fullPage: true })
        .catch(() => {});
      await page.evaluate(() =>
        (window as never as { sluiceTest: { close(): Promise<void> } }).sluiceTest.close(),
      );
    }
    await browser?.close();
    await served?.close();
    await h2?.close();
    await v2?.close();
    await new Promise<void>((resolve) => (pageServer ? pageServer.close(() => resolve()) : resolve()));
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  });

  const call = <T>(fn: string, ...args: unknown[]): Promise<T> =>
    withDeadline(
      page.evaluate(
        ([name, params]) =>
          (window as never as Record<string, Record<string, (...a: unknown[]) => Promise<unknown>>>)[
            'sluiceTest'
          ]?.[name as string]?.(...(params as unknown[])),
        [fn, args] as const,
      ) as Promise<T>,
      DEADLINE_MS,
      `page ${fn}`,
    );

  test('the bundle uses the fetch adapter and contains no Node built-in', () => {
    assert.ok(
      bundleInputs.some((f) => f.endsWith('src/client/http-default.browser.js')),
      'browser map honoured',
    );
    assert.deepEqual(
      bundleInputs.filter((f) => /src\/client\/http-(node|default\.js)/.test(f)),
      [],
      'no Node adapter in the bundle',
    );
    assert.doesNotMatch(bundleCode, /(from|import\()\s*["'](node:)?(http|https|net|zlib|stream|crypto)["']/);
  });

  test('connects cross-origin (CORS preflight) and reads the exposed Mcp-Session-Id', async () => {
    const info = await call<{ sessionId?: string; protocolVersion?: string }>('connect', mcpUrl);
    assert.ok(
      info.sessionId,
      'Mcp-Session-Id readable in the page: exposed by Access-Control-Expose-Headers',
    );
    assert.equal(info.protocolVersion, '2025-11-25');
    const tools = await call<string[]>('listTools');
    assert.ok(tools.includes('reindex') && tools.includes('test_reconnection'));
    // The standalone GET stream opened after initialization (cross-origin too).
    assert.ok(requests.some((r) => r.method === 'GET' && r.url === mcpUrl && r.headers['mcp-session-id']));
  });

  test('reindex: every progress update is rendered into the page', async () => {
    const r = await call<{ text: string; updates: number; last: number }>('reindex', 200, 2);
    assert.equal(r.text, 'reindexed 200 docs');
    assert.equal(r.last, 200);
    assert.ok(r.updates > 0 && r.updates <= 200);
    assert.equal(await page.locator('progress').first().getAttribute('max'), '200');
  });

  test('cancel: aborting the AbortSignal rejects the call and tells the server (notifications/cancelled)', async () => {
    const r = await call<{ error: string; seen: number }>('cancel', 5);
    assert.equal(r.seen, 5);
    assert.match(r.error, /cancelled by the page/);
    assert.ok(
      requests.some((x) => x.method === 'POST' && x.body.includes('"notifications/cancelled"')),
      'the 2025-era cancellation was POSTed',
    );
  });

  test('resume: a stream the server closed early is resumed with Last-Event-ID and the result arrives', async () => {
    const text = await call<string>('resume');
    assert.match(text, /Reconnection test completed/);
    assert.ok(
      requests.some((r) => r.method === 'GET' && r.headers['last-event-id'] !== undefined),
      'a GET with Last-Event-ID resumed the stream',
    );
  });

  test('12 concurrent streaming calls over HTTP/1.1 all finish; at most six stream at once', async () => {
    const timelines = await call<Timeline[]>('concurrent', 12, 30, 20);
    assert.equal(timelines.length, 12);
    for (const t of timelines) {
      assert.equal(t.progress, 30, `call ${t.index} saw all its progress`);
      assert.ok(t.ended !== undefined);
    }
    // Chromium opens at most six HTTP/1.1 connections per host; each streaming call holds one for its whole
    // response, and the standalone GET stream holds another, so the others queue inside the browser until a
    // connection frees up (docs/client.md, "Six connections").
    const overlap = maxOverlap(timelines);
    console.log(`# browser.test: HTTP/1.1, 12 calls, at most ${overlap} streamed concurrently`);
    assert.ok(overlap >= 1 && overlap <= HTTP1_CONNECTIONS_PER_HOST, `overlap ${overlap}`);
  });

  // SDK v2's Client does not add Mcp-Param-* headers in a browser (it checks its environment); the v2 server
  // rejects a call without them. Sluice's transport adds them from the tools/list it carried.
  test('SDK v2 Client in the page, 2026-07-28 era against SDK v2 server: headers added by the transport', async () => {
    const region = 'Zürich';
    const r = await call<{ era: string; text: string }>('v2Echo', v2?.url, region);
    assert.equal(r.era, 'modern');
    assert.equal(r.text, `from the browser|${region}`);
    const sent = v2?.log
      .filter((x) => x.method === 'POST' && x.headers['mcp-method'] === 'tools/call')
      .at(-1);
    assert.equal(sent?.headers['mcp-param-region'], `=?base64?${Buffer.from(region).toString('base64')}?=`);
    assert.equal(sent?.headers['mcp-session-id'], undefined);
    assert.equal(sent?.headers.origin, new URL(page.url()).origin, 'a cross-origin request from the page');
  });

  test('12 concurrent streaming calls over HTTP/2 all stream at once', async (t) => {
    if (h2 === undefined) {
      console.warn(`# browser.test: HTTP/2 part SKIPPED LOUDLY: ${h2Skip}`);
      t.skip(h2Skip);
      return;
    }
    await call('connect', h2.url);
    const timelines = await call<Timeline[]>('concurrent', 12, 40, 25);
    for (const tl of timelines) assert.equal(tl.progress, 40);
    const overlap = maxOverlap(timelines);
    console.log(`# browser.test: HTTP/2, 12 calls, ${overlap} streamed concurrently`);
    // One connection, one stream per call: nothing queues in the browser.
    assert.equal(overlap, 12);
  });
});

/**
 * Starts Sluice over TLS + HTTP/2 when `serve()` supports it (`serve({ tls, http2: true })`); otherwise says
 * why not. Unknown options are ignored by older `serve()`s, so support is read off the URL it reports.
 */
async function startHttp2(origin: string): Promise<{ served: Served | undefined; skip: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-h2-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const tls = {
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
    };
    const options = {
      createServer: () => createDemoServer(),
      port: 0,
      host: '127.0.0.1',
      allowedOrigins: [origin],
      tls,
      http2: true,
    };
    let s: Served;
    try {
      s = await serve(options as Parameters<typeof serve>[0]);
    } catch (error) {
      return { served: undefined, skip: `serve() refused http2: ${String(error)}` };
    }
    if (!s.url.startsWith('https:')) {
      await s.close();
      return {
        served: undefined,
        skip: 'serve() does not support { tls, http2: true } yet (it served plain HTTP/1.1)',
      };
    }
    return { served: s, skip: '' };
  } catch (error) {
    return { served: undefined, skip: `could not set up TLS: ${String(error)}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
