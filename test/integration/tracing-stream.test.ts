/**
 * A request's stream life as events on its span: upgraded to SSE, the connection cut by a proxy,
 * the resume with its cursor and replay count; and a cancellation with its cause (the client's
 * notifications/cancelled, the orphan timeout, a 2026-07-28 client closing, the shutdown).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, test } from 'node:test';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startCutProxy } from '../helpers/cut-proxy.js';
import { withDeadline } from '../helpers/deadline.js';
import { notification, RawSession, rawPost, toolCall, until } from '../helpers/http.js';
import { modernBody, modernOpen } from '../helpers/modern.js';
import { api, testTracing } from '../helpers/otel.js';
import { startServer } from '../helpers/test-server.js';

const tracing = testTracing();
const traced = { tracing: { api, tracer: tracing.provider.getTracer('sluice') } };

function events(span: ReadableSpan): string[] {
  return span.events.map((e) => e.name);
}

function cancelCause(span: ReadableSpan): unknown {
  return span.events.find((e) => e.name === 'mcp.request.cancelled')?.attributes?.['mcp.cancel.cause'];
}

async function spanById(id: string): Promise<ReadableSpan> {
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    const s = tracing.spans().find((x) => x.attributes['jsonrpc.request.id'] === id);
    if (s !== undefined) return s;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no span for request ${id}`);
}

describe('stream life on the span', () => {
  test('upgraded, cut by the proxy, resumed with cursor and replay count', async () => {
    const srv = await startServer({ pacingMs: 5, ...traced });
    after(() => srv.close());
    const proxy = await startCutProxy(srv.port);
    after(() => proxy.close());
    const s = new RawSession(proxy.url('/mcp'));
    await s.init();
    const post = await s.postOpen(toolCall('progress', { n: 30, delayMs: 10 }, 'cut-1', 'tok-cut'));
    await post.waitFor((r) => r.messages().length >= 5, 5_000, 'five progress events');
    await proxy.arm(1, (line) => line.startsWith('POST'));
    await post.done;
    const lastId = post.events.filter((e) => e.id !== undefined && e.data !== '').at(-1)?.id;
    assert.ok(lastId !== undefined);
    // Let a few events go to the store while nobody is attached, so the resume replays them.
    await new Promise((r) => setTimeout(r, 100));
    const resumed = await s.get({ 'last-event-id': lastId });
    assert.equal(resumed.status, 200);
    await resumed.finished(10_000, 'resumed stream ends after the result');
    assert.ok(resumed.messages().some((m) => m.id === 'cut-1'));
    const span = await spanById('cut-1');
    const names = events(span);
    assert.equal(names[0], 'mcp.stream.upgraded');
    assert.ok(names.includes('mcp.stream.closed'), names.join());
    const closed = span.events.find((e) => e.name === 'mcp.stream.closed');
    assert.equal(closed?.attributes?.['mcp.stream.close_reason'], 'client');
    const resume = span.events.find((e) => e.name === 'mcp.stream.resumed');
    assert.ok(resume !== undefined, names.join());
    const cursor = resume.attributes?.['mcp.stream.cursor'];
    assert.equal(typeof cursor, 'number');
    assert.ok((resume.attributes?.['mcp.stream.replayed'] as number) >= 1, 'events replayed from the store');
    assert.equal(resume.attributes?.['mcp.stream.takeover'], false);
    assert.equal(span.attributes['error.type'], undefined);
  });
});

describe('a resume that takes over a live connection', () => {
  test('mcp.stream.resumed says takeover', async () => {
    const srv = await startServer({ pacingMs: 5, ...traced });
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const post = await s.postOpen(toolCall('progress', { n: 20, delayMs: 10 }, 'take-1', 'tok-take'));
    await post.waitFor((r) => r.messages().length >= 3, 5_000, 'three progress events');
    const lastId = post.events.filter((e) => e.id !== undefined && e.data !== '').at(-1)?.id;
    assert.ok(lastId !== undefined);
    // The POST connection is still attached: this GET replaces it.
    const resumed = await s.get({ 'last-event-id': lastId });
    assert.equal(resumed.status, 200);
    await resumed.finished(10_000, 'resumed stream ends after the result');
    const span = await spanById('take-1');
    const resume = span.events.find((e) => e.name === 'mcp.stream.resumed');
    assert.equal(resume?.attributes?.['mcp.stream.takeover'], true, events(span).join());
    post.destroy();
  });
});

describe('an overflow close', () => {
  test('a paused reader of non-coalescible messages: mcp.stream.overflow_closed', async () => {
    const srv = await startServer({
      keepaliveMs: 0,
      maxQueueBytes: 256 * 1024,
      highWaterMark: 64 * 1024,
      replay: { maxCount: 100_000, maxBytes: 256 * 1024 * 1024 },
      ...traced,
    });
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const overflows = srv.stats().overflowCloses;
    // A raw socket, paused once the response head arrived, so the server's queue fills.
    const sock = connect(srv.port, '127.0.0.1');
    const head = new Promise<void>((resolve, reject) => {
      let seen = '';
      const onData = (d: Buffer): void => {
        seen += d.toString('latin1');
        if (seen.includes('\r\n\r\n')) {
          sock.off('data', onData);
          sock.pause();
          resolve();
        }
      };
      sock.on('data', onData);
      sock.on('error', reject);
    });
    const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
    const body = toolCall('chatter', { n: 600, pad: 20_000, parallel: true }, 'over-1');
    // Both media types: the answer starts undecided and is upgraded by the first message (auto).
    sock.write(rawPost(srv.port, s.headers(), JSON.stringify(body)));
    await withDeadline(head, 5_000, 'response head');
    await until(() => srv.stats().overflowCloses > overflows, 10_000, 'overflow close');
    sock.resume();
    await withDeadline(closed, 10_000, 'connection closed by the server');
    // Nobody resumes: the request runs to its end and its span ends with the answer.
    const span = await spanById('over-1');
    const names = events(span);
    assert.equal(names[0], 'mcp.stream.upgraded');
    assert.ok(names.includes('mcp.stream.overflow_closed'), names.join());
  });
});

describe('an answer that is SSE from its start', () => {
  test('its span still gets mcp.stream.upgraded (from_start)', async () => {
    const srv = await startServer(traced);
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const r = await s.postOpen(toolCall('progress', { n: 2, delayMs: 1 }, 'sse-1', 'tok-sse'), {
      accept: 'text/event-stream',
    });
    await r.finished(5_000, 'sse answer');
    const span = await spanById('sse-1');
    const up = span.events.find((e) => e.name === 'mcp.stream.upgraded');
    assert.equal(up?.attributes?.['mcp.stream.from_start'], true, events(span).join());
  });
});

describe('cancellation causes', () => {
  test("the client's notifications/cancelled: protocol", async () => {
    const srv = await startServer(traced);
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const started = srv.probe.onStart('progress');
    const post = await s.postOpen(toolCall('progress', { n: 1, delayMs: 5_000 }, 'c-proto'));
    await started;
    await s.post(notification('notifications/cancelled', { requestId: 'c-proto', reason: 'user' }));
    const span = await spanById('c-proto');
    assert.equal(cancelCause(span), 'protocol');
    assert.equal(span.attributes['error.type'], 'cancelled');
    post.destroy();
  });

  test('a stream nobody resumes: orphan-timeout', async () => {
    const srv = await startServer({ orphanTimeoutMs: 200, ...traced });
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const started = srv.probe.onStart('progress');
    const post = await s.postOpen(toolCall('progress', { n: 2, delayMs: 5_000 }, 'c-orphan', 'tok-o'));
    await started;
    post.destroy();
    const span = await spanById('c-orphan');
    assert.equal(cancelCause(span), 'orphan-timeout');
  });

  test('a 2026-07-28 client closing its response: client-closed', async () => {
    const srv = await startServer(traced);
    after(() => srv.close());
    const started = srv.probe.onStart('progress');
    const r = await modernOpen(
      srv.url,
      modernBody('tools/call', { name: 'progress', arguments: { n: 1, delayMs: 5_000 } }, {}, 'c-modern'),
    );
    await started;
    r.destroy();
    const span = await spanById('c-modern');
    assert.equal(cancelCause(span), 'client-closed');
  });

  test('the endpoint closing with the request in flight: shutdown', async () => {
    const srv = await startServer(traced);
    const s = new RawSession(srv.url);
    await s.init();
    const started = srv.probe.onStart('progress');
    const post = await s.postOpen(toolCall('progress', { n: 1, delayMs: 5_000 }, 'c-shut'));
    await started;
    await srv.served.close({ graceMs: 50 });
    const span = await spanById('c-shut');
    assert.equal(cancelCause(span), 'shutdown');
    post.destroy();
  });
});

describe('a 2026-07-28 request upgraded to SSE (core/answer/, wait-for-room)', () => {
  const progress = (id: string, n: number, delayMs: number) =>
    modernBody(
      'tools/call',
      { name: 'progress', arguments: { n, delayMs } },
      { progressToken: `tok-${id}` },
      id,
    );

  test('upgraded by its first progress notification, then answered on the stream', async () => {
    const srv = await startServer(traced);
    after(() => srv.close());
    const r = await modernOpen(srv.url, progress('m-up', 3, 5));
    await r.finished(5_000, 'the streamed answer');
    assert.match(r.headers['content-type'] ?? '', /text\/event-stream/);
    assert.ok(r.messages().some((m) => m.id === 'm-up'));
    const span = await spanById('m-up');
    const names = events(span);
    assert.equal(names[0], 'mcp.stream.upgraded', names.join());
    // The first progress notification flushes the headers at once: the stream's first byte.
    assert.equal(names[1], 'mcp.stream.first_byte', names.join());
    const first = span.events[1]?.attributes?.['mcp.stream.first_byte_ms'];
    assert.ok(typeof first === 'number' && first >= 0, String(first));
    const up = span.events.find((e) => e.name === 'mcp.stream.upgraded');
    // Upgraded by a related message, not from the start: a client taking both gets JSON by default.
    assert.equal(up?.attributes?.['mcp.stream.from_start'], undefined);
    assert.ok(!names.includes('mcp.stream.closed'), 'a finished answer is no early close');
    assert.equal(span.attributes['error.type'], undefined);
  });

  test('the client closing the stream: mcp.stream.closed (client, write stall), then client-closed', async () => {
    const srv = await startServer(traced);
    after(() => srv.close());
    const r = await modernOpen(srv.url, progress('m-cut', 50, 50));
    await r.waitFor((x) => x.messages().length >= 2, 5_000, 'two progress notifications');
    r.destroy();
    const span = await spanById('m-cut');
    const names = events(span);
    assert.equal(names[0], 'mcp.stream.upgraded', names.join());
    const closed = span.events.find((e) => e.name === 'mcp.stream.closed');
    assert.equal(closed?.attributes?.['mcp.stream.close_reason'], 'client', names.join());
    assert.equal(typeof closed?.attributes?.['mcp.stream.write_stall_ms'], 'number');
    assert.ok(names.indexOf('mcp.stream.closed') < names.indexOf('mcp.request.cancelled'), names.join());
    assert.equal(cancelCause(span), 'client-closed');
  });

  test('the endpoint closing under a streamed request: mcp.stream.closed (server), then shutdown', async () => {
    const srv = await startServer(traced);
    const r = await modernOpen(srv.url, progress('m-shut', 50, 50));
    await r.waitFor((x) => x.messages().length >= 2, 5_000, 'two progress notifications');
    await srv.served.close({ graceMs: 50 });
    const span = await spanById('m-shut');
    const closed = span.events.find((e) => e.name === 'mcp.stream.closed');
    assert.equal(closed?.attributes?.['mcp.stream.close_reason'], 'server', events(span).join());
    assert.equal(cancelCause(span), 'shutdown');
    r.destroy();
  });
});
