/**
 * The shared answer (core/answer/) on a fake sink: JSON now or upgraded to SSE by the first related
 * message or the streamAfterMs timer; a blocked socket under each overflow policy (close-and-resume
 * drops the connection and counts it, wait-for-room holds the frame until drain); finish; and the
 * live set, which a connection joins on open and leaves however it goes.
 */
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { Answer } from '../../src/core/answer/answer.js';
import { type OverflowPolicy, SseConnection } from '../../src/core/answer/connection.js';
import type { Policy } from '../../src/core/pipeline/route.js';
import { FakeSink, nextTick, type SmallContext, smallContext } from '../helpers/fake-sink.js';

interface Built {
  answer: Answer<SseConnection>;
  sink: FakeSink;
  ctx: SmallContext;
  opened: { overflow: OverflowPolicy; fromTimer: boolean }[];
}

function build(policy: Policy, overflow: OverflowPolicy = 'wait-for-room'): Built {
  const sink = new FakeSink();
  const ctx = smallContext();
  const opened: Built['opened'] = [];
  const answer = new Answer<SseConnection>(sink, policy, overflow, (o, fromTimer) => {
    opened.push({ overflow: o, fromTimer });
    const c = new SseConnection(sink, ctx, o);
    c.open(200, { 'content-type': 'text/event-stream' }, fromTimer ? ': open\n\n' : '');
    return c;
  });
  return { answer, sink, ctx, opened };
}

const frame = (n: number, pad = 0): string => `data: {"n":${n},"pad":"${'x'.repeat(pad)}"}\n\n`;

test('auto: a response before anything related is a JSON answer; no stream is opened', () => {
  const { answer, sink, opened } = build('auto');
  assert.equal(answer.answersJson(false), true);
  answer.respond(200, { 'content-type': 'application/json' }, '{"id":1}');
  assert.equal(sink.status, 200);
  assert.equal(sink.headers?.['content-type'], 'application/json');
  assert.equal(sink.body, '{"id":1}');
  assert.equal(answer.done, true);
  assert.deepEqual(opened, []);
  assert.equal(answer.carrier(), undefined, 'a finished answer carries nothing');
});

test('auto: the first related message upgrades the answer once, with its overflow policy', async () => {
  const { answer, sink, ctx, opened } = build('auto', 'wait-for-room');
  const c = answer.carrier();
  assert.ok(c !== undefined);
  assert.equal(answer.streaming, true);
  assert.equal(answer.carrier(), c, 'the second related message rides on the same stream');
  assert.deepEqual(opened, [{ overflow: 'wait-for-room', fromTimer: false }]);
  assert.equal(ctx.live.size, 1, 'the open connection is in the live set');
  assert.equal(c.send(frame(1)), undefined);
  assert.equal(answer.answersJson(false), false, 'once streaming, the answer is no longer JSON');
  answer.finish();
  assert.equal(c.finish(frame(2)), undefined);
  await nextTick();
  assert.equal(sink.status, 200);
  assert.deepEqual(
    sink.messages().map((m) => m['n']),
    [1, 2],
  );
  assert.equal(sink.ended, true);
  assert.equal(ctx.live.size, 0, 'an ended connection left the live set');
});

test('json: related messages have no stream; sse: an error may still be JSON (force)', () => {
  const json = build('json');
  assert.equal(json.answer.carrier(), undefined);
  assert.equal(json.answer.pending, true);
  assert.deepEqual(json.opened, []);
  const sse = build('sse');
  assert.equal(sse.answer.answersJson(false), false, 'a client refusing JSON gets a stream');
  assert.equal(sse.answer.answersJson(true), true, 'an error keeps its HTTP status');
});

test('a pending answer whose client is gone carries nothing (no stream on a closed response)', () => {
  const { answer, sink, opened } = build('auto');
  sink.peerClose();
  assert.equal(answer.carrier(), undefined);
  assert.deepEqual(opened, []);
});

test('streamAfterMs: an undecided answer becomes a stream by the timer; finish() disarms it', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const a = build('auto');
    a.answer.armTimer(100);
    mock.timers.tick(99);
    assert.equal(a.answer.pending, true);
    mock.timers.tick(1);
    assert.deepEqual(a.opened, [{ overflow: 'wait-for-room', fromTimer: true }]);
    assert.equal(a.answer.streaming, true);

    const b = build('auto');
    b.answer.armTimer(100);
    b.answer.finish();
    mock.timers.tick(200);
    assert.deepEqual(b.opened, [], 'a finished (cancelled) answer is never upgraded');

    const c = build('json');
    c.answer.armTimer(100);
    mock.timers.tick(200);
    assert.deepEqual(c.opened, [], 'policy json never streams');
  } finally {
    mock.timers.reset();
  }
});

