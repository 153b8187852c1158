// HeldStream (src/tasks/held-stream.ts) on the era's offer stream (core/era-2026/offer-stream.ts): the
// SSE answer of a held task call. Opened at the first progress (or by keepAlive), with the SSE headers
// and the endpoint's own; while the socket is full only the newest progress is kept, written when it
// drains; the answer is the last event, after any pending progress; nothing is written to a closed
// sink, and a call without progress never opens it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openOfferStream } from '../../src/core/era-2026/offer-stream.js';
import type { TaskOffer } from '../../src/core/era-2026/task-hook.js';
import { HeldStream } from '../../src/tasks/held-stream.js';
import { FakeSink, nextTick, smallContext } from '../helpers/fake-sink.js';

const HEADERS = { 'access-control-allow-origin': 'https://app.example' };
function offer(sink: FakeSink, keepsAlive = true): { o: TaskOffer; opened: () => number } {
  let opened = 0;
  const ctx = smallContext();
  const o = {
    sink,
    headers: HEADERS,
    keepsAlive,
    openStream: () => {
      opened++;
      return openOfferStream(sink, ctx, HEADERS);
    },
  } as unknown as TaskOffer;
  return { o, opened: () => opened };
}
const progress = (n: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: 't', progress: n },
  });
const result = { status: 200, body: { jsonrpc: '2.0', id: 1, result: { content: [] } } };
const progressOf = (m: Record<string, unknown>) =>
  (m['params'] as { progress?: number } | undefined)?.progress;

test('opened at the first progress, with the SSE headers and the endpoint headers; the answer ends it', async () => {
  const sink = new FakeSink();
  const { o, opened } = offer(sink);
  const s = new HeldStream(o, 't');
  assert.equal(s.open, false);
  s.progress(progress(1));
  assert.equal(s.open, true);
  assert.equal(sink.status, 200);
  assert.equal(sink.headers?.['content-type'], 'text/event-stream');
  assert.equal(sink.headers?.['x-accel-buffering'], 'no');
  assert.equal(sink.headers?.['access-control-allow-origin'], 'https://app.example');
  s.progress(progress(2));
  s.finish(result);
  await nextTick();
  assert.deepEqual(
    sink.messages().map((m) => progressOf(m) ?? m['id']),
    [1, 2, 1],
  );
  assert.equal(sink.closed, true);
  s.progress(progress(3));
  s.finish(result);
  assert.equal(sink.messages().length, 3, 'nothing after the answer');
  assert.equal(opened(), 1, 'one stream');
});

test('while the socket is full only the newest progress is kept: written at the drain, or before the answer', async () => {
  const sink = new FakeSink();
  const { o } = offer(sink);
  const s = new HeldStream(o, 't');
  sink.blocked = true;
  s.progress(progress(1)); // written (the socket takes it and says it is full)
  await nextTick();
  for (let n = 2; n <= 50; n++) s.progress(progress(n));
  await nextTick();
  assert.equal(sink.messages().length, 1);
  sink.blocked = false;
  sink.drain();
  await nextTick();
  assert.deepEqual(
    sink.messages().map((m) => progressOf(m)),
    [1, 50],
  );
  sink.blocked = true;
  s.progress(progress(51));
  await nextTick();
  s.progress(progress(52));
  s.progress(progress(53));
  s.finish({ status: 500, body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}' });
  sink.blocked = false;
  sink.drain();
  await nextTick();
  const got = sink.messages();
  assert.deepEqual(
    got.slice(0, -1).map((m) => progressOf(m)),
    [1, 50, 51, 53],
  );
  assert.deepEqual(got.at(-1), { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'x' } });
});

test('keepAlive opens the stream when the endpoint keeps streams alive; a closed sink gets nothing', () => {
  const a = new FakeSink();
  const held = new HeldStream(offer(a).o, 't');
  held.keepAlive();
  assert.equal(held.open, true);
  assert.equal(a.headers?.['content-type'], 'text/event-stream');
  const quiet = new HeldStream(offer(new FakeSink(), false).o, 't');
  quiet.keepAlive();
  assert.equal(quiet.open, false, 'keepaliveMs 0: the answer stays one JSON body');
  const sink = new FakeSink();
  sink.peerClose();
  const { o, opened } = offer(sink);
  const s = new HeldStream(o, 't');
  s.progress(progress(1));
  s.keepAlive();
  s.finish(result);
  assert.equal(sink.body, '');
  assert.equal(opened(), 0);
});

test('partial output and log messages are never coalesced: while the socket is full they queue and the tool is told to wait', async () => {
  const sink = new FakeSink();
  const { o, opened } = offer(sink);
  const s = new HeldStream(o, 't');
  const log = (n: number) =>
    JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: `line ${n}` },
    });
  sink.blocked = true;
  assert.equal(s.event(log(1)), undefined, 'the first goes at once');
  assert.equal(s.open, true, 'opened by it');
  await nextTick();
  const waits = [2, 3, 4, 5, 6].map((n) => s.event(log(n)));
  assert.ok(
    waits.some((w) => w !== undefined),
    'a full socket makes the tool wait',
  );
  s.progress(progress(1));
  let released = false;
  void Promise.all(waits).then(() => {
    released = true;
  });
  await nextTick();
  assert.equal(released, false, 'not while the socket is full');
  assert.equal(sink.messages().length, 1);
  sink.blocked = false;
  sink.drain();
  await nextTick();
  assert.equal(released, true, 'the drain lets the tool go on');
  s.finish(result);
  await nextTick();
  const got = sink.messages();
  assert.deepEqual(
    got
      .filter((m) => m['method'] === 'notifications/message')
      .map((m) => (m['params'] as { data: string }).data),
    ['line 1', 'line 2', 'line 3', 'line 4', 'line 5', 'line 6'],
    'every line, in order',
  );
  assert.equal(got.filter((m) => progressOf(m) === 1).length, 1);
  assert.deepEqual(got.at(-1), result.body, 'the answer last');
  assert.equal(opened(), 1);
});
