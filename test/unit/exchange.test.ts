/**
 * One POST's exchange (core/era-2025/exchange.ts) against a fake host and sink: JSON when every
 * response comes first (one, or a batch in arrival order), upgraded to the session's POST stream by
 * the first related message, SSE from the start for a client refusing JSON, 202 when every request
 * was cancelled, a refusal instead of the answer, and the orphan timer: a stream nobody resumes for
 * orphanTimeoutMs cancels its requests, a resume in time does not.
 */
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { Exchange, type ExchangeHooks, type ExchangeHost } from '../../src/core/era-2025/exchange.js';
import { Refusals } from '../../src/core/pipeline/refusal.js';
import type { Policy } from '../../src/core/pipeline/route.js';
import { EventStream } from '../../src/core/stream/event-stream.js';
import type { RequestId } from '../../src/jsonrpc/message.js';
import { FakeSink, nextTick, streamContext } from '../helpers/fake-sink.js';

interface Fixture {
  ex: Exchange;
  sink: FakeSink;
  streams: EventStream[];
  cancels: { ids: RequestId[]; reason: string }[];
  orphaned: RequestId[];
  modes: string[];
  done: () => number;
  ctx: ReturnType<typeof streamContext>;
}

function exchange(
  policy: Policy,
  requests: [RequestId, string][],
  hooks: ExchangeHooks = {},
  orphanTimeoutMs = 60_000,
): Fixture {
  const ctx = streamContext(undefined, { orphanTimeoutMs });
  const sink = new FakeSink();
  const streams: EventStream[] = [];
  const cancels: Fixture['cancels'] = [];
  const orphaned: RequestId[] = [];
  const modes: string[] = [];
  let done = 0;
  const host: ExchangeHost = {
    newPostStream: () => {
      const s = new EventStream(ctx, streams.length + 1, 'post');
      streams.push(s);
      return s;
    },
    cancel: (ids, reason) => cancels.push({ ids, reason }),
    exchangeDone: () => done++,
    countMode: (mode) => modes.push(mode),
    observeDuration: () => {},
    orphaned: (ids) => orphaned.push(...ids),
    standaloneDelivered: () => undefined,
    shared: ctx.shared,
  };
  const ex = new Exchange(host, sink, new Map(requests), requests.length > 1, policy, {}, 0, hooks);
  ex.start();
  return { ex, sink, streams, cancels, orphaned, modes, done: () => done, ctx };
}

const response = (id: RequestId): string => JSON.stringify({ jsonrpc: '2.0', id, result: {} });
const progress = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: {} });

test('auto: a response before anything related is a JSON answer', () => {
  const f = exchange('auto', [[1, 'tools/call']]);
  assert.equal(f.ex.response(1, response(1), 0), undefined);
  assert.equal(f.sink.status, 200);
  assert.equal(f.sink.headers?.['content-type'], 'application/json');
  assert.equal(f.sink.body, response(1));
  assert.deepEqual(f.streams, []);
  assert.deepEqual(f.modes, ['json']);
  assert.equal(f.done(), 1);
  f.ctx.store.close();
});

test('a batch answers in one JSON array, in arrival order', () => {
  const f = exchange('auto', [
    [1, 'a'],
    [2, 'b'],
  ]);
  void f.ex.response(2, response(2), 0);
  assert.equal(f.sink.status, undefined, 'not before the last response');
  void f.ex.response(1, response(1), 0);
  assert.equal(f.sink.body, `[${response(2)},${response(1)}]`);
  f.ctx.store.close();
});

test('auto: the first related message upgrades to the POST stream; the response ends it', async () => {
  const f = exchange('auto', [[7, 'tools/call']]);
  assert.equal(f.ex.related(progress, 'tok'), undefined);
  assert.equal(f.ex.streaming, true);
  assert.equal(f.streams.length, 1);
  assert.deepEqual(f.modes, ['sse']);
  void f.ex.response(7, response(7), 0);
  await nextTick();
  assert.match(f.sink.headers?.['content-type'] ?? '', /text\/event-stream/);
  assert.deepEqual(
    f.sink.messages().map((m) => m['method'] ?? m['id']),
    ['notifications/progress', 7],
  );
  assert.equal(f.sink.ended, true);
  assert.equal(f.ctx.shared.live.size, 0);
  assert.equal(f.done(), 1);
  f.ctx.store.close();
});

