// Backpressure and overflow on the direct `extra.sendNotification` (src/core/sdk/fast-notify.ts):
// a paused reader makes progress coalesce (values only grow, the last one and the response arrive);
// a queue that overflows closes the connection and a resume delivers the rest, nothing lost or
// repeated. Both from frames the direct function sent.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createParser } from 'eventsource-parser';
import { withDeadline } from '../helpers/deadline.js';
import { type Running, start } from '../helpers/fast-notify-server.js';
import { dechunk, RawSession, rawPost, toolCall, until } from '../helpers/http.js';

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
  let fast: Running;
  let small: Running;
  before(async () => {
    fast = await start({}, 'v1');
    // A queue that overflows on the third 8 KiB message while the reader is away.
    small = await start({ highWaterMark: 20 * 1024, maxQueueBytes: 20 * 1024, pacingMs: 1 }, 'v1');
  });
  after(async () => {
    await fast.srv.close();
    await small.srv.close();
  });

  test('paused reader: progress coalesces, values only grow, the last one and the response arrive', async () => {
    const r = fast;
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
    // Under close-and-resume a resumed connection whose reader falls behind is closed too (its queue
    // is as small as the first one's), so the client resumes from its last id until the response
    // arrives, as the SDK client does; bounded.
    const resumed: ReturnType<typeof messagesOf> = [];
    let cursor = last.id;
    for (let resumes = 1; resumed.at(-1)?.m['id'] !== 'f'; resumes++) {
      assert.ok(resumes <= 50, `the response within 50 resumes (${resumed.length} messages so far)`);
      const get = await s.get({ 'last-event-id': cursor });
      assert.equal(get.status, 200);
      await get.finished(20_000, 'the resumed stream, up to the response or an overflow close');
      get.destroy();
      const got = messagesOf(get.text);
      resumed.push(...got);
      cursor = got.at(-1)?.id ?? cursor;
    }
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
