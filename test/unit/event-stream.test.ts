/**
 * A session's event stream (core/stream/event-stream.ts) on fake sinks: events get ids and go to
 * the replay store whether or not a connection is attached; a resume from a cursor replays exactly
 * what followed it, then continues live with no gap and no duplicate; a cursor the store no longer
 * holds is refused and leaves the live connection alone; an overflow drops the connection
 * (close-and-resume) with the frame kept for the resume.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventStream } from '../../src/core/stream/event-stream.js';
import { MemoryEventStore } from '../../src/events/memory-event-store.js';
import { FakeSink, nextTick, smallContext, streamContext } from '../helpers/fake-sink.js';

const msg = (n: number, pad = 0): string =>
  JSON.stringify({ jsonrpc: '2.0', method: 'm', params: { n, pad: 'x'.repeat(pad) } });
const ns = (sink: FakeSink): unknown[] => sink.messages().map((m) => (m['params'] as { n: number }).n);

test('events have ids and reach the store; a resume replays what followed the cursor, then goes live', async () => {
  const ctx = streamContext();
  const s = new EventStream(ctx, 1, 'post');
  const a = new FakeSink();
  s.open(a, {});
  // seq 1 is the priming event; messages are seq 2, 3, 4.
  for (const n of [1, 2, 3]) assert.equal(s.send(msg(n)), undefined);
  await nextTick();
  assert.deepEqual(ns(a), [1, 2, 3]);
  assert.equal(a.ids().length, 4, 'priming event and three messages, each with an id');
  assert.equal(ctx.shared.live.size, 1);
  a.peerClose();
  assert.equal(s.attached, false);
  assert.equal(ctx.shared.live.size, 0, 'the lost connection left the live set');
  // Nobody attached: these wait in the store.
  void s.send(msg(4));
  void s.send(msg(5));
  const b = new FakeSink();
  assert.equal(await s.resume(b, {}, 3), 'ok');
  void s.send(msg(6));
  await nextTick();
  assert.deepEqual(ns(b), [3, 4, 5, 6], 'after seq 3 (message 2): 3, 4, 5 replayed, then 6 live');
  assert.equal(ctx.shared.live.size, 1);
  s.finish(1000);
  await nextTick();
  assert.equal(b.ended, true);
  assert.equal(ctx.shared.live.size, 0);
  ctx.store.close();
});

test('a resume takes over a live connection: no frame lost or repeated across the two', async () => {
  const ctx = streamContext();
  const s = new EventStream(ctx, 1, 'post');
  const a = new FakeSink();
  s.open(a, {});
  void s.send(msg(1));
  void s.send(msg(2));
  await nextTick();
  const b = new FakeSink();
  assert.equal(await s.resume(b, {}, 2), 'ok');
  assert.equal(a.ended, true, 'the replaced connection is ended');
  void s.send(msg(3));
  await nextTick();
  assert.deepEqual(ns(a), [1, 2]);
  assert.deepEqual(ns(b), [2, 3]);
  assert.equal(ctx.shared.live.size, 1);
  ctx.store.close();
});

test('a cursor the store no longer holds is refused; the attached connection goes on', async () => {
  const store = new MemoryEventStore({ limits: { maxCount: 2, maxBytes: 1 << 20 } });
  const ctx = streamContext(smallContext(), {}, store);
  const s = new EventStream(ctx, 1, 'post');
  const a = new FakeSink();
  s.open(a, {});
  for (const n of [1, 2, 3, 4, 5]) void s.send(msg(n));
  const b = new FakeSink();
  assert.equal(await s.resume(b, {}, 2), 'evicted');
  assert.equal(b.status, undefined, 'nothing written to the refused request');
  void s.send(msg(6));
  await nextTick();
  assert.deepEqual(ns(a), [1, 2, 3, 4, 5, 6]);
  store.close();
});

test('overflow (close-and-resume): the connection is dropped, counted, and the resume gets the frame', async () => {
  const small = smallContext({ highWaterMark: 64, maxQueueBytes: 256 });
  const ctx = streamContext(small);
  const s = new EventStream(ctx, 1, 'post');
  let detached = 0;
  s.watch({
    streamDetached: () => {
      detached++;
    },
    streamAttached: () => undefined,
  });
  const a = new FakeSink();
  s.open(a, {});
  await nextTick();
  a.blocked = true;
  void s.send(msg(1));
  await nextTick();
  void s.send(msg(2, 100));
  void s.send(msg(3, 300));
  assert.equal(small.counters.get('overflowCloses'), 1);
  assert.equal(a.destroyed, true);
  assert.equal(s.attached, false);
  assert.equal(detached, 1);
  assert.equal(small.live.size, 0);
  const b = new FakeSink();
  // The client got message 1 (seq 2) before the socket stalled.
  assert.equal(await s.resume(b, {}, 2), 'ok');
  await nextTick();
  assert.deepEqual(ns(b), [2, 3], 'the queued and the overflowing frame both come back');
  ctx.store.close();
});
