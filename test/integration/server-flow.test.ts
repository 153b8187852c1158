// Request lifecycles on real sockets: cancellation, disconnects that are not cancellations, the
// orphan timeout, server-to-client requests and their replies, duplicate ids, and backpressure
// (coalescing under a paused reader, overflow that closes the stream and a resume that delivers all).
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { sendingProcess } from '../helpers/answering-process.js';
import { withDeadline } from '../helpers/deadline.js';
import {
  assertRefusal,
  dechunk,
  type Loose,
  notification,
  RawSession,
  rawGet,
  rawPost,
  sleep,
  toolCall,
  until,
} from '../helpers/http.js';
import { stall } from '../helpers/stall.js';
import { type Running, startServer } from '../helpers/test-server.js';

function parseSse(text: string): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  const p = createParser({ onEvent: (e) => events.push(e) });
  p.feed(text);
  return events;
}
const msgs = (events: EventSourceMessage[]): Loose[] =>
  events.filter((e) => e.data !== '').map((e) => JSON.parse(e.data));

/** The server-side sockets currently open (tracked by a connection listener installed on first use). */
const tracked = new WeakMap<Running, Set<Socket>>();
function activeSockets(srv: Running): Socket[] {
  return [...(tracked.get(srv) ?? [])].filter((s) => !s.destroyed);
}
function track(srv: Running): void {
  const set = new Set<Socket>();
  tracked.set(srv, set);
  srv.served.server.on('connection', (sock) => {
    set.add(sock);
    sock.on('close', () => set.delete(sock));
  });
}

describe('flow: cancellation and disconnects', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, streamAfterMs: 10_000 });
    track(srv);
  });
  after(() => srv.close());

  test('notifications/cancelled aborts the handler (extra.signal) and no response is sent (JSON exchange)', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const started = srv.probe.onStart('slow');
    const pending = s.post(toolCall('slow', { ms: 4_000 }, 'c1'));
    await withDeadline(started, 2_000, 'slow started');
    const n = await s.post(notification('notifications/cancelled', { requestId: 'c1', reason: 'test' }));
    assert.equal(n.status, 202);
    const r = await pending;
    assert.equal(r.status, 202, 'nothing to answer');
    assert.equal(r.text, '');
    await until(() => srv.probe.aborted.includes('slow:4000'), 2_000, 'handler aborted');
    assert.ok(!srv.probe.finished.includes('slow:4000'));
  });

  test('notifications/cancelled on an SSE exchange: the stream ends without a response', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const p = await s.postOpen(toolCall('slow', { ms: 4_001 }, 'c2'), { accept: 'text/event-stream' });
    await p.waitFor((r) => r.events.length > 0, 2_000, 'priming');
    assert.equal((await s.post(notification('notifications/cancelled', { requestId: 'c2' }))).status, 202);
    await p.finished(2_000, 'stream ended');
    assert.deepEqual(p.messages(), []);
    await until(() => srv.probe.aborted.includes('slow:4001'), 2_000, 'handler aborted');
  });

  test('a cancel for an unknown request is accepted (202) and changes nothing', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    assert.equal((await s.post(notification('notifications/cancelled', { requestId: 'never' }))).status, 202);
    assert.equal(
      (await s.post(toolCall('echo', { text: 'still fine' }))).json().result.content[0].text,
      'still fine',
    );
  });

  test('a dropped TCP connection does NOT abort the handler', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const orphanAborts = srv.stats().orphanAborts;
    const started = srv.probe.onStart('slow');
    const p = s.post(toolCall('slow', { ms: 400 }, 'd1')).catch(() => undefined);
    await withDeadline(started, 2_000, 'slow started');
    // Drop the request's TCP connection from the server side (the only one open: no keep-alive).
    const socks = activeSockets(srv);
    assert.equal(socks.length, 1);
    for (const sock of socks) sock.destroy();
    await p;
    await until(() => srv.probe.finished.includes('slow:400'), 3_000, 'handler finished');
    assert.ok(!srv.probe.aborted.includes('slow:400'));
    assert.equal(srv.stats().orphanAborts, orphanAborts);
  });
});