test('json: a related message has no stream here; sse: the stream opens at start', async () => {
  const j = exchange('json', [[1, 'x']]);
  assert.equal(j.ex.related(progress, undefined), 'nostream');
  assert.equal(j.ex.streaming, false);
  j.ctx.store.close();
  const s = exchange('sse', [[1, 'x']]);
  assert.equal(s.ex.streaming, true);
  assert.equal(s.ctx.shared.live.size, 1);
  void s.ex.response(1, response(1), 0);
  await nextTick();
  assert.deepEqual(
    s.sink.messages().map((m) => m['id']),
    [1],
  );
  s.ctx.store.close();
});

test('every request cancelled: 202 with no body', () => {
  const f = exchange('auto', [
    [1, 'a'],
    [2, 'b'],
  ]);
  f.ex.cancelled(1);
  f.ex.cancelled(2);
  assert.equal(f.sink.status, 202);
  assert.equal(f.sink.body, '');
  f.ctx.store.close();
});

test('beforeAnswer may refuse: the refusal goes instead of the answer', () => {
  const f = exchange('auto', [[1, 'initialize']], { beforeAnswer: () => Refusals.shuttingDown(1) });
  void f.ex.response(1, response(1), 0);
  assert.equal(f.sink.status, 503);
  assert.equal(f.done(), 1);
  f.ctx.store.close();
});

test('abandon: a pending answer gets the refusal; an open stream is interrupted', async () => {
  const p = exchange('auto', [[1, 'x']]);
  p.ex.abandon(Refusals.requestCut());
  assert.equal(p.sink.status, Refusals.requestCut().status);
  assert.equal(p.done(), 1);
  p.ex.abandon(Refusals.requestCut());
  assert.equal(p.done(), 1, 'once');
  p.ctx.store.close();
  const s = exchange('auto', [[1, 'x']]);
  void s.ex.related(progress, 'k');
  await nextTick();
  s.ex.abandon(Refusals.requestCut());
  assert.equal(s.sink.ended, true);
  assert.match(s.sink.body, /retry: /, 'a retry hint so the client resumes');
  s.ctx.store.close();
});

test('a stream nobody resumes within orphanTimeoutMs cancels its requests; a resume in time does not', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const f = exchange('auto', [[1, 'x']], {}, 500);
    void f.ex.related(progress, 'k');
    f.sink.peerClose();
    mock.timers.tick(499);
    assert.equal(f.cancels.length, 0);
    mock.timers.tick(1);
    // It strikes after the loop's next read of the sockets (flow/late-deadline.ts), an immediate later.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(f.orphaned, [1]);
    assert.deepEqual(
      f.cancels.map((c) => c.ids),
      [[1]],
    );
    assert.equal(f.done(), 1, 'no response will come: the exchange is over');
    f.ctx.store.close();
  } finally {
    mock.timers.reset();
  }
});

test('a resume within orphanTimeoutMs disarms the orphan timer', async () => {
  const g = exchange('auto', [[1, 'x']], {}, 100);
  void g.ex.related(progress, 'k');
  g.sink.peerClose();
  const stream = g.ex.stream;
  assert.ok(stream !== undefined);
  assert.equal(await stream.resume(new FakeSink(), {}, 1), 'ok');
  // Well past the timeout (real timers: the resume reads the store asynchronously).
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(g.cancels.length, 0, 'resumed in time: nothing cancelled');
  assert.equal(g.done(), 0, 'the request still runs');
  void g.ex.response(1, response(1), 0);
  assert.equal(g.done(), 1);
  g.ctx.store.close();
});
