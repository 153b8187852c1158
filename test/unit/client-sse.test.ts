// readSse: incremental SSE decoding, fuzzed over arbitrary chunk splits (inside UTF-8 sequences and CRLF pairs),
// over the body of each HTTP adapter (a fetch Response's web stream, and a node:http IncomingMessage).
import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Canceller, type HttpBody, type HttpResponse } from '../../src/client/http-client.js';
import { fetchResponse } from '../../src/client/http-fetch.js';
import { nodeResponse } from '../../src/client/http-node.js';
import type { ClientClock } from '../../src/client/options.js';
import { readSse, type SseEnd } from '../../src/client/sse-reader.js';
import { cutAt } from '../helpers/pieces.js';

interface Collected {
  events: { data: string; event: string | undefined; id: string | undefined }[];
  retries: number[];
  end: SseEnd;
}

/** A response whose body the test feeds chunk by chunk. */
interface Feed {
  response: HttpResponse;
  body: HttpBody;
  push(chunk: Uint8Array): void;
  end(): void;
  /** The connection breaks mid-body. */
  fail(error: Error): void;
}

const adapters: Record<'fetch' | 'node', () => Feed> = {
  fetch: () => {
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
    });
    const response = fetchResponse(
      new Response(stream, { headers: { 'content-type': 'text/event-stream' } }),
    );
    return {
      response,
      body: response.body as HttpBody,
      push: (chunk) => controller?.enqueue(chunk),
      end: () => controller?.close(),
      fail: (error) => controller?.error(error),
    };
  },
  node: () => {
    const res = new IncomingMessage(new Socket());
    res.statusCode = 200;
    res.rawHeaders = ['Content-Type', 'text/event-stream'];
    const response = nodeResponse(res);
    return {
      response,
      body: response.body as HttpBody,
      push: (chunk) => res.push(Buffer.from(chunk)),
      end: () => {
        res.complete = true;
        res.push(null);
      },
      fail: (error) => res.destroy(error),
    };
  },
};

const realClock: ClientClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

async function collect(
  body: HttpBody,
  options: { maxEventBytes?: number; idleTimeoutMs?: number; clock?: ClientClock } = {},
): Promise<Collected> {
  const events: Collected['events'] = [];
  const retries: number[] = [];
  let lastId: string | undefined;
  const end = await readSse(
    body,
    {
      onId: (id) => {
        lastId = id;
      },
      onRetry: (ms) => retries.push(ms),
      onEvent: (data, event) => events.push({ data, event, id: lastId }),
    },
    {
      maxEventBytes: options.maxEventBytes ?? 1 << 20,
      idleTimeoutMs: options.idleTimeoutMs ?? 10_000,
      clock: options.clock ?? realClock,
    },
  );
  return { events, retries, end };
}

/** Splits `bytes` at the given offsets (each taken modulo its length + 1), without empty pieces. */
function split(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  return cutAt(
    bytes,
    cuts.map((c) => c % (bytes.length + 1)),
  ).filter((c) => c.length > 0);
}

const enc = new TextEncoder();