describe('flow: orphan timeout', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, streamAfterMs: 10_000, orphanTimeoutMs: 300 });
    track(srv);
  });
  after(() => srv.close());

  test('a request whose client vanished is cancelled after orphanTimeoutMs (JSON exchange)', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const started = srv.probe.onStart('slow');
    const p = s.postOpen(toolCall('slow', { ms: 5_000 }, 'o1')).catch(() => undefined);
    await withDeadline(started, 2_000, 'slow started');
    const socks = activeSockets(srv);
    assert.equal(socks.length, 1);
    for (const sock of socks) sock.destroy();
    await p;
    await until(() => srv.probe.aborted.includes('slow:5000'), 3_000, 'orphan abort');
    assert.ok(srv.stats().orphanAborts >= 1);
  });

  test('an SSE stream resumed within orphanTimeoutMs is not cancelled; one never resumed is', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const p = await s.postOpen(toolCall('slow', { ms: 800 }, 'o2'), { accept: 'text/event-stream' });
    await p.waitFor((r) => r.events.length > 0, 2_000, 'priming');
    p.destroy();
    await sleep(100);
    const g = await s.get({ 'last-event-id': p.events[0]?.id ?? '' });
    await g.finished(3_000, 'resumed stream');
    assert.deepEqual(
      g.messages().map((m: Loose) => m.id),
      ['o2'],
    );
    assert.ok(srv.probe.finished.includes('slow:800'));

    const q = await s.postOpen(toolCall('slow', { ms: 5_001 }, 'o3'), { accept: 'text/event-stream' });
    await q.waitFor((r) => r.events.length > 0, 2_000, 'priming');
    q.destroy();
    await until(() => srv.probe.aborted.includes('slow:5001'), 3_000, 'orphan abort of the SSE request');
  });

  test('a resume that came in while the server was stalled past orphanTimeoutMs is in time', async () => {
    // The server's own stall must not be blamed on the client (docs/design.md, "A server's own stall
    // is not blamed on its clients"): another process resumes the stream while this one (the
    // server's) stalls past the 300 ms timeout. When it runs again the orphan timer is due before
    // the resume's connection is accepted, and a loop turn before its bytes are read.
    const client = await sendingProcess();
    try {
      const s = new RawSession(srv.url);
      await s.init();
      const aborts = srv.stats().orphanAborts;
      const p = await s.postOpen(toolCall('slow', { ms: 1_502 }, 'o4'), { accept: 'text/event-stream' });
      await p.waitFor((r) => r.events.length > 0, 2_000, 'priming');
      p.destroy();
      // The server sees the stream go (its orphan timer starts) before this process stalls.
      await until(() => activeSockets(srv).length === 0, 2_000, 'the stream detached');
      const resume = s.headers({ accept: 'text/event-stream', 'last-event-id': p.events[0]?.id ?? '' });
      client.send(srv.port, '127.0.0.1', rawGet(srv.port, resume));
      stall(1_000);
      assert.match(await client.answer(), /^HTTP\/1\.1 200 /);
      // That process leaves once it has the status line; the stream is resumed here again at once.
      const g = await s.get({ 'last-event-id': p.events[0]?.id ?? '' });
      await g.finished(5_000, 'the stream resumed again');
      assert.deepEqual(
        g.messages().map((m: Loose) => m.id),
        ['o4'],
      );
      assert.ok(srv.probe.finished.includes('slow:1502'), 'the call ran to its end');
      assert.ok(!srv.probe.aborted.includes('slow:1502'), 'not cancelled as an orphan');
      assert.equal(srv.stats().orphanAborts, aborts);
    } finally {
      // Its pipes would keep this process alive.
      client.close();
    }
  });
});

