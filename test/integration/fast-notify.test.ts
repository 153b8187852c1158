// The direct `extra.sendNotification` of the fast dispatch (src/core/sdk/fast-notify.ts) against the
// SDK's own path (`fastDispatch: false`, and a server whose shape the fast path does not take):
// the same bytes on the wire, the same event ids and order, the same final response, also for
// progress of unusual shapes; a notification after the request finished; one after cancellation;
// the capability check; and 2026-07-28 requests to an SDK v1 server (own or shared) on the same path.
// Backpressure and overflow: fast-notify-backpressure.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { normalized, type Running, start } from '../helpers/fast-notify-server.js';
import { notification, RawSession, toolCall, until } from '../helpers/http.js';
import { modernBody, modernSend } from '../helpers/modern.js';

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

  test('a resume from any id of a progress flood replays the frames that followed, byte for byte', async () => {
    const s = new RawSession(servers.fast.srv.url);
    await s.init();
    const reply = await s.post(toolCall('notes', { n: 400, text: 'flood' }, 21, 'tf'));
    assert.equal(reply.status, 200);
    const frames = reply.text.split('\n\n').filter((f) => f.startsWith('id: '));
    // Priming event, 400 progress, 1 log message, the response.
    assert.equal(frames.length, 403);
    for (const k of [0, 1, 2, 3, 4, 200, 401, 402]) {
      const id = /^id: (\S+)/.exec(frames[k] ?? '')?.[1] ?? '';
      const resumed = await s.get({ 'last-event-id': id });
      assert.equal(resumed.status, 200);
      await resumed.finished(5_000, `resume after frame ${k}`);
      const again = resumed.text.split('\n\n').filter((f) => f.startsWith('id: ') && !f.endsWith('data: '));
      assert.deepEqual(again, frames.slice(k + 1), `after frame ${k}`);
    }
    await s.delete();
  });

  test('progress of unusual shapes (key order, own jsonrpc, toJSON, extra keys, a prototype, values JSON writes its own way) leaves as the SDK sends it', async () => {
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
    assert.equal((bodies[0]?.match(/notifications\/progress/g) ?? []).length, 11);
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
