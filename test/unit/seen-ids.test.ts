// The client stream's memory of event ids (src/client/response-stream.ts SeenIds): it answers `has`
// for exactly the last 256 distinct ids added, whatever the sequence (a model check with fast-check).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SeenIds } from '../../src/client/response-stream.js';

const KEPT = 256;

test('remembers exactly the last 256 ids added', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 1_000 }),
      fc.array(fc.nat({ max: 2_000 }), { maxLength: 40 }),
      (n, probes) => {
        const seen = new SeenIds();
        for (let i = 0; i < n; i++) seen.add(`s/1/${i}`);
        for (const p of probes)
          assert.equal(seen.has(`s/1/${p}`), p < n && p >= n - KEPT, `id ${p} after ${n}`);
      },
    ),
    { numRuns: 200 },
  );
});
