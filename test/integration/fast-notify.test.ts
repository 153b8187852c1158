// The direct `extra.sendNotification` of the fast dispatch (src/core/sdk/fast-notify.ts) against the
// SDK's own path (`fastDispatch: false`, and a server whose shape the fast path does not take):
// the same bytes on the wire, the same event ids and order, the same final response; backpressure
// with a paused reader (progress coalesces, the last value arrives) and overflow (close, resume,
// nothing lost); a notification after the request finished; one after cancellation; the
// capability check; and a 2026-07-28 request to an SDK v1 server on the same path.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createParser } from 'eventsource-parser';
import { z } from 'zod';
import { type Served, type ServeOptions, serve, statelessSafe } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { dechunk, notification, RawSession, rawPost, toolCall, until } from '../helpers/http.js';
import { modernBody, modernSend } from '../helpers/modern.js';

type Send = (n: { method: string; params?: Record<string, unknown> }) => Promise<void>;

/** What the tools saw, per server. */
interface Seen {
  /** `extra.sendNotification`'s constructor name per call: 'Function' (direct) or 'AsyncFunction' (SDK). */
  kinds: string[];
  /** A tool's `extra.sendNotification`, kept after its request finished. */
  kept: Send | undefined;
  /** What a send after cancellation resolved to ('resolved' or the error). */
  afterCancel: string | undefined;
  /** The error a send without the needed capability rejected with. */
  refused: string | undefined;
  /** Events the flood tool sent so far. */
  produced: number;
  /** The cancel-me tool is waiting for its cancellation. */
  waiting: boolean;
}

function build(seen: Seen, logging: boolean): McpServer {
  const server = new McpServer(
    { name: 'fast-notify-test', version: '1' },
    { capabilities: logging ? { logging: {} } : {} },
  );
  server.registerTool(
    'notes',
    { inputSchema: { n: z.number().int(), text: z.string() } },
    async ({ n, text }, extra) => {
      seen.kinds.push(extra.sendNotification.constructor.name);
      const progressToken = extra._meta?.progressToken ?? 'none';
      for (let i = 1; i <= n; i++) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: i, total: n, message: `${text} ${i} "é" \\ 🚰` },
        });
        if (i === 2 && logging)
          await extra.sendNotification({
            method: 'notifications/message',
            params: { level: 'info', data: text },
          });
      }
      return { content: [{ type: 'text', text: `${text} done` }] };
    },
  );
  // Progress notifications of unusual shapes: each must leave as the SDK's message would.
  server.registerTool('odd', { inputSchema: {} }, async (_args, extra) => {
    seen.kinds.push(extra.sendNotification.constructor.name);
    const progressToken = extra._meta?.progressToken ?? 'none';
    const send = extra.sendNotification as unknown as (n: object) => Promise<void>;
    await send({ params: { progress: 1, progressToken }, method: 'notifications/progress' });
    await send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: 2 } });
    await send({ method: 'notifications/progress', params: { progressToken, progress: 3 }, jsonrpc: 'x' });
    await send({
      method: 'notifications/progress',
      extra: [1, 'two'],
      params: { progressToken, progress: 4 },
    });
    await send({
      method: 'notifications/progress',
      params: { progressToken, progress: 5, toJSON: () => ({ progressToken, progress: 5, via: 'toJSON' }) },
    });
    await send({
      method: 'notifications/progress',
      params: { progressToken, progress: 6 },
      toJSON: () => ({
        method: 'notifications/progress',
        params: { progressToken, progress: 6, whole: true },
      }),
    });
    await send({
      method: 'notifications/progress',
      params: { progressToken, progress: 7, _meta: { 'io.sluice/partial': { seq: 0, n: 1 } }, message: 'p' },
    });
    await send(
      Object.assign(Object.create({ inherited: true }), {
        method: 'notifications/progress',
        params: { progressToken, progress: 8 },
      }),
    );
    return { content: [{ type: 'text', text: 'odd done' }] };
  });
  server.registerTool('keep', { inputSchema: {} }, async (_args, extra) => {
    seen.kinds.push(extra.sendNotification.constructor.name);
    seen.kept = extra.sendNotification as Send;
    return { content: [{ type: 'text', text: 'kept' }] };
  });
  server.registerTool('cancel-me', { inputSchema: {} }, async (_args, extra) => {
    seen.kinds.push(extra.sendNotification.constructor.name);
    seen.waiting = true;
    await new Promise<void>((resolve) =>
      extra.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    try {
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', data: 'late' },
      });
      seen.afterCancel = 'resolved';
    } catch (err) {
      seen.afterCancel = String(err);
    }
    return { content: [{ type: 'text', text: 'never seen' }] };
  });
  server.registerTool('log-without-capability', { inputSchema: {} }, async (_args, extra) => {
    seen.kinds.push(extra.sendNotification.constructor.name);
    try {
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'x' } });
    } catch (err) {
      seen.refused = (err as Error).message;
    }
    return { content: [{ type: 'text', text: 'checked' }] };
  });
  server.registerTool(
    'flood',
    { inputSchema: { n: z.number().int(), kind: z.enum(['progress', 'message']), pad: z.number().int() } },
    async ({ n, kind, pad }, extra) => {
      seen.kinds.push(extra.sendNotification.constructor.name);
      const progressToken = extra._meta?.progressToken ?? 'none';
      const filler = 'x'.repeat(pad);
      for (let i = 1; i <= n && !extra.signal.aborted; i++) {
        seen.produced = i;
        await extra.sendNotification(
          kind === 'progress'
            ? {
                method: 'notifications/progress',
                params: { progressToken, progress: i, total: n, message: filler },
              }
            : { method: 'notifications/message', params: { level: 'info', data: { i, filler } } },
        );
      }
      return { content: [{ type: 'text', text: `flooded ${n}` }] };
    },
  );
  return server;
}

