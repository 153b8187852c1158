// What a node sink puts on the wire, now that long strings go to the socket as their UTF-8 bytes
// (src/server/wire-chunk.ts): the same bytes as the string would have written, on either side of
// the threshold, with multi-byte characters (astral ones, and lone surrogates, which both paths
// encode as U+FFFD) anywhere, including across the threshold; and a complete answer's
// content-length counts bytes, not UTF-16 code units. Real node:http exchanges on 127.0.0.1.
import assert from 'node:assert/strict';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createH2Server, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { H2Sink } from '../../src/server/h2-sink.js';
import { NodeSink } from '../../src/server/node-sink.js';
import { encodeFrames, WIRE_BYTES_MIN, wireChunk } from '../../src/server/wire-chunk.js';
import { fuzzParameters } from '../helpers/fuzz.js';

type Handler = (sink: NodeSink) => void;

let server: Server;
let port = 0;
let next: Handler = () => undefined;

before(async () => {
  server = createServer((_req, res: ServerResponse) => next(new NodeSink(res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** One exchange: the response's headers and its whole body, within 5 s. */
function exchange(handler: Handler): Promise<{ headers: Record<string, unknown>; body: Buffer }> {
  next = handler;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no complete response within 5 s')), 5_000);
    const req = request({ host: '127.0.0.1', port, path: '/', method: 'GET' }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ headers: res.headers, body: Buffer.concat(parts) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Text of about `n` code units around the threshold, mixing ASCII, 2-, 3- and 4-byte characters. */
const around = fc
  .tuple(
    fc.integer({ min: WIRE_BYTES_MIN - 8, max: WIRE_BYTES_MIN + 8 }),
    fc.constantFrom('a', 'é', '€', '😀', '\ud800'),
    fc.string({ unit: 'binary', maxLength: 6 }),
  )
  .map(([n, ch, tail]) => 'x'.repeat(Math.max(0, n - ch.length - tail.length)) + ch + tail);

describe('node sink: long strings go out as their bytes', () => {
  test('wireChunk: a string below the threshold as it is, from the threshold on its UTF-8 bytes', () => {
    const short = 'é'.repeat(WIRE_BYTES_MIN - 1);
    assert.equal(wireChunk(short), short);
    const long = `${short}😀`;
    const bytes = wireChunk(long);
    assert.ok(Buffer.isBuffer(bytes));
    assert.deepEqual(bytes, Buffer.from(long, 'utf8'));
  });

  test('respond(): the same bytes, and a content-length in bytes', async () => {
    await fc.assert(
      fc.asyncProperty(around, async (text) => {
        const { headers, body } = await exchange((sink) =>
          sink.respond(200, { 'content-type': 'text/plain' }, text),
        );
        const expected = Buffer.from(text, 'utf8');
        assert.equal(headers['content-length'], String(expected.length));
        assert.deepEqual(body, expected);
      }),
      fuzzParameters(60, 20_000),
    );
  });

  test('write() and end(): a stream of short and long pieces arrives byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(around, fc.string({ unit: 'grapheme', maxLength: 40 })), { maxLength: 6 }),
        around,
        async (pieces, last) => {
          const { headers, body } = await exchange((sink) => {
            sink.head(200, { 'content-type': 'text/event-stream' });
            for (const p of pieces) sink.write(p);
            sink.end(last);
          });
          assert.equal(headers['transfer-encoding'], 'chunked');
          assert.deepEqual(body, Buffer.from(pieces.join('') + last, 'utf8'));
        },
      ),
      fuzzParameters(60, 20_000),
    );
  });
});

/**
 * A batch as the SSE writer hands it over: mostly ASCII frames of the usual size, sometimes a frame
 * with 2-, 3- or 4-byte characters or a lone surrogate (U+FFFD on the wire) anywhere, including the
 * last one (where the buffer, sized for ASCII, has to grow).
 */
const frame = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.string({ unit: fc.constantFrom('a', 'z', '0', '{', '"', ':', '\n'), maxLength: 200 }),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
  { weight: 1, arbitrary: fc.constantFrom('é', '€', '😀', '\ud800', '\udc00x', 'é'.repeat(300)) },
);
const chars = (frames: readonly string[]): number => frames.reduce((n, f) => n + f.length, 0);

describe('node sinks: a batch of frames goes out as one buffer of their bytes (writeMany)', () => {
  test('encodeFrames: the bytes of the frames joined, whatever they hold', () => {
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 80 }), (frames) => {
        assert.deepEqual(encodeFrames(frames, chars(frames)), Buffer.from(frames.join(''), 'utf8'));
      }),
      fuzzParameters(400, 20_000),
    );
    // The cases the buffer's growth is for: ASCII all along, then the last frame needs more bytes
    // than it has code units; and a batch that is all 4-byte characters.
    const ascii = Array.from({ length: 500 }, (_, i) => `id: x.1.${i}\ndata: {"n":${i}}\n\n`);
    for (const frames of [
      [...ascii, '😀'],
      [...ascii, 'é€'],
      ['😀'.repeat(3000)],
      ['\ud800'.repeat(100)],
      [],
    ])
      assert.deepEqual(encodeFrames(frames, chars(frames)), Buffer.from(frames.join(''), 'utf8'));
  });

  test('NodeSink: write(), writeMany() and end() arrive byte for byte, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.array(frame, { minLength: 2, maxLength: 40 }), around), { maxLength: 5 }),
        async (pieces) => {
          const { body } = await exchange((sink) => {
            sink.head(200, { 'content-type': 'text/event-stream' });
            for (const p of pieces) {
              if (typeof p === 'string') sink.write(p);
              else sink.writeMany(p, chars(p));
            }
            sink.end('data: end\n\n');
          });
          const text = pieces.map((p) => (typeof p === 'string' ? p : p.join(''))).join('');
          assert.deepEqual(body, Buffer.from(`${text}data: end\n\n`, 'utf8'));
        },
      ),
      fuzzParameters(40, 20_000),
    );
  });

  test('H2Sink: writeMany() over an HTTP/2 stream arrives byte for byte', async () => {
    let handler: (sink: H2Sink) => void = () => undefined;
    const h2 = createH2Server((_req, res: Http2ServerResponse) => handler(new H2Sink(res)));
    await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
    const client = connect(`http://127.0.0.1:${(h2.address() as AddressInfo).port}`);
    try {
      const frames = [
        ...Array.from({ length: 400 }, (_, i) => `id: t.1.${i}\ndata: {"i":${i}}\n\n`),
        'data: "😀é"\n\n',
      ];
      handler = (sink) => {
        sink.head(200, { 'content-type': 'text/event-stream' });
        sink.writeMany(frames, chars(frames));
        sink.end('data: end\n\n');
      };
      const body = await new Promise<Buffer>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no complete HTTP/2 response within 5 s')), 5_000);
        const req = client.request({ ':path': '/' });
        const parts: Buffer[] = [];
        req.on('data', (b: Buffer) => parts.push(b));
        req.on('end', () => {
          clearTimeout(timer);
          resolve(Buffer.concat(parts));
        });
        req.on('error', reject);
        req.end();
      });
      assert.deepEqual(body, Buffer.from(`${frames.join('')}data: end\n\n`, 'utf8'));
    } finally {
      client.close();
      await new Promise<void>((resolve) => h2.close(() => resolve()));
    }
  });
});
