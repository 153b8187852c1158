import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { checkJsonShape, DEFAULT_JSON_LIMITS } from '../../src/jsonrpc/json-shape.js';

/** The exact shape of a parsed value, counted as the scan counts valid JSON. */
function shapeOf(v: unknown, depth = 1): { depth: number; keys: number; values: number } {
  if (typeof v !== 'object' || v === null) return { depth: depth - 1, keys: 0, values: 0 };
  const children = Array.isArray(v) ? v : Object.values(v);
  let d = depth;
  let keys = Array.isArray(v) ? 0 : children.length;
  // The container itself, and every element after the first (one `,` each).
  let values = 1 + Math.max(0, children.length - 1);
  for (const c of children) {
    const s = shapeOf(c, depth + 1);
    d = Math.max(d, s.depth);
    keys += s.keys;
    values += s.values;
  }
  return { depth: d, keys, values };
}

describe('jsonrpc/json-shape', () => {
  test('agrees with the parsed value on every limit, strings with brackets and escapes included (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const text = JSON.stringify(v);
        const s = shapeOf(v);
        const at = (maxDepth: number, maxKeys: number, maxValues: number) =>
          checkJsonShape(text, { maxDepth, maxKeys, maxValues });
        const big = 1_000_000;
        assert.equal(at(big, big, big), undefined);
        if (s.depth > 0) {
          assert.equal(at(s.depth, big, big), undefined);
          assert.deepEqual(at(s.depth - 1, big, big), { limit: 'depth', max: s.depth - 1 });
        }
        if (s.keys > 0) {
          assert.equal(at(big, s.keys, big), undefined);
          assert.deepEqual(at(big, s.keys - 1, big), { limit: 'keys', max: s.keys - 1 });
        }
        if (s.values > 0) {
          assert.equal(at(big, big, s.values), undefined);
          assert.deepEqual(at(big, big, s.values - 1), { limit: 'values', max: s.values - 1 });
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('quotes, backslashes and brackets inside strings are not structure', () => {
    const limits = { maxDepth: 2, maxKeys: 1, maxValues: 2 };
    assert.equal(checkJsonShape(JSON.stringify({ a: '[[[{{:,:,"\\\\"\\"]]' }), limits), undefined);
    assert.equal(checkJsonShape('{"a\\\\":"[[[[[["}', limits), undefined);
    assert.deepEqual(checkJsonShape('{"a\\\\":[[["x"]]]}', limits), { limit: 'depth', max: 2 });
    // Unterminated string: left to JSON.parse.
    assert.equal(checkJsonShape('{"a":"[[[[[[[[', limits), undefined);
  });

  test('the defaults', () => {
    assert.deepEqual(DEFAULT_JSON_LIMITS, { maxDepth: 64, maxKeys: 10_000, maxValues: 100_000 });
  });
});