interface Running {
  srv: Served;
  seen: Seen;
}

async function start(
  options: Partial<ServeOptions>,
  shape: 'v1' | 'own-notification',
  logging = true,
  shared = false,
) {
  const seen: Seen = {
    kinds: [],
    kept: undefined,
    afterCancel: undefined,
    refused: undefined,
    produced: 0,
    waiting: false,
  };
  const srv = await serve({
    host: '127.0.0.1',
    port: 0,
    mode: 'sse',
    keepaliveMs: 0,
    ...options,
    createServer: (shared ? statelessSafe : <F>(f: F) => f)(() => {
      const s = build(seen, logging);
      // An own `notification` (as a wrapper of the application's would be) is not the shape the
      // direct path relies on: the server keeps the SDK's function.
      if (shape === 'own-notification') {
        const inner = s.server as unknown as { notification: (...a: unknown[]) => Promise<void> };
        const own = inner.notification;
        inner.notification = function (this: unknown, ...a: unknown[]) {
          return own.apply(this, a);
        };
      }
      return s as never;
    }),
  });
  return { srv, seen };
}

/** The SSE body with each session's random tag replaced, so two sessions' ids compare. */
function normalized(text: string): string {
  return text.replace(/^id: [0-9A-Za-z]{10}\./gm, 'id: TAG.');
}

type Name = 'fast' | 'sdk' | 'fallback' | 'nolog' | 'nolog-sdk' | 'shared' | 'shared-sdk';
const servers: Record<Name, Running> = {} as never;
before(async () => {
  servers.fast = await start({}, 'v1');
  servers.sdk = await start({ fastDispatch: false }, 'v1');
  servers.fallback = await start({}, 'own-notification');
  servers.nolog = await start({}, 'v1', false);
  servers['nolog-sdk'] = await start({ fastDispatch: false }, 'v1', false);
  // One server per principal for 2026-07-28 requests (statelessSafe): requests under wire ids.
  servers.shared = await start({}, 'v1', true, true);
  servers['shared-sdk'] = await start({ fastDispatch: false }, 'v1', true, true);
});
after(async () => {
  for (const r of Object.values(servers)) await r.srv.close();
});

async function notesBody(r: Running): Promise<string> {
  const s = new RawSession(r.srv.url);
  await s.init();
  const reply = await s.post(toolCall('notes', { n: 5, text: 'abc' }, 7, 'tok'));
  assert.equal(reply.status, 200);
  assert.ok(reply.isSse, 'an SSE answer');
  await s.delete();
  return normalized(reply.text);
}