test('blocked socket, close-and-resume: a frame that does not fit drops the connection', async () => {
  const sink = new FakeSink();
  const ctx = smallContext({ highWaterMark: 64, maxQueueBytes: 256 });
  let overflowed = 0;
  let closed = 0;
  const c = new SseConnection(sink, ctx, 'close-and-resume', {
    connectionOverflowed: (x) => {
      assert.equal(x, c);
      assert.equal(closed, 0, 'told of the overflow before the close');
      overflowed++;
    },
    connectionClosed: (x) => {
      assert.equal(x, c);
      closed++;
    },
  });
  c.open(200, {}, ': open\n\n');
  await nextTick();
  assert.equal(ctx.live.size, 1);
  sink.blocked = true;
  assert.equal(c.write(frame(1)), 'written', 'the write that finds the socket full is still taken');
  await nextTick();
  assert.equal(c.write(frame(2, 100)), 'queued');
  assert.equal(c.write(frame(3, 300)), 'overflow');
  assert.equal(overflowed, 1);
  assert.equal(ctx.counters.get('overflowCloses'), 1);
  assert.equal(sink.destroyed, true);
  assert.equal(ctx.live.size, 0, 'the dropped connection left the live set');
  assert.equal(c.write(frame(4)), 'closed');
  await nextTick();
  assert.equal(closed, 1, 'the owner is told the connection is gone, once');
});

test('blocked socket, wait-for-room: the frame waits for drain and is written then, in order', async () => {
  const sink = new FakeSink();
  const ctx = smallContext({ highWaterMark: 64, maxQueueBytes: 256 });
  const c = new SseConnection(sink, ctx, 'wait-for-room');
  c.open(200, {}, ': open\n\n');
  await nextTick();
  sink.blocked = true;
  assert.equal(c.send(frame(1)), undefined);
  await nextTick();
  const queued = c.send(frame(2, 100));
  assert.ok(queued instanceof Promise, 'above the high-water mark the producer waits');
  const big = c.send(frame(3, 300));
  assert.ok(big instanceof Promise, 'a frame that does not fit waits for room');
  assert.equal(ctx.counters.get('overflowCloses'), 0);
  assert.equal(sink.destroyed, false);
  assert.equal(ctx.live.size, 1);
  sink.drain();
  await big;
  await queued;
  await nextTick();
  assert.deepEqual(
    sink.messages().map((m) => m['n']),
    [1, 2, 3],
  );
  assert.equal(ctx.counters.get('eventsWritten'), 3);
  // finish() under the same policy: the last frame waits for room too, then the response ends.
  sink.blocked = true;
  c.write(frame(4));
  await nextTick();
  assert.equal(c.write(frame(5, 200)), 'queued');
  const done = c.finish(frame(6, 100));
  assert.ok(done instanceof Promise);
  assert.equal(sink.ended, false);
  sink.drain();
  await done;
  assert.equal(sink.ended, true);
  assert.deepEqual(
    sink.messages().map((m) => m['n']),
    [1, 2, 3, 4, 5, 6],
  );
  assert.equal(ctx.live.size, 0);
});

test('wait-for-room: a frame no longer wanted once there is room is not written', async () => {
  const sink = new FakeSink();
  const ctx = smallContext({ highWaterMark: 64, maxQueueBytes: 256 });
  const c = new SseConnection(sink, ctx, 'wait-for-room');
  c.open(200, {}, '');
  await nextTick();
  sink.blocked = true;
  c.write(frame(1, 200));
  await nextTick();
  let wanted = true;
  const p = c.send(frame(2, 300), undefined, () => wanted);
  wanted = false;
  sink.drain();
  await p;
  await nextTick();
  assert.deepEqual(
    sink.messages().map((m) => m['n']),
    [1],
  );
});

test('the peer closing leaves the live set; so does destroy()', () => {
  const ctx = smallContext();
  const a = new FakeSink();
  const ca = new SseConnection(a, ctx, 'wait-for-room');
  ca.open(200, {}, '');
  const b = new FakeSink();
  const cb = new SseConnection(b, ctx, 'close-and-resume');
  cb.open(200, {}, '');
  assert.equal(ctx.live.size, 2);
  a.peerClose();
  assert.equal(ctx.live.size, 1);
  cb.destroy();
  assert.equal(ctx.live.size, 0);
  assert.equal(b.destroyed, true);
});

test("the first bytes are reported once, when they reach the sink (a stream's time to first byte)", async () => {
  const sink = new FakeSink();
  const c = new SseConnection(sink, smallContext(), 'wait-for-room');
  let firsts = 0;
  c.writer.onFirstBytes(() => {
    firsts++;
    assert.ok(sink.writes === 0 && !sink.ended, 'reported before the bytes are handed over');
  });
  c.open(200, {}, ': open\n\n');
  assert.equal(firsts, 0, 'the opening bytes wait for the end of the tick');
  await nextTick();
  assert.equal(firsts, 1);
  c.write(frame(1));
  await nextTick();
  c.end();
  assert.equal(firsts, 1, 'once');
});
