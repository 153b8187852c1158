// The SSE encoder against a real parser (eventsource-parser, an independent implementation): whatever the
// event and however the bytes are cut into chunks, the parser gets back exactly the event.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import fc from 'fast-check';
import { SluiceError } from '../../src/errors.js';
import {
  encodeComment,
  encodeEvent,
  encodeJsonFrame,
  encodeRetry,
  type SseEvent,
} from '../../src/sse/encode.js';
import { cutAt } from '../helpers/pieces.js';

interface Parsed {
  events: EventSourceMessage[];
  retries: number[];
  comments: string[];
}

/** Feeds byte chunks through a streaming UTF-8 decoder (as fetch's TextDecoderStream does) into the parser. */
function parseChunks(chunks: Uint8Array[]): Parsed {
  const out: Parsed = { events: [], retries: [], comments: [] };
  const parser = createParser({
    onEvent: (e) => out.events.push(e),
    onRetry: (r) => out.retries.push(r),
    onComment: (c) => out.comments.push(c),
    onError: (e) => {
      throw e;
    },
  });
  const dec = new TextDecoder('utf-8', { fatal: true });
  for (const c of chunks) parser.feed(dec.decode(c, { stream: true }));
  parser.feed(dec.decode());
  return out;
}

function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  return cutAt(
    bytes,
    cuts.filter((c) => c > 0 && c < bytes.length),
  );
}

/** What a conforming parser must report for ev (line breaks in data normalised to LF). */
function expected(ev: SseEvent): EventSourceMessage {
  return { id: ev.id, event: ev.event, data: ev.data.replace(/\r\n|\r/g, '\n') };
}

function same(got: EventSourceMessage | undefined, want: EventSourceMessage): void {
  assert.ok(got !== undefined, 'no event parsed');
  assert.equal(got.data, want.data);
  // The parser reports an empty `event:` as no event type, and keeps the last id it saw.
  assert.equal(
    got.event === undefined || got.event === '' ? undefined : got.event,
    want.event === '' ? undefined : want.event,
  );
  assert.equal(got.id ?? undefined, want.id);
}

// Characters that stress the codec: line terminators, colons, spaces, multi-byte UTF-8 (2, 3, 4 bytes).
const tricky = fc.constantFrom(
  '\r',
  '\n',
  '\r\n',
  ':',
  ' ',
  'a',
  'é',
  '€',
  '😀',
  '\u2028',
  '\uFEFF',
  'data: ',
  'id:',
);
const dataArb = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.array(tricky, { maxLength: 20 }).map((a) => a.join('')),
);
const fieldArb = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.array(tricky, { maxLength: 8 }).map((a) => a.join('')),
  )
  .filter((s) => !/[\r\n\0]/.test(s));
const eventArb: fc.Arbitrary<SseEvent> = fc.record(
  {
    id: fieldArb,
    event: fieldArb.filter((s) => s.length > 0),
    data: dataArb,
    retry: fc.nat({ max: 1_000_000 }),
  },
  { requiredKeys: ['data'] },
);