describe('the direct sendNotification', () => {
  test('same bytes, ids and order as the SDK path; the final response last', async () => {
    const fast = await notesBody(servers.fast);
    const sdk = await notesBody(servers.sdk);
    const fallback = await notesBody(servers.fallback);
    assert.deepEqual(
      servers.fast.seen.kinds,
      ['Function'],
      'the fast dispatch gave the tool the direct function',
    );
    assert.deepEqual(
      servers.sdk.seen.kinds,
      ['AsyncFunction'],
      'without the fast dispatch: the SDK function',
    );
    assert.deepEqual(servers.fallback.seen.kinds, ['AsyncFunction'], 'another shape: the SDK function');
    assert.equal(fast, sdk, 'byte for byte (session tags aside)');
    assert.equal(fallback, sdk);
    const datas = fast.split('\n').filter((l) => l.startsWith('data: {'));
    assert.equal(datas.length, 7, '5 progress, 1 log message, the response');
    assert.match(datas[2] ?? '', /notifications\/message/);
    assert.match(datas[6] ?? '', /"id":7/);
    assert.match(fast, /^id: TAG\.1\.1$/m, 'ids count from the stream start');
  });

  test('progress of unusual shapes (key order, own jsonrpc, toJSON, extra keys, a prototype) leaves as the SDK sends it', async () => {
    const bodies: string[] = [];
    for (const name of ['fast', 'sdk'] as const) {
      const s = new RawSession(servers[name].srv.url);
      await s.init();
      const reply = await s.post(toolCall('odd', {}, 11, 'tk'));
      assert.equal(reply.status, 200);
      bodies.push(normalized(reply.text));
      await s.delete();
    }
    assert.equal(servers.fast.seen.kinds.at(-1), 'Function');
    assert.equal(bodies[0], bodies[1]);
    assert.equal((bodies[0]?.match(/notifications\/progress/g) ?? []).length, 8);
  });

  test('the capability check still holds: notifications/message without logging is refused alike', async () => {
    for (const name of ['nolog', 'nolog-sdk'] as const) {
      const s = new RawSession(servers[name].srv.url);
      await s.init();
      const reply = await s.post(toolCall('log-without-capability', {}, 1));
      assert.equal(reply.status, 200);
      await s.delete();
    }
    assert.equal(servers.nolog.seen.kinds.at(-1), 'Function', 'the direct function checked it');
    assert.match(servers.nolog.seen.refused ?? '', /does not support logging/);
    assert.equal(servers.nolog.seen.refused, servers['nolog-sdk'].seen.refused);
  });

  test('after the request finished: to the standalone stream, as on the SDK path', async () => {
    const bodies: string[] = [];
    for (const name of ['fast', 'sdk'] as const) {
      const r = servers[name];
      const s = new RawSession(r.srv.url);
      await s.init();
      const get = await s.get();
      assert.equal(get.status, 200);
      const reply = await s.post(toolCall('keep', {}, 3));
      assert.equal(reply.status, 200);
      assert.equal(r.seen.kinds.at(-1), name === 'fast' ? 'Function' : 'AsyncFunction');
      const kept = r.seen.kept;
      assert.ok(kept !== undefined);
      await kept({ method: 'notifications/message', params: { level: 'info', data: 'after the end' } });
      await get.waitFor((g) => g.text.includes('after the end'), 5_000, `${name}: late message on GET`);
      bodies.push(normalized(get.text));
      get.destroy();
      await s.delete();
    }
    assert.equal(bodies[0], bodies[1]);
  });

  test('after cancellation: nothing is sent and the send resolves, as on the SDK path', async () => {
    for (const name of ['fast', 'sdk'] as const) {
      const r = servers[name];
      const s = new RawSession(r.srv.url);
      await s.init();
      const answer = await s.postOpen(toolCall('cancel-me', {}, 'c1'));
      await until(() => r.seen.waiting, 5_000, 'tool running');
      const n = await s.post(notification('notifications/cancelled', { requestId: 'c1', reason: 'test' }));
      assert.equal(n.status, 202);
      await until(() => r.seen.afterCancel !== undefined, 5_000, `${name}: send after cancel`);
      assert.equal(r.seen.afterCancel, 'resolved');
      assert.equal(r.seen.kinds.at(-1), name === 'fast' ? 'Function' : 'AsyncFunction');
      await answer.finished(5_000, 'cancelled answer');
      assert.doesNotMatch(answer.text, /late/, `${name}: nothing after cancellation`);
      r.seen.afterCancel = undefined;
      r.seen.waiting = false;
      await s.delete();
    }
  });

  test('a 2026-07-28 request to an SDK v1 server takes the same path, same bytes (also a shared server)', async () => {
    const bodies: string[] = [];
    for (const name of ['fast', 'sdk', 'shared', 'shared-sdk'] as const) {
      const r = servers[name];
      r.seen.kinds.length = 0;
      const body = modernBody(
        'tools/call',
        { name: 'notes', arguments: { n: 3, text: 'm' } },
        { progressToken: 'p' },
        9,
      );
      const reply = await modernSend(r.srv.url, body);
      assert.equal(reply.status, 200);
      bodies.push(reply.text);
    }
    assert.deepEqual(servers.fast.seen.kinds, ['Function']);
    assert.deepEqual(servers.sdk.seen.kinds, ['AsyncFunction']);
    assert.deepEqual(servers.shared.seen.kinds, ['Function']);
    assert.deepEqual(servers['shared-sdk'].seen.kinds, ['AsyncFunction']);
    for (const b of bodies.slice(1)) assert.equal(b, bodies[0]);
    assert.equal((bodies[0]?.match(/notifications\/progress/g) ?? []).length, 3);
  });
});

