/**
 * Sluice behind a real HAProxy and a real Caddy (docs/deploy.md "HAProxy" and "Caddy"), each
 * running the document's block as written (its addresses pointed at the test's ports; Caddy also
 * gets a global options block turning off its admin endpoint and automatic HTTPS): progress arrives
 * event by event, compression leaves the stream alone, keepalive comments hold a quiet call open
 * under a short idle timeout, and with keepalive off the stream is cut at the proxy and resumed. The
 * negative control shows what the one HAProxy line that is easy to miss is for. Each also serves
 * HTTP/2 over TLS to a node:http2 client (the block with its TLS line added), events one by one.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { renderText } from '../../src/doctor/report.js';
import { runDoctor } from '../../src/doctor/run.js';
import { McpSession } from '../../src/doctor/session.js';
import type { Served } from '../../src/server/index.js';
import { makeCert, type TestCert } from '../helpers/certs.js';
import { withDeadline } from '../helpers/deadline.js';
import { H2Session } from '../helpers/h2-client.js';
import { startUpstream } from '../helpers/nginx.js';
import {
  CADDY_TEST_GLOBALS,
  docBlock,
  type ProxyKind,
  pointBlock,
  type RunningProxy,
  skipWithoutCaddy,
  skipWithoutHaproxy,
  startProxy,
} from '../helpers/proxies.js';
import {
  assertCutThenResumed,
  assertIncremental,
  callTool,
  clumped,
  progressTimes,
  resultTime,
} from '../helpers/stream-checks.js';

const HAPROXY = docBlock('deploy.md', '## HAProxy', 'haproxy');
const CADDY = docBlock('deploy.md', '## Caddy', 'caddy');

const running: (Served | RunningProxy)[] = [];
after(async () => {
  for (const r of running.splice(0).reverse()) {
    if ('stop' in r) await r.stop();
    else await r.close();
  }
});

/** An upstream with `kind` in front of it running `block`; a session initialized and warmed through it. */
async function through(
  kind: ProxyKind,
  block: string,
  serverOptions: Parameters<typeof startUpstream>[0],
): Promise<{ proxy: RunningProxy; session: McpSession }> {
  const upstream = await startUpstream(serverOptions);
  running.push(upstream);
  const proxy = await startProxy(kind, (port) => {
    const pointed = pointBlock(block, [upstream.port], port);
    return kind === 'caddy' ? `${CADDY_TEST_GLOBALS}${pointed}` : pointed;
  });
  running.push(proxy);
  const session = new McpSession(proxy.url);
  const init = await withDeadline(session.initialize(), 5_000, `initialize through ${kind}`);
  assert.equal(init.status, 200, `initialize through ${kind}: ${init.status} ${init.text}\n${proxy.log()}`);
  const echo = await withDeadline(
    session.call('tools/call', { name: 'echo', arguments: { text: 'hi' } }),
    5_000,
    'echo',
  );
  assert.deepEqual(echo.result, { content: [{ type: 'text', text: 'hi' }] });
  return { proxy, session };
}

/** A certificate for 127.0.0.1 (openssl: .ci/run installs it), removed after the file's tests. */
function testCert(): TestCert {
  const cert = makeCert();
  assert.ok(typeof cert !== 'string', String(cert));
  after(() => cert.remove());
  return cert;
}

/**
 * The documented block of `kind`, made to serve TLS by `tls` (given the block pointed at the test's ports),
 * in front of an upstream; a node:http2 client (which speaks only h2) calls `reindex` through it: 10 progress
 * events 100 ms apart arrive one by one, uncompressed, then the result.
 */
