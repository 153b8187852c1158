// The writer puts its drain listener on the sink at the first refused write, not when it opens:
// drain only follows a refusal, so an idle stream (most GET streams) keeps no listener for it
// (idle memory per stream, docs/benchmarks.md). A stream that blocks still resumes on drain. A
// connection and its writer hear of the close through one listener.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseConnection } from '../../src/core/answer/connection.js';
import { FakeSink, nextTick, smallContext } from '../helpers/fake-sink.js';

class CountingSink extends FakeSink {
  drainListeners = 0;
  override onDrain(listener: () => void): void {
    this.drainListeners++;
    super.onDrain(listener);
  }
}

test('no drain listener until a write is refused; one from then on, and the queue drains', async () => {
  const sink = new CountingSink();
  const c = new SseConnection(sink, smallContext(), 'wait-for-room');
  c.open(200, { 'content-type': 'text/event-stream' }, ': open\n\n');
  await nextTick();
  assert.equal(sink.drainListeners, 0, 'an open, idle stream has no drain listener');
  assert.equal(c.write('data: {"n":1}\n\n'), 'written');
  await nextTick();
  assert.equal(sink.drainListeners, 0, 'writes the socket took add none');
  sink.blocked = true;
  c.write('data: {"n":2}\n\n');
  await nextTick();
  assert.equal(sink.drainListeners, 1, 'the refused write put it on');
  assert.equal(c.writer.blocked, true);
  c.write('data: {"n":3}\n\n');
  await nextTick();
  assert.equal(c.writer.queuedMessages > 0, true, 'held while blocked');
  sink.drain();
  assert.equal(c.writer.blocked, false, 'drain reached the writer');
  assert.equal(c.writer.queuedMessages, 0);
  assert.deepEqual(
    sink.messages().map((m) => m['n']),
    [1, 2, 3],
  );
  sink.blocked = true;
  c.write('data: {"n":4}\n\n');
  await nextTick();
  assert.equal(sink.drainListeners, 1, 'a second stall reuses the listener');
  sink.drain();
  assert.deepEqual(
    sink.messages().map((m) => m['n']),
    [1, 2, 3, 4],
  );
});

class CloseCountingSink extends FakeSink {
  closeListeners = 0;
  override onClose(listener: () => void): void {
    this.closeListeners++;
    super.onClose(listener);
  }
}

test('a connection and its writer share one close listener; the peer closing reaches both', async () => {
  const sink = new CloseCountingSink();
  const shared = smallContext();
  const c = new SseConnection(sink, shared, 'wait-for-room');
  c.open(200, { 'content-type': 'text/event-stream' }, ': open\n\n');
  await nextTick();
  assert.equal(sink.closeListeners, 1, 'one for the connection and its writer');
  assert.equal(shared.live.size, 1);
  const room = c.writer.waitForRoom();
  sink.peerClose();
  assert.equal(c.writer.closed, true, 'the writer saw the close');
  assert.equal(c.write('data: {}\n\n'), 'closed');
  assert.equal(shared.live.size, 0, 'and the connection left the live set');
  await room;
});
