// The node:http sink's close listeners: a stream's owners (connection, writer, stream, guard) each
// register one, and they hang off the sink's single 'close' listener on the response instead of one
// `once()` wrapper each (idle memory per stream, docs/benchmarks.md). They run once, in order, when
// the response closes, whether the client went away or the response finished; one registered after
// the close still runs (on a microtask). And head() has the header block node:http keeps flattened.
import assert from 'node:assert/strict';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { NodeSink } from '../../src/server/node-sink.js';

function serve(onResponse: (res: ServerResponse) => void): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => onResponse(res));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port })),
  );
}

/** A promise and its resolve (Promise.withResolvers is Node 22+). */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<T>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

test('close listeners run once, in order, from one listener on the response, when the client goes', async () => {
  const calls: string[] = [];
  let res: ServerResponse | undefined;
  let sink: NodeSink | undefined;
  const closed = signal();
  const { server, port } = await serve((r) => {
    res = r;
    sink = new NodeSink(r);
    const before = r.listenerCount('close');
    for (const name of ['connection', 'writer', 'stream']) sink.onClose(() => calls.push(name));
    sink.onClose(() => closed.resolve());
    assert.equal(r.listenerCount('close'), before, 'no listener per owner on the response');
    sink.head(200, { 'content-type': 'text/event-stream' });
    sink.write(': open\n\n');
  });
  try {
    const req = request({ host: '127.0.0.1', port, path: '/', method: 'GET', agent: false });
    req.on('error', () => undefined);
    req.on('response', (r) => r.once('data', () => req.destroy()));
    req.end();
    await within(closed.promise, 5_000, 'close');
    assert.deepEqual(calls, ['connection', 'writer', 'stream']);
    assert.equal(sink?.closed, true);
    res?.emit('close');
    assert.deepEqual(calls, ['connection', 'writer', 'stream'], 'a second close event calls nobody again');
    const late = signal();
    sink?.onClose(() => late.resolve());
    await within(late.promise, 1_000, 'a listener registered after the close');
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('a finished response closes too: its listeners run after the answer is sent', async () => {
  const calls: number[] = [];
  const closed = signal();
  const { server, port } = await serve((r) => {
    const sink = new NodeSink(r);
    sink.onClose(() => calls.push(1));
    sink.onClose(() => {
      calls.push(2);
      closed.resolve();
    });
    sink.respond(200, { 'content-type': 'application/json' }, '{"ok":true}');
  });
  try {
    const body = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/', method: 'POST', agent: false }, (r) => {
        let t = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => {
          t += c;
        });
        r.on('end', () => resolve(t));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(body, '{"ok":true}');
    await within(closed.promise, 5_000, 'close after the answer');
    assert.deepEqual(calls, [1, 2]);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('respond sends the caller’s headers plus the body’s byte length, leaving the caller’s object as it was', async () => {
  const given = { 'content-type': 'application/json', 'access-control-allow-origin': 'https://a.example' };
  const { server, port } = await serve((r) => new NodeSink(r).respond(200, given, '{"t":"é€"}'));
  try {
    const got = await new Promise<{ headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/', method: 'POST', agent: false }, (r) => {
        let t = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => {
          t += c;
        });
        r.on('end', () => resolve({ headers: r.headers, body: t }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(got.body, '{"t":"é€"}');
    assert.equal(got.headers['content-length'], String(Buffer.byteLength('{"t":"é€"}')));
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['access-control-allow-origin'], 'https://a.example');
    assert.deepEqual(Object.keys(given), ['content-type', 'access-control-allow-origin']);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('head() reads the header block node:http keeps for the response, so V8 flattens it (idle memory)', () => {
  let reads = 0;
  let block: string | undefined;
  const fake = {
    destroyed: false,
    headersSent: false,
    socket: null,
    on() {},
    writeHead(status: number) {
      block = `HTTP/1.1 ${status} OK\r\n`;
    },
    get _header() {
      if (block !== undefined) reads++;
      return block;
    },
  };
  const sink = new NodeSink(fake as unknown as ServerResponse);
  sink.head(200, { 'content-type': 'text/event-stream' });
  assert.equal(reads, 1, 'read once, after writeHead built it');
});