async function assertIncrementalOverH2(
  kind: ProxyKind,
  cert: TestCert,
  tls: (pointed: string) => string,
): Promise<void> {
  const upstream = await startUpstream({ keepaliveMs: 500 });
  running.push(upstream);
  const proxy = await startProxy(kind, (port) => {
    const config = tls(pointBlock(kind === 'caddy' ? CADDY : HAPROXY, [upstream.port], port));
    return kind === 'caddy' ? `${CADDY_TEST_GLOBALS}${config}` : config;
  });
  running.push(proxy);
  const s = new H2Session(`https://127.0.0.1:${proxy.port}/mcp`, cert.cert);
  try {
    await s.init();
    assert.equal(s.client.alpnProtocol, 'h2');
    const call = {
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: {
        name: 'reindex',
        arguments: { corpus: 'h2', docs: 10, delayMs: 100 },
        _meta: { progressToken: 'p' },
      },
    };
    const r = await s.post(call);
    await withDeadline(r.done, 10_000, `reindex over h2 through ${kind}`);
    assert.equal(r.status, 200, `${r.text}\n${proxy.log()}`);
    assert.equal(r.headers['content-type'], 'text/event-stream');
    assert.equal(r.headers['content-encoding'], undefined);
    const messages = r.messages();
    assert.equal(messages.filter((m) => m.method === 'notifications/progress').length, 10);
    assert.ok(
      messages.some((m) => m.id === 5 && m.result !== undefined),
      r.text,
    );
    // One arrival per event (10 progress, the result), spread over the ~1 s of work, not clumped.
    const times = r.arrivals.map((a) => a - (r.arrivals[0] ?? 0));
    const detail = `${kind} over h2: arrivals at [${times.join(', ')}] ms`;
    assert.equal(times.length, 11, detail);
    assert.ok((times.at(-1) ?? 0) >= 800, detail);
    assert.ok(clumped(times) <= 2, detail);
  } finally {
    s.close();
  }
}

/** The control for Caddy: the documented block with `encode` on the whole site, /mcp included. */
function caddyEncodingAll(): string {
  return edit(CADDY, /^\s*@compressible .*\n(\s*)encode @compressible /m, '$1encode ');
}

/** The block with a directive's value changed; fails when the block has no such line. */
function edit(block: string, from: RegExp, to: string): string {
  assert.match(block, from, `the documented block has ${from}`);
  return block.replace(from, to);
}

