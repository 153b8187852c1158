// The fetch binding's ResponseSink: write() reports the stream's queue filling (desiredSize <= 0),
// drain comes from pull (the consumer taking bytes), and a cancelled body or an aborted request is
// the connection closing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StreamSink } from '../../src/fetch/stream-sink.js';

test('write() turns false at the high-water mark and onDrain fires only when the reader pulls', async () => {
  const sink = new StreamSink(10);
  let drains = 0;
  sink.onDrain(() => drains++);
  sink.head(200, { 'content-type': 'text/event-stream' });
  const res = await sink.response;
  assert.equal(res.status, 200);
  assert.equal(sink.write('12345'), true);
  assert.equal(sink.write('67890'), false, 'queue at 10 bytes = high-water mark');
  assert.equal(sink.write('abc'), false);
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(drains, 0, 'nobody read: no drain');
  const reader = res.body?.getReader();
  assert.ok(reader);
  let got = '';
  const dec = new TextDecoder();
  while (got.length < 13) {
    const { value } = await reader.read();
    got += dec.decode(value);
  }
  assert.equal(got, '1234567890abc');
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(drains, 1, 'the pull after the queue emptied is the drain');
  assert.equal(sink.write('x'), true);
  sink.end('!');
  let rest = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    rest += dec.decode(value);
  }
  assert.equal(rest, 'x!');
});

test('cancelling the body closes the sink and calls onClose once', async () => {
  const sink = new StreamSink(1024);
  let closes = 0;
  sink.onClose(() => closes++);
  sink.head(200, {});
  const res = await sink.response;
  await res.body?.cancel();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(sink.closed, true);
  assert.equal(closes, 1);
  assert.equal(sink.write('late'), true, 'writes after close are dropped, not thrown');
});

test('an aborted request closes the sink and errors the body', async () => {
  const ac = new AbortController();
  const sink = new StreamSink(1024, ac.signal);
  let closes = 0;
  sink.onClose(() => closes++);
  sink.head(200, {});
  const res = await sink.response;
  const reader = res.body?.getReader();
  ac.abort();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(closes, 1);
  await assert.rejects(reader?.read() ?? Promise.reject(new Error('no body')));
});

test('an empty answer has no body and no invented content type; 204 has no body', async () => {
  const a = new StreamSink(1024);
  a.respond(202, { 'mcp-session-id': 's' }, '');
  const r = await a.response;
  assert.equal(r.status, 202);
  assert.equal(r.headers.get('content-type'), null);
  assert.equal(r.body, null);
  const b = new StreamSink(1024);
  b.respond(204, { allow: 'POST' }, '');
  assert.equal((await b.response).status, 204);
});

test('destroy() before anything was sent still settles the response', async () => {
  const sink = new StreamSink(1024);
  sink.destroy();
  assert.equal((await sink.response).status, 503);
});

/** Everything the body yields until it ends; rejects when the stream errors. */
async function readAll(body: ReadableStream<Uint8Array> | null): Promise<string> {
  const reader = body?.getReader();
  assert.ok(reader);
  const dec = new TextDecoder();
  let got = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return got;
    got += dec.decode(value);
  }
}

test('destroy() before the runtime read anything delivers the queue (the priming event) and ends the body', async () => {
  const sink = new StreamSink(16);
  sink.head(200, { 'content-type': 'text/event-stream' });
  const res = await sink.response;
  assert.equal(sink.write('id: a\ndata: \n\n'), true);
  assert.equal(sink.write('id: b\ndata: x\n\n'), false, 'the queue filled before any read');
  sink.destroy();
  assert.equal(sink.closed, true);
  assert.equal(sink.write('late'), true, 'nothing more is enqueued');
  assert.equal(await readAll(res.body), 'id: a\ndata: \n\nid: b\ndata: x\n\n');
});

test('destroy() after the runtime read some of the body delivers the rest and ends it', async () => {
  const sink = new StreamSink(16);
  sink.head(200, { 'content-type': 'text/event-stream' });
  const res = await sink.response;
  const reader = res.body?.getReader();
  assert.ok(reader);
  sink.write('id: a\ndata: \n\n');
  assert.equal(new TextDecoder().decode((await reader.read()).value), 'id: a\ndata: \n\n');
  sink.write('id: b\ndata: x\n\n');
  sink.write('id: c\ndata: y\n\n');
  sink.destroy();
  reader.releaseLock();
  assert.equal(await readAll(res.body), 'id: b\ndata: x\n\nid: c\ndata: y\n\n');
});