describe('sse/encode', () => {
  test('every frame parses back to the same event over EVERY single split of its bytes', () => {
    fc.assert(
      fc.property(eventArb, (ev) => {
        const bytes = new TextEncoder().encode(encodeEvent(ev));
        for (let cut = 0; cut <= bytes.length; cut++) {
          const p = parseChunks(splitAt(bytes, [cut]));
          assert.equal(p.events.length, 1, `cut at ${cut}`);
          same(p.events[0], expected(ev));
          assert.deepEqual(p.retries, ev.retry === undefined ? [] : [ev.retry]);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('byte-by-byte and random multi-cut chunkings of a sequence of frames give the same events in order', () => {
    fc.assert(
      fc.property(
        fc.array(eventArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (evs, cuts) => {
          const bytes = new TextEncoder().encode(evs.map(encodeEvent).join(''));
          const chunkings = [
            splitAt(
              bytes,
              cuts.map((c) => c % (bytes.length + 1)),
            ),
            splitAt(
              bytes,
              Array.from({ length: bytes.length }, (_, i) => i),
            ),
          ];
          for (const chunks of chunkings) {
            const p = parseChunks(chunks);
            assert.equal(p.events.length, evs.length);
            let lastId: string | undefined;
            evs.forEach((ev, i) => {
              if (ev.id !== undefined) lastId = ev.id;
              const got = p.events[i];
              assert.ok(got !== undefined);
              assert.equal(got.data, expected(ev).data);
              // The id of an event is the last id field seen so far (WHATWG: lastEventId persists).
              if (ev.id !== undefined) assert.equal(got.id, ev.id);
              else assert.ok(got.id === undefined || got.id === lastId);
            });
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  test('splits inside a 4-byte UTF-8 sequence and between CR and LF (explicit cases)', () => {
    const ev = { id: '1', data: 'a😀b\r\nc\rd\ne' };
    const bytes = new TextEncoder().encode(encodeEvent(ev));
    const emoji = bytes.indexOf(0xf0);
    assert.ok(emoji > 0);
    for (const cut of [emoji + 1, emoji + 2, emoji + 3]) {
      same(parseChunks(splitAt(bytes, [cut])).events[0], expected(ev));
    }
    // A CR ending one chunk and its LF starting the next must count as one line break, not two.
    const crlf = new TextEncoder().encode('data: x\r\ndata: y\r\n\r\n');
    for (let cut = 0; cut <= crlf.length; cut++) {
      const p = parseChunks(splitAt(crlf, [cut]));
      assert.deepEqual(
        p.events.map((e) => e.data),
        ['x\ny'],
        `cut ${cut}`,
      );
    }
  });

  test('encodeJsonFrame: JSON text (never with raw line breaks) round-trips over every split', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.option(fc.stringMatching(/^[0-9A-Za-z.]{1,30}$/), { nil: undefined }),
        (v, id) => {
          const json = JSON.stringify(v) ?? 'null';
          const bytes = new TextEncoder().encode(encodeJsonFrame(id, json));
          for (let cut = 0; cut <= bytes.length; cut += Math.max(1, Math.floor(bytes.length / 25))) {
            const p = parseChunks(splitAt(bytes, [cut]));
            assert.equal(p.events.length, 1);
            assert.equal(p.events[0]?.data, json);
            assert.equal(p.events[0]?.id, id);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  test('comments are discarded by the parser and never dispatch an event', () => {
    const p = parseChunks([
      new TextEncoder().encode(`${encodeComment('keepalive')}${encodeEvent({ data: 'x' })}`),
    ]);
    assert.deepEqual(
      p.events.map((e) => e.data),
      ['x'],
    );
    assert.equal(p.comments.length, 1);
    assert.match(p.comments[0] ?? '', /keepalive/);
  });

  test('an empty data event (priming) parses to an event with empty data and the id', () => {
    const p = parseChunks([new TextEncoder().encode(encodeEvent({ id: 'abc.1.1', data: '', retry: 500 }))]);
    assert.equal(p.events.length, 1);
    assert.equal(p.events[0]?.data, '');
    assert.equal(p.events[0]?.id, 'abc.1.1');
    assert.deepEqual(p.retries, [500]);
  });

  for (const bad of ['a\nb', 'a\rb', 'a\r\nb', 'a\0b', '\n', '\r', '\0']) {
    test(`id and event containing ${JSON.stringify(bad)} are rejected with SLUICE_SSE_INVALID_FIELD`, () => {
      for (const ev of [
        { id: bad, data: 'x' },
        { event: bad, data: 'x' },
      ]) {
        assert.throws(
          () => encodeEvent(ev),
          (e: unknown) => e instanceof SluiceError && e.code === 'SLUICE_SSE_INVALID_FIELD',
        );
      }
      assert.throws(
        () => encodeComment(bad),
        (e: unknown) => e instanceof SluiceError,
      );
    });
  }

  test('CR/LF/NUL anywhere in id or event is rejected (property)', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.constantFrom('\r', '\n', '\0'),
        fc.string(),
        fc.boolean(),
        (a, nl, b, asId) => {
          const v = `${a}${nl}${b}`;
          assert.throws(() => encodeEvent(asId ? { id: v, data: '' } : { event: v, data: '' }), SluiceError);
        },
      ),
    );
  });

  for (const retry of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
    test(`retry ${retry} is rejected`, () => {
      assert.throws(() => encodeEvent({ data: 'x', retry }), SluiceError);
    });
  }
});

test('encodeJsonFrame with a retry and encodeRetry parse back to the same fields', () => {
  const seen: { id?: string | undefined; data: string }[] = [];
  const retries: number[] = [];
  const p = createParser({
    onEvent: (e) => seen.push({ id: e.id, data: e.data }),
    onRetry: (r) => retries.push(r),
  });
  p.feed(encodeJsonFrame('t.1.1', '{"a":1}', 750));
  p.feed(encodeRetry(1200));
  p.feed(encodeJsonFrame(undefined, '{"b":2}'));
  assert.deepEqual(seen, [
    { id: 't.1.1', data: '{"a":1}' },
    // A frame encoded without an id carries no id field of its own.
    { id: undefined, data: '{"b":2}' },
  ]);
  assert.deepEqual(retries, [750, 1200]);
});