describe('HAProxy in front of sluice (docs/deploy.md "HAProxy")', () => {
  test('the block as written: progress event by event, the stream not compressed', async (t) => {
    if (skipWithoutHaproxy(t)) return;
    const { session } = await through('haproxy', HAPROXY, { keepaliveMs: 500 });
    const x = await assertIncremental(session, 'haproxy');
    assert.equal(x.headers.get('content-encoding'), null);
    assert.equal(x.headers.get('cache-control'), 'no-cache, no-transform');
  });

  test('HTTP/2 from the client (the bind with ssl and alpn h2): progress event by event on h2, not compressed', async (t) => {
    if (skipWithoutHaproxy(t)) return;
    const cert = testCert();
    // HAProxy reads the certificate and its key from one PEM file.
    const pem = join(dirname(cert.certFile), 'haproxy.pem');
    writeFileSync(pem, Buffer.concat([cert.cert, cert.key]));
    await assertIncrementalOverH2('haproxy', cert, (pointed) =>
      edit(pointed, /^(\s*bind \S+)$/m, `$1 ssl crt ${pem} alpn h2,http/1.1`),
    );
  });

  test('without `option http-no-delay`: the events arrive in clumps (the control)', async (t) => {
    if (skipWithoutHaproxy(t)) return;
    const block = edit(HAPROXY, /^\s*option\s+http-no-delay.*\n/m, '');
    const { session } = await through('haproxy', block, { keepaliveMs: 15_000 });
    const x = await callTool(session, 'reindex', { corpus: 'c', docs: 10, delayMs: 100 }, 7);
    await withDeadline(x.done, 10_000, 'reindex stream end');
    const times = progressTimes(x);
    assert.equal(times.length, 10);
    // Sent 100 ms apart; held by the kernel while HAProxy says more is coming (MSG_MORE).
    assert.ok(clumped(times) >= 4, `clumps: [${times.map((v) => v.toFixed(0)).join(', ')}] ms`);
  });

  test('sluice doctor: ok through the block as written; without `option http-no-delay` it warns of clumps and names the line', async (t) => {
    if (skipWithoutHaproxy(t)) return;
    for (const [block, expected] of [
      [HAPROXY, 'ok'],
      [edit(HAPROXY, /^\s*option\s+http-no-delay.*\n/m, ''), 'warn'],
    ] as const) {
      const { proxy } = await through('haproxy', block, { keepaliveMs: 1_000 });
      const report = await withDeadline(runDoctor({ url: proxy.url, quick: true }), 60_000, 'doctor run');
      const text = renderText(report);
      const buffering = report.verdicts.find((v) => v.id === 'buffering');
      assert.equal(buffering?.status, expected, text);
      if (expected === 'warn') {
        assert.match(buffering?.reason ?? '', /arrived in clumps/);
        // Held writes are the path's habit: the confirming second run clumps too.
        assert.match(String(buffering?.details?.['secondRun']), /arrived in clumps/, text);
        assert.match(text, /fix \(HAProxy\): `option http-no-delay`/);
      }
    }
  });

  test('sluice doctor: `timeout server 2s` and no keepalive: the idle check fails and names the HAProxy fix', async (t) => {
    if (skipWithoutHaproxy(t)) return;
    let block = edit(HAPROXY, /timeout client {2}1h/, 'timeout client  2s');
    block = edit(block, /timeout server {2}1h/, 'timeout server  2s');
    const { proxy } = await through('haproxy', block, { keepaliveMs: 0 });
    const report = await withDeadline(runDoctor({ url: proxy.url, idleSeconds: 4 }), 60_000, 'doctor run');
    const text = renderText(report);
    assert.equal(report.verdicts.find((v) => v.id === 'idle')?.status, 'fail', text);
    assert.match(text, /fix \(HAProxy\): `timeout server` and `timeout client` above the server keepalive/);
  });

  test('compression on for text/event-stream: HAProxy honours no-transform, events still one by one', async (t) => {
    if (skipWithoutHaproxy(t)) return;
    const block = edit(
      HAPROXY,
      /^(\s*timeout connect.*\n)/m,
      '$1  compression algo gzip\n  compression type text/event-stream application/json\n',
    );
    const { session } = await through('haproxy', block, { keepaliveMs: 15_000 });
    const x = await assertIncremental(session, 'haproxy with compression');
    assert.equal(x.headers.get('content-encoding'), null);
  });

  test('timeout server and client 2s: keepalive comments hold a 4 s quiet call open', async (t) => {
    if (skipWithoutHaproxy(t)) return;
    let block = edit(HAPROXY, /timeout client {2}1h/, 'timeout client  2s');
    block = edit(block, /timeout server {2}1h/, 'timeout server  2s');
    const { session, proxy } = await through('haproxy', block, { keepaliveMs: 500 });
    const x = await callTool(session, 'sleep', { ms: 4_000 }, 8);
    await withDeadline(x.done, 10_000, 'sleep stream end');
    const end = resultTime(x, 8);
    assert.ok(end !== undefined, `the result arrived (error: ${x.error}); log:\n${proxy.log()}`);
    assert.ok(end >= 3_900, `result after the sleep (${end.toFixed(0)} ms)`);
    assert.equal(x.error, undefined);
  });

  test('keepalive off, timeouts 1s: the quiet stream is cut at the proxy; Last-Event-ID resumes it, the result once', async (t) => {
    if (skipWithoutHaproxy(t)) return;
    let block = edit(HAPROXY, /timeout client {2}1h/, 'timeout client  1s');
    block = edit(block, /timeout server {2}1h/, 'timeout server  1s');
    const { session } = await through('haproxy', block, { keepaliveMs: 0, mode: 'sse' });
    await assertCutThenResumed(session, 'HAProxy');
  });
});

