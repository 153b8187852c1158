import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { OutboundQueue } from '../../src/flow/outbound-queue.js';

describe('flow/outbound-queue', () => {
  test('frames without key drain in order; bytes and count track them', () => {
    const q = new OutboundQueue();
    q.push('a1');
    q.push('bb2');
    q.push('c3');
    assert.equal(q.count, 3);
    assert.equal(q.bytes, 7);
    assert.equal(q.drain(), 'a1bb2c3');
    assert.equal(q.count, 0);
    assert.equal(q.bytes, 0);
    assert.equal(q.drain(), '');
  });

  test('a newer frame with the same key replaces the queued one and moves to the tail', () => {
    const q = new OutboundQueue();
    q.push('[p1]', 'n1');
    q.push('[m]');
    q.push('[p2]', 'n1');
    q.push('[other1]', 's1');
    q.push('[p3]', 'n1');
    assert.equal(q.coalesced, 2);
    assert.equal(q.count, 3);
    assert.equal(q.bytes, '[m][other1][p3]'.length);
    assert.equal(q.drain(), '[m][other1][p3]');
  });

  test('keys are independent, and after drain a key starts over', () => {
    const q = new OutboundQueue();
    q.push('a', 'k1');
    q.push('b', 'k2');
    assert.equal(q.drain(), 'ab');
    q.push('c', 'k1');
    assert.equal(q.coalesced, 0);
    assert.equal(q.drain(), 'c');
  });

  test('model: newest frame per key survives, keyless frames never drop, order is by last push (property)', () => {
    const item = fc.record({
      key: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }),
      len: fc.integer({ min: 1, max: 9 }),
    });
    fc.assert(
      fc.property(fc.array(item, { maxLength: 200 }), (items) => {
        const q = new OutboundQueue();
        const model: { frame: string; key: string | undefined }[] = [];
        let coalesced = 0;
        items.forEach((it, i) => {
          const frame = `<${i}:${'x'.repeat(it.len)}>`;
          q.push(frame, it.key);
          if (it.key !== undefined) {
            const old = model.findIndex((m) => m.key === it.key);
            if (old >= 0) {
              model.splice(old, 1);
              coalesced++;
            }
          }
          model.push({ frame, key: it.key });
          assert.equal(
            q.bytes,
            model.reduce((a, m) => a + m.frame.length, 0),
          );
          assert.equal(q.count, model.length);
        });
        assert.equal(q.coalesced, coalesced);
        assert.equal(q.drain(), model.map((m) => m.frame).join(''));
      }),
      { numRuns: 500 },
    );
  });

  test('memory: a flood of coalesced frames does not retain the replaced frames', {}, () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const q = new OutboundQueue();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 50_000; i++) {
      // A fresh, flat 2 KB string per frame, like JSON.stringify of a progress notification.
      q.push(JSON.stringify({ progress: i, message: `${i}`.padEnd(2000, 'x') }), 'n1');
    }
    gc?.();
    const grown = process.memoryUsage().heapUsed - before;
    assert.equal(q.count, 1);
    assert.ok(q.bytes < 2100);
    // 50,000 x 2 KB = 100 MB if the replaced frames are kept; one frame is 2 KB.
    assert.ok(
      grown < 20 * 1024 * 1024,
      `heap grew by ${Math.round(grown / 1048576)} MB for one queued frame`,
    );
    q.drain();
  });
});
