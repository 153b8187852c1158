// HeldStream (src/tasks/held-stream.ts): the SSE answer of a held task call. Opened at the first
// progress, with the SSE headers and the endpoint's own; while the socket is full only the newest
// progress is kept, written when it drains; the answer is the last event, after any pending progress;
// nothing is written to a closed sink, and a call without progress never opens it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TaskOffer } from '../../src/core/era-2026/task-hook.js';
import { HeldStream } from '../../src/tasks/held-stream.js';
import { FakeSink } from '../helpers/fake-sink.js';

function offer(sink: FakeSink): TaskOffer {
  return { sink, headers: { 'access-control-allow-origin': 'https://app.example' } } as unknown as TaskOffer;
}
const progress = (n: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: 't', progress: n },
  });
const result = { status: 200, body: { jsonrpc: '2.0', id: 1, result: { content: [] } } };

test('opened at the first progress, with the SSE headers and the endpoint headers; the answer ends it', () => {
  const sink = new FakeSink();
  const s = new HeldStream(offer(sink));
  assert.equal(s.open, false);
  s.progress(progress(1));
  assert.equal(s.open, true);
  assert.equal(sink.status, 200);
  assert.equal(sink.headers?.['content-type'], 'text/event-stream');
  assert.equal(sink.headers?.['x-accel-buffering'], 'no');
  assert.equal(sink.headers?.['access-control-allow-origin'], 'https://app.example');
  s.progress(progress(2));
  s.finish(result);
  assert.deepEqual(
    sink.messages().map((m) => (m['params'] as { progress?: number } | undefined)?.progress ?? m['id']),
    [1, 2, 1],
  );
  assert.equal(sink.closed, true);
  s.progress(progress(3));
  s.finish(result);
  assert.equal(sink.messages().length, 3, 'nothing after the answer');
});

test('while the socket is full only the newest progress is kept: written at the drain, or before the answer', () => {
  const sink = new FakeSink();
  const s = new HeldStream(offer(sink));
  sink.blocked = true;
  s.progress(progress(1)); // written (the socket takes it and says it is full)
  for (let n = 2; n <= 50; n++) s.progress(progress(n));
  assert.equal(sink.messages().length, 1);
  sink.blocked = false;
  sink.drain();
  assert.deepEqual(
    sink.messages().map((m) => (m['params'] as { progress: number }).progress),
    [1, 50],
  );
  sink.blocked = true;
  s.progress(progress(51));
  s.progress(progress(52));
  s.progress(progress(53));
  s.finish({ status: 500, body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}' });
  const got = sink.messages();
  assert.deepEqual(
    got.slice(0, -1).map((m) => (m['params'] as { progress: number }).progress),
    [1, 50, 51, 53],
  );
  assert.deepEqual(got.at(-1), { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'x' } });
});

test('a closed sink gets nothing', () => {
  const sink = new FakeSink();
  sink.peerClose();
  const s = new HeldStream(offer(sink));
  s.progress(progress(1));
  s.finish(result);
  assert.equal(sink.body, '');
});
