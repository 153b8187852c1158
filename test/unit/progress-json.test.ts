/**
 * The progress serializer of the direct `sendNotification` (jsonrpc/progress-json.ts): whatever it
 * handles it writes (and its parts render again) exactly as `JSON.stringify({ ...n, jsonrpc: '2.0' })` (the SDK's message) and
 * with `coalesceKeyOf`'s key; the common shape is handled; other shapes are left to the generic path.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { coalesceKeyOf } from '../../src/jsonrpc/partial.js';
import { ProgressJson } from '../../src/jsonrpc/progress-json.js';

const sdkText = (n: object): string => JSON.stringify({ ...n, jsonrpc: '2.0' });
const sdkKey = (n: object): string | undefined => coalesceKeyOf({ ...n, jsonrpc: '2.0' } as never);

/** Strings with any UTF-16 code unit (lone surrogates, controls, quotes, backslashes). */
const anyString = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary-ascii' }), fc.string());
const anyNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e21, 1e-7, 2 ** 53),
);
const token = fc.oneof(anyString, anyNumber);
/** A value of a params field: the handled ones and some the serializer must refuse. */
const anyValue = fc.oneof(
  { weight: 4, arbitrary: anyNumber },
  { weight: 4, arbitrary: anyString },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, true, false) },
  { weight: 1, arbitrary: fc.constant(() => 1) },
  { weight: 1, arbitrary: fc.constant(Symbol('s')) },
  { weight: 1, arbitrary: fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }) },
  { weight: 1, arbitrary: fc.array(fc.integer(), { maxLength: 2 }) },
);
const FIELDS = ['progressToken', 'progress', 'total', 'message', '_meta', 'other', '0'] as const;

/** Params with fields in random order, some absent, any value. */
const anyParams = fc
  .tuple(
    fc.shuffledSubarray([...FIELDS]),
    fc.array(anyValue, { minLength: FIELDS.length, maxLength: FIELDS.length }),
  )
  .map(([names, values]) => {
    const p: Record<string, unknown> = {};
    names.forEach((name, i) => {
      p[name] = values[i];
    });
    return p;
  });

/** The common shape, in random key order, with optional total and message. */
const commonParams = fc
  .record(
    { progressToken: token, progress: anyNumber, total: anyNumber, message: anyString },
    { requiredKeys: ['progressToken', 'progress'] },
  )
  .chain((p) =>
    fc.shuffledSubarray(Object.keys(p), { minLength: Object.keys(p).length }).map((order) => {
      const q: Record<string, unknown> = {};
      for (const k of order) q[k] = (p as Record<string, unknown>)[k];
      return q;
    }),
  );

function check(pj: ProgressJson, n: object): boolean {
  const e = pj.read(n);
  if (e === undefined) return false;
  const text = sdkText(n);
  assert.equal(e.json, text);
  assert.equal(e.key, sdkKey(n));
  // The parts render the same text again (what a replay store keeps, events/progress-run.ts).
  assert.equal(e.layout.text(e.a, e.b, e.c), text);
  return true;
}

test('the common shape is handled and written as JSON.stringify writes the SDK message', () => {
  fc.assert(
    fc.property(commonParams, (params) => {
      assert.equal(check(new ProgressJson(), { method: 'notifications/progress', params }), true);
    }),
    { numRuns: 2000 },
  );
});

test('one request serializer over a sequence (token and message kept between events)', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(fc.constantFrom('a', 'b', 1, '1'), anyNumber, fc.constantFrom('', 'x', 'é"\n', '\ud800')),
        {
          maxLength: 30,
        },
      ),
      (events) => {
        const pj = new ProgressJson();
        let last: { token: unknown; layout: unknown } | undefined;
        for (const [progressToken, progress, message] of events) {
          const n = {
            method: 'notifications/progress',
            params: { progressToken, progress, total: 9, message },
          };
          assert.equal(check(pj, n), true);
          const layout = pj.read(n)?.layout;
          // One layout object while the keys and the token stay the same (a run's test of continuity).
          if (last !== undefined) assert.equal(layout === last.layout, progressToken === last.token);
          last = { token: progressToken, layout };
        }
      },
    ),
    { numRuns: 500 },
  );
});

test('any params: what is handled is byte-identical, the rest is refused', () => {
  fc.assert(
    fc.property(anyParams, (params) => {
      check(new ProgressJson(), { method: 'notifications/progress', params });
    }),
    { numRuns: 3000 },
  );
});

test('shapes left to the generic path', () => {
  const pj = new ProgressJson();
  const progress = (params: unknown) => ({ method: 'notifications/progress', params });
  const refused: [string, object][] = [
    ['params first', { params: { progressToken: 1, progress: 1 }, method: 'notifications/progress' }],
    ['another top-level key', { method: 'notifications/progress', params: { progressToken: 1 }, x: 1 }],
    ['no params', { method: 'notifications/progress' }],
    ['another method', { method: 'notifications/message', params: { progressToken: 1 } }],
    ['no token', progress({ progress: 1 })],
    ['object token', progress({ progressToken: {}, progress: 1 })],
    ['_meta', progress({ progressToken: 1, progress: 1, _meta: {} })],
    ['array params', progress([1])],
    ['params with toJSON', progress({ progressToken: 1, toJSON: () => 'x' })],
    [
      'inherited field',
      progress(Object.assign(Object.create({ total: 3 }), { progressToken: 1, progress: 1 })),
    ],
    [
      'inherited params',
      Object.assign(Object.create({ params: { progressToken: 1 } }), { method: 'notifications/progress' }),
    ],
    ['bigint', progress({ progressToken: 1, progress: 1n })],
    ['object value', progress({ progressToken: 1, progress: 1, message: { a: 1 } })],
  ];
  for (const [what, n] of refused) assert.equal(pj.read(n), undefined, what);
  // Getters are read like data (JSON.stringify reads them too).
  const p = { progressToken: 't', progress: 2 };
  Object.defineProperty(p, 'total', { get: () => 5, enumerable: true });
  const n = progress(p);
  assert.equal(pj.read(n)?.json, sdkText(n));
  // A non-enumerable field is left out, as JSON leaves it out.
  const q = { progressToken: 't', progress: 2 };
  Object.defineProperty(q, 'total', { value: 5, enumerable: false });
  assert.equal(pj.read(progress(q))?.json, sdkText(progress(q)));
});
