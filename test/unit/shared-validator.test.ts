import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidOptionError } from '../../src/errors.js';
import { sharedJsonSchemaValidator } from '../../src/server/shared-validator.js';

test('validates like the SDK validator and reuses compiled schemas by content', () => {
  const v = sharedJsonSchemaValidator(4);
  const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } as const;
  const check = v.getValidator<{ n: number }>(schema);
  assert.equal(check({ n: 3 }).valid, true);
  const bad = check({ n: 'x' });
  assert.equal(bad.valid, false);
  assert.match(bad.errorMessage ?? '', /integer/);
  // A structurally equal but distinct object gets the same compiled validator.
  assert.equal(v.getValidator(JSON.parse(JSON.stringify(schema))), check);
});

const gc = (globalThis as { gc?: () => void }).gc;

test('many distinct schemas do not grow memory without bound', {
  // Without gc() the heap figure is mostly garbage; npm test runs node with --expose-gc.
  skip: gc === undefined ? 'needs --expose-gc (npm test passes it)' : false,
}, () => {
  const v = sharedJsonSchemaValidator(8);
  const run = (from: number, n: number): void => {
    for (let i = from; i < from + n; i++) {
      const f = v.getValidator({ type: 'object', properties: { [`k${i}`]: { type: 'string' } } });
      assert.equal(f({ [`k${i}`]: 'ok' }).valid, true);
    }
  };
  run(0, 2000);
  gc?.();
  const before = process.memoryUsage().heapUsed;
  run(2000, 20_000);
  gc?.();
  const grown = process.memoryUsage().heapUsed - before;
  // An unbounded Ajv cache holds every one of the 20,000 schemas (several KiB each: >> 20 MB).
  assert.ok(grown < 16 * 1024 * 1024, `heap grew by ${(grown / 1048576).toFixed(1)} MiB`);
});

test('rejects a nonsensical bound', () => {
  assert.throws(
    () => sharedJsonSchemaValidator(0),
    (e: unknown) => e instanceof InvalidOptionError && e.code === 'SLUICE_INVALID_OPTION',
  );
});
