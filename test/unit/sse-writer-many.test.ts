// A tick's batch of frames reaches a sink that offers writeMany (the node bindings) as its frames,
// not as one joined string: in order, as one write, only when the batch is long enough to be worth
// it (4 KiB), and byte for byte what the joined string would have been. A sink without writeMany
// (the fetch binding) and a blocked socket get strings as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseConnection } from '../../src/core/answer/connection.js';
import { FakeSink, nextTick, smallContext } from '../helpers/fake-sink.js';

class ManySink extends FakeSink {
  /** Each writeMany call: its frames and the count of code units it was given. */
  readonly many: { frames: string[]; chars: number }[] = [];
  writeMany(frames: readonly string[], chars: number): boolean {
    this.many.push({ frames: [...frames], chars });
    return this.write(frames.join(''));
  }
}

const frameOf = (i: number): string => `id: t.1.${i}\ndata: {"n":${i},"pad":"${'x'.repeat(80)}"}\n\n`;
const roomy = { highWaterMark: 1 << 20, maxQueueBytes: 1 << 22 };
/** `n` frames numbered from `from`. */
const framesOf = (n: number, from = 0): string[] => Array.from({ length: n }, (_, i) => frameOf(from + i));

/** A connection on `sink`, opened, its opening bytes written (the next tick). */
async function opened(sink: FakeSink): Promise<SseConnection> {
  const c = new SseConnection(sink, smallContext(roomy), 'wait-for-room');
  c.open(200, { 'content-type': 'text/event-stream' }, ': open\n\n');
  await nextTick();
  return c;
}

test('a long batch goes to writeMany as its frames, in order, once; the first frame of the tick at once', async () => {
  const sink = new ManySink();
  const c = await opened(sink);
  const frames = framesOf(100);
  for (const f of frames) assert.equal(c.write(f), 'written');
  assert.equal(sink.body, `: open\n\n${frames[0]}`, 'the first frame of a tick leaves at once');
  await nextTick();
  assert.equal(sink.many.length, 1, 'the rest of the tick in one writeMany');
  const [call] = sink.many;
  assert.deepEqual(call?.frames, frames.slice(1));
  assert.equal(call?.chars, frames.slice(1).join('').length);
  assert.equal(sink.body, `: open\n\n${frames.join('')}`);
});

test('a short batch goes as one string through write(); so does every batch to a sink without writeMany', async () => {
  for (const sink of [new ManySink(), new FakeSink()]) {
    const c = await opened(sink);
    const frames = framesOf(10);
    for (const f of frames) c.write(f);
    await nextTick();
    if (sink instanceof ManySink) assert.equal(sink.many.length, 0, 'under 4 KiB: no writeMany');
    const wide = framesOf(100, 100);
    for (const f of wide) c.write(f);
    await nextTick();
    if (sink instanceof ManySink) assert.equal(sink.many.length, 1);
    assert.equal(sink.body, `: open\n\n${frames.join('')}${wide.join('')}`);
  }
});

test('a batch reaching 64 KiB leaves within the tick; a blocked socket queues strings and drains in order', async () => {
  const sink = new ManySink();
  const c = await opened(sink);
  const frames = framesOf(800);
  for (const f of frames) c.write(f);
  assert.ok(sink.many.length >= 1, '64 KiB of frames went before the tick ended');
  assert.ok(sink.many.every((m) => m.chars >= 64 * 1024));
  await nextTick();
  sink.blocked = true;
  const more = framesOf(50, 800);
  assert.equal(c.write(more[0] as string), 'written', 'the socket takes it and says it is full');
  assert.equal(c.writer.blocked, true);
  for (const f of more.slice(1)) assert.equal(c.write(f), 'queued');
  await nextTick();
  const calls = sink.many.length;
  assert.ok(c.writer.queuedMessages > 0, 'held in the queue while blocked');
  sink.drain();
  assert.equal(sink.many.length, calls, 'the queue drains as a string');
  assert.equal(sink.body, `: open\n\n${frames.join('')}${more.join('')}`);
});
