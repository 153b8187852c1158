/**
 * Sluice behind a real nginx (docs/deploy.md "nginx"):
 * the recommended location block, nginx's defaults, gzip, and a proxy idle timeout with keepalive
 * off (the negative control, recovered by resumption). Timings are asserted with margins wide
 * enough for a loaded CI machine but far below what buffering or a dead stream would produce.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { McpSession } from '../../src/doctor/session.js';
import type { Served } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import {
  type Nginx,
  RECOMMENDED_LOCATION,
  skipWithoutNginx,
  startProxied,
  type startUpstream,
  stopProxied,
} from '../helpers/nginx.js';
import { assertCutThenResumed, assertIncremental, callTool, resultTime } from '../helpers/stream-checks.js';

const GZIP_EVERYTHING = 'gzip on; gzip_types text/event-stream application/json;';

after(stopProxied);

async function proxied(
  serverOptions: Parameters<typeof startUpstream>[0],
  nginx: { location?: string; http?: string },
): Promise<{ upstream: Served; nginx: Nginx; session: McpSession }> {
  const { upstream, nginx: n } = await startProxied(serverOptions, nginx);
  const session = new McpSession(n.url);
  const init = await withDeadline(session.initialize(), 5_000, 'initialize through nginx');
  assert.equal(init.status, 200, `initialize through nginx: ${init.status} ${init.text}`);
  assert.ok(session.sessionId, 'a session id came back through nginx');
  // Warm the path (first tool call compiles schemas) so timings below measure the proxy only.
  const echo = await withDeadline(
    session.call('tools/call', { name: 'echo', arguments: { text: 'hi' } }),
    5_000,
    'echo',
  );
  assert.deepEqual(echo.result, { content: [{ type: 'text', text: 'hi' }] });
  return { upstream, nginx: n, session };
}

describe('nginx in front of sluice', () => {
  test('(a) recommended config: progress streams incrementally', async (t) => {
    if (skipWithoutNginx(t)) return;
    const { session } = await proxied({ keepaliveMs: 500 }, { location: RECOMMENDED_LOCATION });
    const x = await assertIncremental(session, 'recommended');
    assert.equal(x.headers.get('cache-control'), 'no-cache, no-transform');
    assert.equal(x.headers.get('content-encoding'), null);
  });

  test('(a) recommended config with proxy_read_timeout 2s: keepalive holds a 4 s quiet call open', async (t) => {
    if (skipWithoutNginx(t)) return;
    const location = RECOMMENDED_LOCATION.replace('proxy_read_timeout  3600s', 'proxy_read_timeout  2s');
    assert.match(location, /proxy_read_timeout {2}2s/);
    const { session, nginx } = await proxied({ keepaliveMs: 500 }, { location });
    const x = await callTool(session, 'sleep', { ms: 4_000 }, 8);
    await withDeadline(x.done, 10_000, 'sleep stream end');
    const end = resultTime(x, 8);
    assert.ok(
      end !== undefined,
      `the result arrived (error: ${x.error}); log:\n${(await nginx.errorLog()).slice(-1500)}`,
    );
    assert.ok(end >= 3_900, `result after the sleep (${end.toFixed(0)} ms)`);
    const comments = x.items.filter((i) => i.kind === 'comment' && i.data.includes('keepalive'));
    assert.ok(comments.length >= 4, `keepalive comments kept it warm (${comments.length})`);
    assert.equal(x.error, undefined);
  });

  test('(b) nginx defaults (buffering on, HTTP/1.0 upstream): X-Accel-Buffering: no still streams', async (t) => {
    if (skipWithoutNginx(t)) return;
    const { session, nginx } = await proxied({ keepaliveMs: 15_000 }, {});
    assert.doesNotMatch(nginx.config, /proxy_buffering|proxy_http_version/);
    const x = await assertIncremental(session, 'defaults');
    // nginx consumes X-Accel-* headers: the client never sees the one that did the work.
    assert.equal(x.headers.get('x-accel-buffering'), null);
  });

  test('(c) gzip on for text/event-stream: nginx compresses the stream (and still flushes each event)', async (t) => {
    if (skipWithoutNginx(t)) return;
    const { session } = await proxied({ keepaliveMs: 15_000 }, { http: GZIP_EVERYTHING });
    const x = await assertIncremental(session, 'gzip on');
    // Observed with nginx 1.22: Cache-Control: no-transform does not stop nginx's gzip filter.
    assert.equal(x.headers.get('content-encoding'), 'gzip');
  });

  test('(c) the documented fix (gzip off in the MCP location) sends the stream uncompressed', async (t) => {
    if (skipWithoutNginx(t)) return;
    const { session } = await proxied(
      { keepaliveMs: 15_000 },
      { http: GZIP_EVERYTHING, location: RECOMMENDED_LOCATION },
    );
    assert.match(RECOMMENDED_LOCATION, /gzip\s+off;/);
    const x = await assertIncremental(session, 'gzip off in location');
    assert.equal(x.headers.get('content-encoding'), null);
  });

  test('(c) the documented fix (text/event-stream left out of gzip_types) sends it uncompressed', async (t) => {
    if (skipWithoutNginx(t)) return;
    const { session } = await proxied(
      { keepaliveMs: 15_000 },
      { http: 'gzip on; gzip_types application/json;' },
    );
    const x = await assertIncremental(session, 'gzip_types without text/event-stream');
    assert.equal(x.headers.get('content-encoding'), null);
  });

  test('(d) keepalive off + proxy_read_timeout 1s: the quiet stream dies at the proxy, Last-Event-ID resumes it', async (t) => {
    if (skipWithoutNginx(t)) return;
    const location = `${RECOMMENDED_LOCATION.replace('proxy_read_timeout  3600s', 'proxy_read_timeout  1s')}`;
    const { session } = await proxied({ keepaliveMs: 0, mode: 'sse' }, { location });
    await assertCutThenResumed(session, 'nginx');
  });
});