describe('flow: server-to-client requests', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0 });
  });
  after(() => srv.close());

  for (const kind of ['elicitation', 'sampling'] as const) {
    test(`${kind}: the request travels on the POST's SSE stream; the reply POST gets 202; the tool completes`, async () => {
      const s = new RawSession(srv.url);
      await s.init('2025-11-25', { elicitation: {}, sampling: {} });
      const p = await s.postOpen(toolCall('ask', { kind }, `ask-${kind}`));
      assert.equal(p.headers['content-type'], 'text/event-stream');
      const method = kind === 'elicitation' ? 'elicitation/create' : 'sampling/createMessage';
      const req = await p.waitMessage((m) => m.method === method, 3_000, `${method} on the POST stream`);
      assert.ok(typeof req.id === 'number' || typeof req.id === 'string');
      const result =
        kind === 'elicitation'
          ? { action: 'accept', content: { name: 'Ann' } }
          : { model: 'm-1', role: 'assistant', content: { type: 'text', text: 'hello' } };
      const reply = await s.post({ jsonrpc: '2.0', id: req.id, result });
      assert.equal(reply.status, 202);
      assert.equal(reply.text, '');
      await p.finished(3_000, 'tool result');
      const last = p.messages().at(-1);
      assert.equal(last.id, `ask-${kind}`);
      assert.equal(
        last.result.content[0].text,
        kind === 'elicitation' ? 'elicited accept {"name":"Ann"}' : 'sampled m-1',
      );
      // The same reply again: nobody awaits it any more.
      assertRefusal(await s.post({ jsonrpc: '2.0', id: req.id, result }), 400, -32600, 'unexpected-reply');
    });
  }

  test('a reply with an id nobody awaits → 400 unexpected-reply and changes nothing', async () => {
    const s = new RawSession(srv.url);
    await s.init('2025-11-25', { elicitation: {} });
    const p = await s.postOpen(toolCall('ask', { kind: 'elicitation' }, 'ask-x'));
    const req = await p.waitMessage((m) => m.method === 'elicitation/create', 3_000, 'elicitation');
    const stray = typeof req.id === 'number' ? req.id + 1000 : `${req.id}-x`;
    for (const body of [
      { jsonrpc: '2.0', id: stray, result: { action: 'decline' } },
      { jsonrpc: '2.0', id: 'never-sent', error: { code: -1, message: 'x' } },
    ]) {
      assertRefusal(await s.post(body), 400, -32600, 'unexpected-reply');
    }
    await sleep(50);
    assert.equal(p.ended, false, 'the tool is still waiting');
    assert.equal((await s.post({ jsonrpc: '2.0', id: req.id, result: { action: 'decline' } })).status, 202);
    await p.finished(3_000, 'tool result');
    assert.match(p.messages().at(-1).result.content[0].text, /elicited decline/);
  });

  test('a duplicate request id while the first is in flight → 400 duplicate-id; the first completes', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const started = srv.probe.onStart('slow');
    const first = s.postOpen(toolCall('slow', { ms: 300 }, 'dup'));
    await withDeadline(started, 2_000, 'first started');
    const runs = srv.probe.started.get('echo') ?? 0;
    assertRefusal(await s.post(toolCall('echo', { text: 'again' }, 'dup')), 400, -32600, 'duplicate-id');
    assert.equal(srv.probe.started.get('echo') ?? 0, runs);
    const r = await first;
    await r.finished(3_000, 'first result');
    const m = r.isSse ? r.messages().at(-1) : r.json();
    assert.equal(m.id, 'dup');
    assert.equal(m.result.content[0].text, 'slept 300');
  });
});

