import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { decodeHeaderValue, encodeHeaderValue, isPlainHeaderValue } from '../../src/http/param-headers.js';

const dec = (s: string) => decodeHeaderValue(s);

describe('http/param-headers: strict Base64 sentinel codec', () => {
  test('the spec examples decode to their original values', () => {
    assert.deepEqual(dec('us-west1'), { ok: true, value: 'us-west1' });
    assert.deepEqual(dec('=?base64?SGVsbG8sIOS4lueVjA==?='), { ok: true, value: 'Hello, 世界' });
    assert.deepEqual(dec('=?base64?IHBhZGRlZCA=?='), { ok: true, value: ' padded ' });
    assert.deepEqual(dec('=?base64?bGluZTEKbGluZTI=?='), { ok: true, value: 'line1\nline2' });
    assert.deepEqual(dec('=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='), { ok: true, value: '=?base64?literal?=' });
  });

  test('missing padding, bad alphabet and non-zero pad bits are refused', () => {
    assert.equal(dec('=?base64?SGVsbG8?=').ok, false);
    assert.equal(dec('=?base64?SGVs!!!bG8=?=').ok, false);
    assert.equal(dec('=?base64?SGVsbG9=?=').ok, false, 'pad bits set (canonical is SGVsbG8=)');
    assert.equal(dec('=?base64?SGVsbG8=\n?=').ok, false);
    assert.equal(dec('=?base64?SGVsbG8===?=').ok, false);
  });

  test('Base64 of bytes that are not UTF-8 is refused', () => {
    const b = Buffer.from([0xff, 0xfe, 0x80]).toString('base64');
    assert.equal(dec(`=?base64?${b}?=`).ok, false);
  });

  test('markers are case-sensitive: other spellings are taken literally', () => {
    assert.deepEqual(dec('=?BASE64?SGVsbG8=?='), { ok: true, value: '=?BASE64?SGVsbG8=?=' });
    assert.deepEqual(dec('=?base64?SGVsbG8='), { ok: true, value: '=?base64?SGVsbG8=' });
  });

  test('surrounding whitespace is optional whitespace; control and non-ASCII characters are refused', () => {
    assert.deepEqual(dec('  us-west1\t'), { ok: true, value: 'us-west1' });
    assert.deepEqual(dec(' =?base64?IHBhZGRlZCA=?= '), { ok: true, value: ' padded ' });
    assert.equal(dec('a\u0001b').ok, false);
    assert.equal(dec('caf\u00e9').ok, false);
  });

  test('encode then decode is the identity for every string (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => {
        // Lone surrogates do not survive UTF-8; skip them (a JSON body cannot carry them either).
        fc.pre(Buffer.from(s, 'utf8').toString('utf8') === s);
        const enc = encodeHeaderValue(s);
        assert.match(enc, /^[\x20-\x7e]*$/);
        assert.deepEqual(decodeHeaderValue(enc), { ok: true, value: s });
      }),
      { numRuns: 2000 },
    );
  });

  test('a plain value never looks like a sentinel, and decoding never throws (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 40 }), (s) => {
        const r = decodeHeaderValue(s);
        assert.equal(typeof r.ok, 'boolean');
        if (isPlainHeaderValue(s)) assert.deepEqual(r, { ok: true, value: s });
      }),
      { numRuns: 2000 },
    );
  });

  test('any sentinel whose payload is not the canonical encoding of its bytes is refused (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9+/=]{1,16}$/), (p) => {
        const r = decodeHeaderValue(`=?base64?${p}?=`);
        const canonical = Buffer.from(Buffer.from(p, 'base64').toString('base64'), 'utf8').toString() === p;
        if (!canonical) assert.equal(r.ok, false);
      }),
      { numRuns: 2000 },
    );
  });
});
