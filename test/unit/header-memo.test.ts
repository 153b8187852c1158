/** The header memo (src/http/header-memo.ts): same answers as the function, bounded, undefined cached too. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { memoByHeader } from '../../src/http/header-memo.js';
import { parseAccept } from '../../src/http/media-type.js';
import { hostNameOf } from '../../src/security/host.js';

test('a memoized function answers exactly as the function, for any sequence of values', () => {
  let calls = 0;
  const f = (v: string): string | undefined => {
    calls++;
    return v.length % 3 === 0 ? undefined : v.toUpperCase();
  };
  const m = memoByHeader(f, 8);
  fc.assert(
    fc.property(fc.array(fc.string({ maxLength: 6 }), { maxLength: 200 }), (values) => {
      for (const v of values) assert.equal(m(v), f(v));
    }),
    { numRuns: 200 },
  );
  assert.ok(calls > 0);
});

test('repeated values are computed once (undefined results too) while the memo has room', () => {
  const seen: string[] = [];
  const m = memoByHeader((v: string) => {
    seen.push(v);
    return v === 'x' ? undefined : v.length;
  }, 4);
  for (let i = 0; i < 5; i++) {
    m('a');
    m('x');
  }
  assert.deepEqual(seen, ['a', 'x']);
});

test('bounded: past max distinct values it starts over instead of growing', () => {
  const seen: string[] = [];
  const m = memoByHeader((v: string) => {
    seen.push(v);
    return v;
  }, 3);
  for (const v of ['a', 'b', 'c', 'd', 'a']) m(v);
  // 'd' cleared the memo (a, b, c dropped), so 'a' is computed again.
  assert.deepEqual(seen, ['a', 'b', 'c', 'd', 'a']);
});

test('memoized parsers hand out frozen, shared answers that callers cannot corrupt', () => {
  const a = parseAccept('application/json, text/event-stream');
  assert.equal(a, parseAccept('application/json, text/event-stream'));
  assert.ok(Object.isFrozen(a));
  assert.throws(() => {
    (a as { json: boolean }).json = false;
  }, TypeError);
  assert.deepEqual(parseAccept(undefined), { json: true, sse: true });
  assert.equal(hostNameOf('LocalHost:3000'), 'localhost');
  assert.equal(hostNameOf('evil.example/path'), undefined);
});