for (const [name, make] of Object.entries(adapters)) {
  const streamOf = (chunks: readonly Uint8Array[]): HttpBody => {
    const feed = make();
    for (const chunk of chunks) feed.push(chunk);
    feed.end();
    return feed.body;
  };

  describe(`readSse over the ${name} adapter's body`, () => {
    test('multi-line data, comments, retry, id, event types, CRLF and a BOM', async () => {
      const text =
        '\uFEFF: keepalive\r\nretry: 250\r\nid: 1\r\ndata: {"a":\r\ndata: 1}\r\n\r\n' +
        'event: other\ndata: x\n\n' +
        ': comment only\n\n' +
        'id: 2\ndata:\n\n' + // priming-style block: id, empty data → no event
        'data: after\r\r';
      const { events, retries, end } = await collect(streamOf([enc.encode(text)]));
      assert.deepEqual(end, { kind: 'eof' });
      assert.deepEqual(retries, [250]);
      assert.deepEqual(events, [
        { data: '{"a":\n1}', event: undefined, id: '1' },
        { data: 'x', event: 'other', id: '1' },
        { data: 'after', event: undefined, id: '2' },
      ]);
    });

    test('only one leading BOM is stripped, even when it arrives split byte by byte', async () => {
      // WHATWG HTML §9.2.6: "One leading U+FEFF BYTE ORDER MARK character must be ignored if any are present."
      // A second one is the start of the first line's field name, so that line is an unknown field, ignored.
      const bytes = enc.encode('\uFEFF\uFEFFdata: first\n\ndata: second\n\n');
      for (const chunks of [[bytes], split(bytes, [1, 2, 3, 4, 5, 6])]) {
        const { events } = await collect(streamOf(chunks));
        assert.deepEqual(events, [{ data: 'second', event: undefined, id: undefined }]);
      }
    });

    test('fuzz: any chunking of any event sequence parses to the same events', async () => {
      const line = fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, ''));
      const ev = fc.record({
        id: fc.option(fc.stringMatching(/^[a-z0-9-]{1,8}$/), { nil: undefined }),
        lines: fc.array(line, { minLength: 1, maxLength: 3 }),
        comment: fc.boolean(),
        retry: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined }),
      });
      const eol = fc.constantFrom('\n', '\r\n', '\r');
      await fc.assert(
        fc.asyncProperty(
          fc.array(ev, { minLength: 1, maxLength: 6 }),
          eol,
          fc.array(fc.nat(), { maxLength: 40 }),
          async (list, nl, cuts) => {
            let text = '';
            const expected: { data: string; id: string | undefined }[] = [];
            const retries: number[] = [];
            let lastId: string | undefined;
            for (const e of list) {
              if (e.comment) text += `: keep${nl}`;
              if (e.retry !== undefined) {
                text += `retry: ${e.retry}${nl}`;
                retries.push(e.retry);
              }
              if (e.id !== undefined) {
                text += `id: ${e.id}${nl}`;
                lastId = e.id;
              }
              for (const l of e.lines) text += `data: ${l}${nl}`;
              text += nl;
              const data = e.lines.join('\n');
              if (data.length > 0) expected.push({ data, id: lastId });
            }
            const got = await collect(streamOf(split(enc.encode(text), cuts)));
            assert.deepEqual(got.end, { kind: 'eof' });
            assert.deepEqual(
              got.events.map((e) => ({ data: e.data, id: e.id })),
              expected,
            );
            assert.deepEqual(got.retries, retries);
          },
        ),
        { numRuns: 300 },
      );
    });

    test('a UTF-8 sequence split byte by byte is reassembled', async () => {
      const bytes = enc.encode('data: 𝄞€ü\n\n');
      const { events } = await collect(
        streamOf(
          split(
            bytes,
            Array.from({ length: bytes.length }, (_, i) => i),
          ),
        ),
      );
      assert.deepEqual(events, [{ data: '𝄞€ü', event: undefined, id: undefined }]);
    });

    test('an event over maxEventBytes ends the read as too-large', async () => {
      const big = `data: ${'x'.repeat(5000)}\n\n`;
      const { events, end } = await collect(streamOf([enc.encode('data: ok\n\n'), enc.encode(big)]), {
        maxEventBytes: 2048,
      });
      assert.deepEqual(events, [{ data: 'ok', event: undefined, id: undefined }]);
      assert.deepEqual(end, { kind: 'too-large' });
    });

    test('no bytes for idleTimeoutMs ends the read as idle; keep-alive comments postpone it', async () => {
      const feed = make();
      const started = Date.now();
      const keepalive = setInterval(() => feed.push(enc.encode(': keepalive\n\n')), 40);
      setTimeout(() => clearInterval(keepalive), 300);
      const { end } = await collect(feed.body, { idleTimeoutMs: 150 });
      clearInterval(keepalive);
      assert.deepEqual(end, { kind: 'idle' });
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 300 + 100, `kept alive by comments, then idle (${elapsed} ms)`);
      assert.ok(elapsed < 2_000);
    });

    test('an aborted signal ends the read as an error', async () => {
      const body = make().body;
      const controller = new Canceller();
      setTimeout(() => controller.abort(), 20);
      const end = await readSse(
        body,
        { onId() {}, onRetry() {}, onEvent() {} },
        { maxEventBytes: 4096, idleTimeoutMs: 10_000, clock: realClock, signal: controller },
      );
      assert.equal(end.kind, 'error');
    });

    test('text(limit) decodes split UTF-8, strips a BOM, and refuses bodies over the limit', async () => {
      const text = async (chunks: Uint8Array[], limit: number): Promise<string | undefined> => {
        const feed = make();
        for (const chunk of chunks) feed.push(chunk);
        feed.end();
        return feed.response.text(limit, 10_000);
      };
      const euro = enc.encode('€');
      assert.equal(await text([enc.encode('{"a":'), enc.encode('1}')], 100), '{"a":1}');
      assert.equal(
        await text([enc.encode('\uFEFF"'), euro.slice(0, 1), euro.slice(1), enc.encode('"')], 100),
        '"€"',
      );
      assert.equal(await text([new Uint8Array(80), new Uint8Array(80)], 100), undefined);
    });

    test('a pending read ends when the body is cancelled; an error ends it as an error', async () => {
      const feed = make();
      setTimeout(() => void feed.body.cancel(), 20);
      const { end } = await collect(feed.body);
      assert.deepEqual(end, { kind: 'eof' });
      const failing = make();
      failing.push(enc.encode('data: one\n\n'));
      setTimeout(() => failing.fail(new Error('reset')), 20);
      const got = await collect(failing.body);
      assert.deepEqual(
        got.events.map((e) => e.data),
        ['one'],
      );
      assert.equal(got.end.kind, 'error');
    });
  });
}

describe('Canceller', () => {
  test('abort() runs each listener once, in order; offAbort removes one; signal follows, even when late', () => {
    const c = new Canceller();
    const calls: string[] = [];
    const a = (): void => {
      calls.push('a');
    };
    const b = (): void => {
      calls.push('b');
    };
    c.onAbort(a);
    c.onAbort(b);
    c.onAbort(a);
    c.offAbort(a);
    const early = c.signal;
    c.abort();
    c.abort();
    assert.deepEqual(calls, ['b', 'a']);
    assert.equal(c.aborted, true);
    assert.equal(early.aborted, true);
    assert.equal(new Canceller().signal.aborted, false);
    const late = new Canceller();
    late.abort();
    assert.equal(late.signal.aborted, true);
    late.onAbort(a);
    assert.deepEqual(calls, ['b', 'a'], 'no listener runs after the fact');
  });
});
