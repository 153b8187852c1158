/**
 * subscriptions/listen over real sockets: acknowledgement first with the honoured filter, only the
 * kinds asked for, every message tagged with the subscription id, changes published through
 * handler.notify and captured from served servers, a stalled reader kept bounded by coalescing
 * (never cut), the listen result on close(), and the per-principal cap.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_LISTEN_STREAMS_PER_PRINCIPAL } from '../../src/core/era-2026/state.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import type { Loose } from '../helpers/http.js';
import { RawSession, toolCall, until } from '../helpers/http.js';
import { modernBody, modernOpen, modernSend } from '../helpers/modern.js';

const SUB = 'io.modelcontextprotocol/subscriptionId';

function listenBody(notifications: Record<string, unknown>, id: string | number) {
  return modernBody('subscriptions/listen', { notifications }, {}, id);
}

describe('modern era: subscriptions/listen', () => {
  let s: Served;
  before(async () => {
    s = await serve({ createServer: () => createDemoServer(), port: 0, host: '127.0.0.1', keepaliveMs: 200 });
  });
  after(async () => {
    await s.close();
  });

  test('ack first with the honoured filter; only asked-for kinds; every message tagged', async () => {
    const r = await modernOpen(
      s.url,
      listenBody({ toolsListChanged: true, resourceSubscriptions: ['demo://a'], bogus: true }, 'L1'),
    );
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/event-stream/);
    assert.equal(r.headers['mcp-session-id'], undefined);
    await r.waitFor((x) => x.messages().length >= 1, 3_000, 'ack');
    const ack = r.messages()[0];
    assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual(ack.params.notifications, {
      toolsListChanged: true,
      resourceSubscriptions: ['demo://a'],
    });
    assert.equal(ack.params._meta[SUB], 'L1');
    s.handler.notify.promptsListChanged(); // not asked for
    s.handler.notify.resourceUpdated('demo://other'); // not subscribed
    s.handler.notify.resourceUpdated('demo://a');
    s.handler.notify.toolsListChanged();
    await r.waitFor((x) => x.messages().length >= 3, 3_000, 'two notifications');
    await new Promise((res) => setTimeout(res, 50));
    const rest = r.messages().slice(1);
    assert.deepEqual(
      rest.map((m: Loose) => [m.method, m.params.uri]),
      [
        ['notifications/resources/updated', 'demo://a'],
        ['notifications/tools/list_changed', undefined],
      ],
    );
    for (const m of rest) assert.equal(m.params._meta[SUB], 'L1');
    assert.doesNotMatch(r.text, /^id:/m);
    r.destroy();
    await until(() => s.handler.stats().modern.listenStreams === 0, 3_000, 'listen released');
  });

  test('list changes a served server emits during a modern request reach listen streams', async () => {
    const r = await modernOpen(s.url, listenBody({ toolsListChanged: true, promptsListChanged: true }, 'L2'));
    await r.waitFor((x) => x.messages().length >= 1, 3_000, 'ack');
    const t = await modernSend(
      s.url,
      modernBody('tools/call', { name: 'test_trigger_prompt_change', arguments: {} }),
    );
    assert.equal(t.status, 200);
    const m = await r.waitMessage(
      (x) => x.method === 'notifications/prompts/list_changed',
      3_000,
      'prompt change',
    );
    assert.equal(m.params._meta[SUB], 'L2');
    r.destroy();
  });

  test('list changes a server announces inside a legacy session reach listen streams too', async () => {
    const r = await modernOpen(s.url, listenBody({ toolsListChanged: true }, 'L2b'));
    await r.waitFor((x) => x.messages().length >= 1, 3_000, 'ack');
    const legacy = new RawSession(s.url);
    await legacy.init();
    const t = await legacy.post(toolCall('test_trigger_tool_change', {}, 'lt'));
    assert.equal(t.status, 200);
    const m = await r.waitMessage(
      (x) => x.method === 'notifications/tools/list_changed',
      3_000,
      'tool change',
    );
    assert.equal(m.params._meta[SUB], 'L2b');
    r.destroy();
    await legacy.delete();
  });

  test('a quiet listen stream gets keepalive comments', async () => {
    const r = await modernOpen(s.url, listenBody({ toolsListChanged: true }, 'L3'));
    await r.waitFor((x) => x.comments.length >= 1, 3_000, 'keepalive comment');
    r.destroy();
  });

  test('a malformed filter is 400/-32602 echoing the id', async () => {
    const r = await modernSend(
      s.url,
      modernBody('subscriptions/listen', { notifications: { toolsListChanged: 'yes' } }, {}, 'bad'),
    );
    assert.equal(r.status, 400);
    assert.deepEqual([r.json().error.code, r.json().id], [-32602, 'bad']);
  });

  test('a stalled reader stays bounded: changes coalesce per kind and URI, the stream is never cut', async () => {
    const uris = Array.from({ length: 200 }, (_, i) => `demo://${'u'.repeat(3000)}/${i}`);
    const r = await modernOpen(
      s.url,
      listenBody({ resourceSubscriptions: uris, toolsListChanged: true }, 'L4'),
    );
    await r.waitFor((x) => x.messages().length >= 1, 3_000, 'ack');
    r.res.pause();
    const before = s.handler.stats().modern.listenCoalesced;
    const overflowBefore = s.handler.stats().overflowCloses;
    const N = 20_000;
    for (let i = 0; i < N; i++) {
      s.handler.notify.resourceUpdated(uris[i % uris.length] as string);
      if (i % 1000 === 0) await new Promise((res) => setImmediate(res));
    }
    const coalesced = s.handler.stats().modern.listenCoalesced - before;
    assert.ok(coalesced > N / 2, `expected most updates coalesced, got ${coalesced}`);
    assert.ok(
      s.handler.stats().queue.bytes < 2 * 1024 * 1024,
      `writer queue ${s.handler.stats().queue.bytes}`,
    );
    assert.equal(s.handler.stats().overflowCloses, overflowBefore);
    s.handler.notify.toolsListChanged();
    r.res.resume();
    await r.waitFor(
      (x) => x.messages().some((m: Loose) => m.method === 'notifications/tools/list_changed'),
      10_000,
      'tools change after the backlog',
    );
    const got = r.messages().filter((m: Loose) => m.method === 'notifications/resources/updated');
    assert.ok(got.length < N, `${got.length} updates delivered`);
    assert.equal(
      new Set(got.map((m: Loose) => m.params.uri)).size,
      uris.length,
      'every URI heard at least once',
    );
    r.destroy();
  });

  test(`at most ${MAX_LISTEN_STREAMS_PER_PRINCIPAL} listen streams per principal; the next is 429`, async () => {
    const open = [];
    for (let i = 0; i < MAX_LISTEN_STREAMS_PER_PRINCIPAL; i++) {
      open.push(await modernOpen(s.url, listenBody({ toolsListChanged: true }, `cap${i}`)));
    }
    await until(
      () => s.handler.stats().modern.listenStreams >= MAX_LISTEN_STREAMS_PER_PRINCIPAL,
      3_000,
      'all open',
    );
    const r = await modernSend(s.url, listenBody({ toolsListChanged: true }, 'over'));
    assert.equal(r.status, 429);
    assert.equal(r.json().id, 'over');
    assert.equal(r.json().error.code, -32000);
    // Listen streams are long-lived: the wait asked for is longer than a second.
    assert.equal(r.headers['retry-after'], '5');
    for (const o of open) o.destroy();
    await until(() => s.handler.stats().modern.listenStreams === 0, 3_000, 'all released');
  });
});

describe('modern era: listen graceful close', () => {
  test('close() sends the listen result with the subscription id, then ends the stream', async () => {
    const s = await serve({ createServer: () => createDemoServer(), port: 0, host: '127.0.0.1' });
    try {
      const r = await modernOpen(s.url, listenBody({ toolsListChanged: true }, 'G1'));
      await r.waitFor((x) => x.messages().length >= 1, 3_000, 'ack');
      const closing = s.close();
      await r.finished(3_000, 'stream end');
      const last = r.messages().at(-1);
      assert.deepEqual(last, {
        jsonrpc: '2.0',
        id: 'G1',
        result: { resultType: 'complete', _meta: { [SUB]: 'G1' } },
      });
      await closing;
    } finally {
      await s.close();
    }
  });
});