/** A tools/call on a raw socket whose reader pauses right after the response head. */
async function pausedCall(r: Running, args: Record<string, unknown>, waitFor: () => boolean, label: string) {
  const s = new RawSession(r.srv.url);
  await s.init();
  const sock = connect(r.srv.port, '127.0.0.1');
  const received: Buffer[] = [];
  const head = new Promise<void>((resolve, reject) => {
    let headSeen = false;
    sock.on('data', (d: Buffer) => {
      received.push(d);
      if (!headSeen && Buffer.concat(received).includes('\r\n\r\n')) {
        headSeen = true;
        resolve();
      }
    });
    sock.on('error', reject);
  });
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  sock.write(
    rawPost(
      r.srv.port,
      s.headers({ accept: 'text/event-stream' }),
      JSON.stringify(toolCall('flood', args, 'f', 'tok')),
    ),
  );
  await withDeadline(head, 5_000, 'response head');
  sock.pause();
  await until(waitFor, 20_000, label);
  sock.resume();
  await withDeadline(closed, 30_000, 'stream end');
  const all = Buffer.concat(received);
  return { s, body: dechunk(all.subarray(all.indexOf('\r\n\r\n') + 4)).toString('utf8') };
}

function messagesOf(
  body: string,
): { id: string; m: Record<string, unknown> & { params?: Record<string, unknown> } }[] {
  const out: { id: string; m: Record<string, unknown> }[] = [];
  createParser({
    onEvent: (e) => {
      if (e.data !== '') out.push({ id: e.id ?? '', m: JSON.parse(e.data) });
    },
  }).feed(body);
  return out as never;
}

describe('backpressure and overflow on the direct path', () => {
  let small: Running;
  before(async () => {
    // A queue that overflows on the third 8 KiB message while the reader is away.
    small = await start({ highWaterMark: 20 * 1024, maxQueueBytes: 20 * 1024, pacingMs: 1 }, 'v1');
  });
  after(() => small.srv.close());

  test('paused reader: progress coalesces, values only grow, the last one and the response arrive', async () => {
    const r = servers.fast;
    const n = 40_000;
    const before = r.srv.handler.stats().coalesced;
    const { s, body } = await pausedCall(
      r,
      { n, kind: 'progress', pad: 200 },
      () => r.srv.handler.stats().coalesced > before,
      'progress coalesced while paused',
    );
    const ms = messagesOf(body);
    const progress = ms
      .filter((x) => x.m['method'] === 'notifications/progress')
      .map((x) => x.m.params?.['progress'] as number);
    assert.ok(progress.length < n, `coalesced: ${progress.length} of ${n} arrived`);
    for (let i = 1; i < progress.length; i++)
      assert.ok((progress[i] ?? 0) > (progress[i - 1] ?? 0), 'increasing');
    assert.equal(progress.at(-1), n, 'the final value arrives');
    assert.equal(r.seen.kinds.at(-1), 'Function', 'sent by the direct function');
    assert.equal(
      (ms.at(-1)?.m['result'] as { content: { text: string }[] } | undefined)?.content[0]?.text,
      `flooded ${n}`,
    );
    await s.delete();
  });

  test('overflow: the connection closes, a resume delivers the rest, nothing lost or repeated', async () => {
    const r = small;
    const n = 1000;
    const { s, body } = await pausedCall(
      r,
      { n, kind: 'message', pad: 8 * 1024 },
      () => r.srv.handler.stats().overflowCloses > 0,
      'overflow close',
    );
    const first = messagesOf(body);
    const last = first.at(-1);
    assert.ok(last !== undefined && first.length < n + 1, `cut early: ${first.length} messages`);
    const get = await s.get({ 'last-event-id': last.id });
    assert.equal(get.status, 200);
    await get.finished(20_000, 'the resumed stream, up to the response');
    get.destroy();
    const resumed = messagesOf(get.text);
    assert.equal(resumed.at(-1)?.m['id'], 'f', 'the response ends the resumed stream');
    const all = [...first, ...resumed];
    assert.equal(r.seen.kinds.at(-1), 'Function', 'sent by the direct function');
    const indices = all
      .filter((x) => x.m['method'] === 'notifications/message')
      .map((x) => (x.m.params?.['data'] as { i: number } | undefined)?.i);
    assert.deepEqual(
      indices,
      Array.from({ length: n }, (_, i) => i + 1),
      'every message once, in order',
    );
    await s.delete();
  });
});
