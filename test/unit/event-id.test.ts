import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { encodeEventId, encodeSeq, eventIdPrefix, parseEventId, TAG_LENGTH } from '../../src/sse/event-id.js';

const tagArb = fc.stringMatching(/^[0-9A-Za-z]{10}$/);
const numArb = fc.oneof(fc.nat(), fc.constantFrom(0, 1, 35, 36, Number.MAX_SAFE_INTEGER), fc.maxSafeNat());

describe('sse/event-id', () => {
  test('round trip: parse(encode(tag, stream, seq)) gives the same cursor (property)', () => {
    fc.assert(
      fc.property(tagArb, numArb, numArb, (tag, stream, seq) => {
        const id = encodeEventId(tag, stream, seq);
        assert.ok(id.length <= 40, id);
        assert.match(id, /^[0-9A-Za-z.]+$/);
        assert.deepEqual(parseEventId(id), { tag, stream, seq });
      }),
      { numRuns: 2000 },
    );
  });

  test('whatever parses is canonical: it re-encodes to the same text (property over a hostile alphabet)', () => {
    const alphabet = fc.constantFrom(...'0123456789abcxyzAZ.-+ \r\n\t_:/é٣'.split(''));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(alphabet, { maxLength: 45 }).map((a) => a.join('')),
          fc
            .tuple(tagArb, fc.string({ maxLength: 14 }), fc.string({ maxLength: 14 }))
            .map(([t, a, b]) => `${t}.${a}.${b}`),
        ),
        (s) => {
          const c = parseEventId(s);
          if (c !== undefined) assert.equal(encodeEventId(c.tag, c.stream, c.seq), s);
        },
      ),
      { numRuns: 5000 },
    );
  });

  const tag = 'AbCdEfGh12';
  const malformed: [string, string][] = [
    ['empty', ''],
    ['no dots', 'AbCdEfGh12'],
    ['one part missing', `${tag}.1`],
    ['empty stream', `${tag}..1`],
    ['empty seq', `${tag}.1.`],
    ['extra part', `${tag}.1.2.3`],
    ['leading zero stream', `${tag}.01.2`],
    ['leading zero seq', `${tag}.1.02`],
    ['upper-case digit', `${tag}.A.2`],
    ['negative', `${tag}.-1.2`],
    ['plus sign', `${tag}.+1.2`],
    ['space', `${tag}. 1.2`],
    ['trailing space', `${tag}.1.2 `],
    ['CR', `${tag}.1.2\r`],
    ['LF inside', `${tag}.1\n.2`],
    ['NUL', `${tag}.1.2\0`],
    ['short tag', 'AbCdEfGh1.1.2'],
    ['long tag', 'AbCdEfGh123.1.2'],
    ['tag with dash', 'AbCdEf-h12.1.2'],
    ['non-ASCII digit', `${tag}.٣.2`],
    ['12 base-36 digits', `${tag}.1.100000000000`],
    ['11 digits above 2^53', `${tag}.1.zzzzzzzzzzz`],
    ['over 40 chars', `${tag}.${'1'.repeat(11)}.${'1'.repeat(11)}xxxxxxxx`],
    ['10,000 chars', 'a'.repeat(10_000)],
    ['the SDK id format', '_GET_stream_1700000000000_abc'],
    ['a UUID', '3f1e0c7a-1b2c-4d5e-8f90-123456789abc'],
  ];
  for (const [name, id] of malformed) {
    test(`malformed: ${name} → undefined`, () => {
      assert.equal(parseEventId(id), undefined);
    });
  }

  test('the largest safe integer survives, and TAG_LENGTH is what the parser demands', () => {
    const id = encodeEventId(tag, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    assert.deepEqual(parseEventId(id), {
      tag,
      stream: Number.MAX_SAFE_INTEGER,
      seq: Number.MAX_SAFE_INTEGER,
    });
    assert.equal(TAG_LENGTH, tag.length);
  });
});

test('eventIdPrefix + encodeSeq compose to encodeEventId (the hot path agrees with the codec)', () => {
  for (const [stream, seq] of [
    [0, 1],
    [1, 35],
    [36, 36],
    [123456, 9_007_199_254],
  ] as const) {
    const id = eventIdPrefix('AbCdEfGhIj', stream) + encodeSeq(seq);
    assert.equal(id, encodeEventId('AbCdEfGhIj', stream, seq));
    assert.deepEqual(parseEventId(id), { tag: 'AbCdEfGhIj', stream, seq });
  }
});