describe('Caddy in front of sluice (docs/deploy.md "Caddy")', () => {
  test('the block as written (encode off /mcp): progress event by event, the stream not compressed', async (t) => {
    if (skipWithoutCaddy(t)) return;
    assert.match(CADDY, /encode @compressible gzip zstd/);
    const { session } = await through('caddy', CADDY, { keepaliveMs: 500 });
    const x = await assertIncremental(session, 'caddy');
    assert.equal(x.headers.get('content-encoding'), null);
  });

  test('1 KB events to a client accepting gzip: the block as written leaves them alone; `encode` on the whole site (the control) compresses them and holds them to the end', async (t) => {
    if (skipWithoutCaddy(t)) return;
    // Each event past encode's 512-byte minimum length: the corpus name is in every progress message.
    const big = { corpus: 'x'.repeat(1_000), docs: 10, delayMs: 100 };
    const { session } = await through('caddy', CADDY, { keepaliveMs: 500 });
    const ok = await callTool(session, 'reindex', big, 11);
    await withDeadline(ok.done, 10_000, '1 KB events through the block as written');
    const times = progressTimes(ok);
    const detail = `progress at [${times.map((x) => x.toFixed(0)).join(', ')}] ms`;
    assert.equal(ok.headers.get('content-encoding'), null, detail);
    assert.equal(times.length, 10, detail);
    assert.ok((times.at(-1) ?? 0) - (times[0] ?? 0) >= 700 && clumped(times) <= 2, detail);

    const control = await through('caddy', caddyEncodingAll(), { keepaliveMs: 500 });
    const held = await callTool(control.session, 'reindex', big, 12);
    await withDeadline(held.done, 10_000, '1 KB events through encode on the whole site');
    const heldTimes = progressTimes(held);
    const heldDetail = `progress at [${heldTimes.map((x) => x.toFixed(0)).join(', ')}] ms`;
    assert.equal(held.headers.get('content-encoding'), 'gzip', heldDetail);
    assert.equal(heldTimes.length, 10, heldDetail);
    assert.ok(clumped(heldTimes) >= 8, `held in the compressor: ${heldDetail}`);
  });

  test('sluice doctor: ok through the block as written; with `encode` on the whole site the compression check fails and names the Caddy fix', async (t) => {
    if (skipWithoutCaddy(t)) return;
    for (const [block, expected] of [
      [CADDY, 'ok'],
      [caddyEncodingAll(), 'fail'],
    ] as const) {
      const { proxy } = await through('caddy', block, { keepaliveMs: 1_000 });
      const report = await withDeadline(runDoctor({ url: proxy.url, quick: true }), 60_000, 'doctor run');
      const text = renderText(report);
      assert.equal(report.verdicts.find((v) => v.id === 'compression')?.status, expected, text);
      // The buffering probe's small events pass either way: only events past encode's minimum length show it.
      assert.equal(report.verdicts.find((v) => v.id === 'buffering')?.status, 'ok', text);
      if (expected === 'fail') {
        assert.match(text, /compressed \(Content-Encoding: (gzip|zstd)\) .* arrived together/);
        assert.match(text, /fix \(Caddy\): keep `encode` off the MCP path/);
      }
    }
  });

  test('HTTP/2 from the client (the block on https with a tls line): progress event by event on h2, not compressed', async (t) => {
    if (skipWithoutCaddy(t)) return;
    const cert = testCert();
    // What a deployer with their own certificate writes: the documented block on an https address.
    await assertIncrementalOverH2('caddy', cert, (pointed) =>
      edit(pointed, /^http:\/\/(\S+) \{$/m, `https://$1 {\n  tls ${cert.certFile} ${cert.keyFile}`),
    );
  });

  test('a quiet call of 4 s with keepalive off: no read timeout cuts it', async (t) => {
    if (skipWithoutCaddy(t)) return;
    const { session } = await through('caddy', CADDY, { keepaliveMs: 0 });
    const x = await callTool(session, 'sleep', { ms: 4_000 }, 8);
    await withDeadline(x.done, 10_000, 'sleep stream end');
    const end = resultTime(x, 8);
    assert.ok(end !== undefined && end >= 3_900, `the result after the sleep (error: ${x.error})`);
  });
});