describe('flow: backpressure', () => {
  let srv: Running;
  const maxQueueBytes = 256 * 1024;
  before(async () => {
    srv = await startServer({
      keepaliveMs: 0,
      maxQueueBytes,
      highWaterMark: 64 * 1024,
      replay: { maxCount: 100_000, maxBytes: 256 * 1024 * 1024 },
    });
  });
  after(async () => {
    await srv.close();
    if (process.env['DEBUG_HANDLES'])
      console.log((process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles());
  });

  /** Opens a POST on a raw socket; resolves once the response head arrived, with the socket paused. */
  function pausedPost(s: RawSession, body: unknown) {
    const sock = connect(srv.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const headers = s.headers({ accept: 'text/event-stream' });
    const head = new Promise<void>((resolve, reject) => {
      sock.on('data', (d: Buffer) => {
        chunks.push(d);
        if (Buffer.concat(chunks).includes('\r\n\r\n')) resolve();
      });
      sock.on('error', reject);
    });
    const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
    sock.write(rawPost(srv.port, headers, JSON.stringify(body)));
    return {
      sock,
      closed,
      async ready() {
        await withDeadline(head, 5_000, 'response head');
        sock.pause();
      },
      body(): string {
        const all = Buffer.concat(chunks);
        const sep = all.indexOf('\r\n\r\n');
        return dechunk(all.subarray(sep + 4)).toString('utf8');
      },
    };
  }

  test('a paused reader during a progress flood: progress coalesces, the queue stays bounded, the final progress and the result arrive', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const n = 4_000;
    const c = pausedPost(s, toolCall('progress', { n, delayMs: 0, pad: 4_000 }, 'flood', 'ft'));
    await c.ready();
    let maxQueued = 0;
    const coalescedBefore = srv.stats().coalesced;
    const sampler = setInterval(() => {
      maxQueued = Math.max(maxQueued, srv.stats().queue.bytes);
    }, 2);
    try {
      // While the reader is paused, progress updates pile up and replace each other in the queue.
      await until(() => srv.stats().coalesced > coalescedBefore, 20_000, 'coalescing while paused');
      await sleep(200);
      maxQueued = Math.max(maxQueued, srv.stats().queue.bytes);
    } finally {
      clearInterval(sampler);
    }
    assert.ok(maxQueued <= maxQueueBytes, `queue reached ${maxQueued} bytes`);
    c.sock.resume();
    await withDeadline(c.closed, 60_000, 'response complete');
    const ms = msgs(parseSse(c.body()));
    const progress = ms
      .filter((m) => m.method === 'notifications/progress')
      .map((m) => m.params.progress as number);
    assert.ok(progress.length < n, `${progress.length} of ${n} progress events delivered (some coalesced)`);
    assert.equal(progress.at(-1), n, 'the final progress survives coalescing');
    assert.ok(
      progress.every((p, i) => i === 0 || p > (progress[i - 1] ?? 0)),
      'progress stays in increasing order',
    );
    assert.equal(ms.at(-1).id, 'flood');
    assert.equal(ms.at(-1).result.content[0].text, `done ${n}`);
    await until(
      () => srv.stats().queue.bytes === 0 && srv.stats().streams.open.post === 0,
      2_000,
      'queue empty',
    );
  });

  test('an overflow of non-coalescible messages closes the stream; a resume delivers everything exactly once', {}, async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const n = 600;
    const overflows = srv.stats().overflowCloses;
    const c = pausedPost(s, toolCall('chatter', { n, pad: 20_000, parallel: true }, 'chat'));
    await c.ready();
    await until(() => srv.stats().overflowCloses > overflows, 10_000, 'overflow close');
    assert.ok(srv.stats().queue.bytes <= maxQueueBytes);
    c.sock.resume();
    await withDeadline(c.closed, 10_000, 'connection closed by the server');
    const first = parseSse(c.body());
    const lastId = first.filter((e) => e.id !== undefined).at(-1)?.id;
    assert.ok(lastId !== undefined, 'at least the priming event arrived');
    await until(() => srv.probe.finished.includes(`chatter:${n}`), 10_000, 'chatter done');
    const g = await s.get({ 'last-event-id': lastId });
    assert.equal(g.status, 200, g.text);
    await g.finished(10_000, 'resumed stream');
    const all = [...msgs(first), ...g.messages()];
    const seen = all
      .filter((m) => m.method === 'notifications/message')
      .map((m) => Number(String(m.params.data).split(':')[0]));
    assert.equal(seen.length, n, 'every message exactly once');
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      Array.from({ length: n }, (_, i) => i + 1),
    );
    assert.equal(all.at(-1).id, 'chat');
  });
});
