import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { newSessionId } from '../../src/core/era-2025/ids.js';
import { base64url, randomToken } from '../../src/security/random.js';
import { newTaskId } from '../../src/tasks/model.js';

describe('security/random: pooled tokens', () => {
  test('base64url of any slice is the text Node gives (RFC 4648 §5, unpadded)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const from = bytes.length === 0 ? 0 : a % (bytes.length + 1);
        const to = from + (bytes.length - from === 0 ? 0 : b % (bytes.length - from + 1));
        assert.equal(base64url(bytes, from, to), Buffer.from(bytes.subarray(from, to)).toString('base64url'));
      }),
      { numRuns: 2_000 },
    );
  });

  test('tokens have the promised length and alphabet, and never repeat across pool refills', () => {
    const seen = new Set<string>();
    // 3,000 tokens of 32 bytes draw the 4 KiB pool about 23 times over.
    for (let i = 0; i < 3_000; i++) {
      const t = randomToken(32);
      assert.match(t, /^[A-Za-z0-9_-]{43}$/);
      seen.add(t);
    }
    assert.equal(seen.size, 3_000);
    for (const n of [1, 2, 3, 12, 18, 1024]) assert.equal(randomToken(n).length, Math.ceil((n * 4) / 3));
  });

  test('session ids, task ids: their documented shapes', () => {
    assert.match(newSessionId(), /^[A-Za-z0-9_-]{24}$/);
    assert.match(newTaskId(), /^[A-Za-z0-9_-]{43}$/);
  });

  test('a bad length is a RangeError, not a short token', () => {
    for (const n of [0, -1, 1.5, 1025, Number.NaN]) assert.throws(() => randomToken(n), RangeError);
  });
});
