// Sluice's SSE parser directly (readSse's fuzz tests cover it through both HTTP adapters): comments,
// ids (reset, NUL), retry validation, a CR ending one piece, the buffer bound, and agreement with
// eventsource-parser (an independent implementation) on arbitrary LF-terminated streams.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createParser } from 'eventsource-parser';
import fc from 'fast-check';
import { createSseParser, type SseMessage } from '../../src/sse/parse.js';
import { cutAt } from '../helpers/pieces.js';

function parseAll(pieces: string[], maxBufferSize?: number) {
  const got: {
    events: SseMessage[];
    ids: string[];
    retries: number[];
    comments: string[];
    errors: string[];
  } = {
    events: [],
    ids: [],
    retries: [],
    comments: [],
    errors: [],
  };
  const p = createSseParser({
    onEvent: (m) => got.events.push(m),
    onId: (id) => got.ids.push(id),
    onRetry: (ms) => got.retries.push(ms),
    onComment: (c) => got.comments.push(c),
    onError: (e) => got.errors.push(e.type),
    ...(maxBufferSize !== undefined ? { maxBufferSize } : {}),
  });
  for (const piece of pieces) p.feed(piece);
  return got;
}

test('comments, ids, retry and event types', () => {
  const g = parseAll([
    ': hello\n:no-space\nretry: 10\nretry: x1\nid: a\nevent: e\ndata: 1\n\nid\ndata: 2\n\nid: b\0c\ndata: 3\n\n',
  ]);
  assert.deepEqual(g.comments, ['hello', 'no-space']);
  assert.deepEqual(g.retries, [10]);
  assert.deepEqual(g.ids, ['a', '']);
  assert.deepEqual(g.events, [
    { data: '1', event: 'e', id: 'a', ownId: 'a' },
    { data: '2', event: undefined, id: '', ownId: '' },
    // An id with NUL is ignored (WHATWG): the block has no id of its own and inherits ''.
    { data: '3', event: undefined, id: '', ownId: undefined },
  ]);
});

test('an id-only block still sets the id; a block without data dispatches nothing', () => {
  const g = parseAll(['id: 7\n\nevent: x\n\ndata: after\n\n']);
  assert.deepEqual(g.ids, ['7']);
  // The data block inherits the id; it carried none of its own.
  assert.deepEqual(g.events, [{ data: 'after', event: undefined, id: '7', ownId: undefined }]);
});

test('a CR ending one piece, with or without an LF starting the next', () => {
  assert.deepEqual(parseAll(['data: a\r', '\ndata: b\r', '\r']).events, [
    { data: 'a\nb', event: undefined, id: undefined, ownId: undefined },
  ]);
  assert.deepEqual(parseAll(['data: a\r', 'data: b\r\r']).events, [
    { data: 'a\nb', event: undefined, id: undefined, ownId: undefined },
  ]);
});

test('beyond maxBufferSize: one error, then nothing more', () => {
  const g = parseAll(['data: 12345', '67890', '\n\ndata: x\n\n'], 8);
  assert.deepEqual(g.errors, ['max-buffer-size-exceeded']);
  assert.deepEqual(g.events, []);
});

test('agrees with eventsource-parser on any LF-terminated stream, in any pieces', () => {
  const field = fc.constantFrom('data', 'event', 'id', 'retry', ':', 'other');
  const line = fc
    .tuple(
      field,
      fc.string({ maxLength: 6 }).map((s) => s.replace(/[\r\n]/g, '')),
    )
    .map(([f, v]) => (f === ':' ? `: ${v}` : `${f}: ${v}`));
  const block = fc.array(line, { minLength: 1, maxLength: 4 }).map((ls) => `${ls.join('\n')}\n\n`);
  fc.assert(
    fc.property(fc.array(block, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 5 }), (blocks, cuts) => {
      const text = blocks.join('');
      const ours = parseAll(
        cutAt(
          text,
          cuts.map((c) => c % (text.length + 1)),
        ),
      );
      const theirs: { data: string; event: string | undefined }[] = [];
      const retries: number[] = [];
      const ref = createParser({
        onEvent: (m) => theirs.push({ data: m.data, event: m.event }),
        onRetry: (ms) => retries.push(ms),
      });
      ref.feed(text);
      assert.deepEqual(
        ours.events.map((e) => ({ data: e.data, event: e.event })),
        theirs,
      );
      assert.deepEqual(ours.retries, retries);
    }),
    { numRuns: 300 },
  );
});

test('any terminators (CR, LF, CRLF), cut anywhere: the same as the whole text in one piece', () => {
  // Lines long enough to span several pieces, so an unfinished line is held across many feeds.
  const line = fc
    .tuple(
      fc.constantFrom('data', 'event', 'id', ':'),
      fc.string({ maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, '')),
      fc.constantFrom('\n', '\r', '\r\n'),
    )
    .map(([f, v, end]) => `${f === ':' ? ':' : `${f}:`} ${v}${end}`);
  const stream = fc
    .array(fc.tuple(fc.array(line, { minLength: 1, maxLength: 4 }), fc.constantFrom('\n', '\r', '\r\n')), {
      maxLength: 6,
    })
    .map((blocks) => blocks.map(([ls, blank]) => ls.join('') + blank).join(''));
  fc.assert(
    fc.property(stream, fc.array(fc.nat(), { maxLength: 12 }), (text, cuts) => {
      assert.deepEqual(
        parseAll(
          cutAt(
            text,
            cuts.map((c) => c % (text.length + 1)),
          ),
        ),
        parseAll([text]),
      );
    }),
    { numRuns: 400 },
  );
});

test('a long line in small pieces is searched and copied in linear work, not once per piece', () => {
  // What a large result in one `data:` line costs, counted rather than timed: every character
  // String.prototype.indexOf is asked to search, over a 1 MB line fed in 1 KB pieces. Holding the
  // unfinished line as one string searched again from its start with each piece was about 500
  // times the input.
  const size = 1_000_000;
  const text = `data: ${'x'.repeat(size)}\n\n`;
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += 1024) pieces.push(text.slice(i, i + 1024));
  const indexOf = String.prototype.indexOf;
  let searched = 0;
  String.prototype.indexOf = function (this: string, what: string, from?: number): number {
    const at = indexOf.call(this, what, from);
    searched += (at === -1 ? this.length : at) - Math.max(0, from ?? 0);
    return at;
  };
  let got: ReturnType<typeof parseAll>;
  try {
    got = parseAll(pieces);
  } finally {
    String.prototype.indexOf = indexOf;
  }
  assert.equal(got.events.length, 1);
  assert.equal(got.events[0]?.data.length, size);
  assert.ok(searched < 4 * text.length, `${searched} characters searched for ${text.length} of input`);
});
