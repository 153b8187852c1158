/**
 * serve({ tls, http2: true }) with real HTTP/2 clients (node:http2 and undici with allowH2) over a
 * certificate made by openssl: ALPN picks h2 (HTTP/1.1 still served), 50 streaming calls share one
 * connection with progress arriving on each as it is made, a paused stream fills its own window
 * while the others keep flowing (per-stream backpressure, bounded server memory), resume works
 * over h2, and close() sends GOAWAY and then drains. Plain HTTPS over HTTP/1.1 too.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { Agent, request as undiciRequest } from 'undici';
import { makeCert, type TestCert } from '../helpers/certs.js';
import { withDeadline } from '../helpers/deadline.js';
import { H2Session } from '../helpers/h2-client.js';
import { ACCEPT_BOTH, initializeBody, LATEST, type Loose, toolCall } from '../helpers/http.js';
import { spawnServe } from '../helpers/spawn-serve.js';
import { type Running, startServer } from '../helpers/test-server.js';

const made = makeCert();
const cert: TestCert | undefined = typeof made === 'string' ? undefined : made;
const noCert = typeof made === 'string' ? `SKIPPED: ${made}` : false;
if (typeof made === 'string') process.stderr.write(`\n*** SKIPPED HTTP/2 suite: ${made}\n\n`);
after(() => cert?.remove());

const progressOf = (msgs: readonly Loose[]): number[] =>
  msgs.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress);

describe('HTTP/2 with HTTP/1.1 fallback', { skip: noCert }, () => {
  let srv: Running;
  let connections = 0;
  before(async () => {
    assert.ok(cert);
    srv = await startServer({ tls: { key: cert.key, cert: cert.cert }, http2: true, keepaliveMs: 0 });
    srv.served.server.on('secureConnection', () => connections++);
  });
  after(() => srv.close());

  test('ALPN picks h2 for an h2 client and HTTP/1.1 for an https client; both are served', async () => {
    assert.ok(cert);
    assert.match(srv.url, /^https:\/\//);
    const s = new H2Session(srv.url, cert.cert);
    try {
      await s.init();
      assert.equal(s.client.alpnProtocol, 'h2');
    } finally {
      s.close();
    }
    const h1 = await new Promise<{ status: number; alpn: string | false | null; body: string }>(
      (resolve, reject) => {
        const req = httpsRequest(
          srv.url,
          {
            method: 'POST',
            // An agent offering only http/1.1 by ALPN: the server must fall back to it.
            agent: new HttpsAgent({ ca: cert.cert, ALPNProtocols: ['http/1.1'], keepAlive: false }),
            headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (c: string) => {
              body += c;
            });
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                alpn: (res.socket as import('node:tls').TLSSocket).alpnProtocol,
                body,
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(initializeBody(LATEST)));
      },
    );
    assert.equal(h1.status, 200, h1.body);
    assert.equal(h1.alpn, 'http/1.1');
    const metrics = srv.served.handler.metrics();
    assert.match(metrics, /sluice_http_requests_total\{protocol="h2"\} [1-9]/);
    assert.match(metrics, /sluice_http_requests_total\{protocol="http\/1\.1"\} [1-9]/);
  });

  test('50 concurrent streaming calls on one connection: progress arrives incrementally on each', async () => {
    assert.ok(cert);
    const s = new H2Session(srv.url, cert.cert);
    const before = connections;
    try {
      await s.init();
      const n = 8;
      const calls = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          s.post(toolCall('progress', { n, delayMs: 60 }, `c${i}`, `t${i}`)),
        ),
      );
      await withDeadline(Promise.all(calls.map((c) => c.done)), 30_000, '50 streaming calls');
      assert.equal(connections - before, 1, 'every call rode the one connection');
      for (const [i, c] of calls.entries()) {
        assert.equal(c.status, 200);
        assert.equal(c.headers['content-type'], 'text/event-stream');
        const msgs = c.messages();
        assert.deepEqual(progressOf(msgs), [1, 2, 3, 4, 5, 6, 7, 8], `call ${i}`);
        assert.equal(msgs.find((m) => m.id === `c${i}`)?.result.content[0].text, `done ${n}`);
        // Incremental: the first progress arrived well before the result (7 × 60 ms of work apart).
        const first = c.arrivals[0] ?? 0;
        const last = c.arrivals.at(-1) ?? 0;
        assert.ok(last - first >= 200, `call ${i}: events arrived together (${last - first} ms apart)`);
      }
    } finally {
      s.close();
    }
  });

  test('a paused stream fills its own window while the others keep flowing; server memory stays bounded', async () => {
    assert.ok(cert);
    const s = new H2Session(srv.url, cert.cert);
    try {
      await s.init();
      // A large connection window (as browsers use), so only the per-stream window limits a stream.
      s.client.setLocalWindowSize(32 * 1024 * 1024);
      const count = 3_000;
      const flood = await s.post(toolCall('progress', { n: count, delayMs: 0, pad: 2048 }, 'flood', 'ft'));
      flood.stream.pause();
      const others = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          s.post(toolCall('progress', { n: 10, delayMs: 20 }, `o${i}`, `ot${i}`)),
        ),
      );
      await withDeadline(
        Promise.all(others.map((o) => o.done)),
        15_000,
        'the other streams finish while one is paused',
      );
      for (const o of others) assert.equal(progressOf(o.messages()).length, 10);
      assert.equal(flood.ended, false, 'the paused stream is still open');
      const stats = srv.stats();
      assert.ok(stats.coalesced > 0, 'the paused stream coalesced progress (the server saw its window full)');
      assert.ok(
        stats.queue.bytes <= 1024 * 1024 + 64 * 1024,
        `queued ${stats.queue.bytes} bytes: bounded by maxQueueBytes`,
      );
      flood.stream.resume();
      await withDeadline(flood.done, 30_000, 'the flood ends after resume');
      const p = progressOf(flood.messages());
      assert.equal(p.at(-1), count, 'the latest progress arrives');
      assert.ok(p.length < count, `coalesced: ${p.length} of ${count} events`);
      assert.equal(flood.messages().find((m) => m.id === 'flood')?.result.content[0].text, `done ${count}`);
    } finally {
      s.close();
    }
  });

  test('resume over h2: a cancelled stream resumed by GET with Last-Event-ID on the same connection', async () => {
    assert.ok(cert);
    const s = new H2Session(srv.url, cert.cert);
    try {
      await s.init();
      const n = 20;
      const post = await s.post(toolCall('progress', { n, delayMs: 30 }, 'r1', 'rt'));
      await post.waitFor((r) => r.messages().length >= 4, 10_000, '4 events');
      post.stream.close(0x8); // RST_STREAM(CANCEL): this stream only
      const before = post.messages();
      const lastId = post.events.at(-1)?.id;
      assert.ok(lastId);
      const resumed = await s.request('GET', { accept: 'text/event-stream', 'last-event-id': lastId });
      assert.equal(resumed.status, 200);
      await withDeadline(resumed.done, 15_000, 'resumed stream ends');
      const all = [...before, ...resumed.messages()];
      assert.deepEqual(
        progressOf(all),
        Array.from({ length: n }, (_, i) => i + 1),
      );
      assert.equal(all.filter((m) => m.id === 'r1').length, 1);
    } finally {
      s.close();
    }
  });

  test('undici with allowH2: 50 concurrent streaming calls over one h2 connection', async () => {
    assert.ok(cert);
    // pipelining caps requests in flight per connection in undici, h2 streams included.
    const agent = new Agent({ allowH2: true, connections: 1, pipelining: 64, connect: { ca: cert.cert } });
    let maxOpen = 0;
    const sample = setInterval(() => {
      maxOpen = Math.max(maxOpen, srv.stats().streams.open.post);
    }, 10);
    const before = connections;
    const h2Before = Number(/protocol="h2"\} (\d+)/.exec(srv.served.handler.metrics())?.[1] ?? 0);
    try {
      const init = await undiciRequest(srv.url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
        body: JSON.stringify(initializeBody(LATEST)),
      });
      await init.body.text();
      const sid = String(init.headers['mcp-session-id']);
      const headers = {
        'content-type': 'application/json',
        accept: ACCEPT_BOTH,
        'mcp-session-id': sid,
        'mcp-protocol-version': LATEST,
      };
      await (
        await undiciRequest(srv.url, {
          method: 'POST',
          dispatcher: agent,
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        })
      ).body.text();
      const calls = Array.from({ length: 50 }, async (_, i) => {
        const r = await undiciRequest(srv.url, {
          method: 'POST',
          // undici sends a non-idempotent request only when none is in flight, h2 or not; these
          // are independent calls, so let it multiplex them.
          idempotent: true,
          dispatcher: agent,
          headers,
          body: JSON.stringify(toolCall('progress', { n: 5, delayMs: 50 }, `u${i}`, `ut${i}`)),
        });
        const chunks: number[] = [];
        let text = '';
        for await (const chunk of r.body) {
          text += chunk.toString();
          chunks.push(Date.now());
        }
        return { status: r.statusCode, text, chunks };
      });
      const results = await withDeadline(Promise.all(calls), 30_000, 'undici calls');
      clearInterval(sample);
      assert.ok(maxOpen >= 40, `the calls ran concurrently (at most ${maxOpen} streams were open at once)`);
      for (const [i, r] of results.entries()) {
        assert.equal(r.status, 200);
        assert.match(r.text, new RegExp(`"id":"u${i}"`));
        assert.equal((r.text.match(/notifications\/progress/g) ?? []).length, 5);
        assert.ok(
          r.chunks.length >= 3,
          `call ${i}: the body came in ${r.chunks.length} pieces, not as it was made`,
        );
      }
      assert.equal(connections - before, 1, 'one connection for all of them');
      const h2After = Number(/protocol="h2"\} (\d+)/.exec(srv.served.handler.metrics())?.[1] ?? 0);
      assert.ok(h2After - h2Before >= 52, 'the server counted them as h2 requests');
    } finally {
      clearInterval(sample);
      await agent.close();
    }
  });
});

describe('HTTP/2 graceful close and plain HTTPS', { skip: noCert }, () => {
  test('close() sends GOAWAY first, then lets the call in flight finish', async () => {
    assert.ok(cert);
    const srv = await startServer({ tls: { key: cert.key, cert: cert.cert }, http2: true, keepaliveMs: 0 });
    const s = new H2Session(srv.url, cert.cert);
    try {
      await s.init();
      const goaway = new Promise<number>((resolve) =>
        s.client.once('goaway', (code: number) => resolve(code)),
      );
      const call = await s.post(toolCall('progress', { n: 5, delayMs: 100 }, 'g1', 'gt'));
      await call.waitFor((r) => r.messages().length >= 1, 5_000, 'first progress');
      const closing = srv.served.close({ graceMs: 5_000 });
      assert.equal(await withDeadline(goaway, 3_000, 'GOAWAY'), 0, 'GOAWAY(NO_ERROR)');
      assert.equal(call.ended, false, 'the stream in flight survives the GOAWAY');
      await withDeadline(call.done, 5_000, 'the call in flight finishes');
      assert.equal(
        call.messages().find((m) => m.id === 'g1')?.result.content[0].text,
        'done 5',
        `the call's stream:\n${call.text}`,
      );
      const report = await withDeadline(closing, 8_000, 'close');
      assert.equal(report.cutRequests, 0);
    } finally {
      s.close();
      await srv.close();
    }
  });

  test('tls without http2 serves HTTPS over HTTP/1.1', async () => {
    assert.ok(cert);
    const srv = await startServer({ tls: { key: cert.key, cert: cert.cert } });
    try {
      const agent = new Agent({ connect: { ca: cert.cert } });
      const r = await undiciRequest(srv.url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
        body: JSON.stringify(initializeBody(LATEST)),
      });
      assert.equal(r.statusCode, 200);
      assert.equal(JSON.parse(await r.body.text()).result.protocolVersion, LATEST);
      await agent.close();
      assert.match(srv.served.handler.metrics(), /sluice_http_requests_total\{protocol="h2"\} 0/);
    } finally {
      await srv.close();
    }
  });

  test('a body over maxBodyBytes over h2: 413 on its stream, no Connection header (no process warning), the connection goes on', async () => {
    assert.ok(cert);
    const srv = await startServer({
      tls: { key: cert.key, cert: cert.cert },
      http2: true,
      keepaliveMs: 0,
      maxBodyBytes: 1024,
    });
    const s = new H2Session(srv.url, cert.cert);
    // node:http2 drops a Connection header (RFC 9113 §8.2.2) with a process-wide UnsupportedWarning.
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(`${w.name}: ${w.message}`);
    };
    process.on('warning', onWarning);
    try {
      const big = await s.post({ ...initializeBody(LATEST), pad: 'x'.repeat(4096) });
      await withDeadline(big.done, 5_000, '413 body');
      assert.equal(big.status, 413);
      assert.equal(big.json().error.data.reason, 'body-too-large');
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(warnings, []);
      await s.init();
      assert.ok(s.sid, 'the same h2 connection still serves');
    } finally {
      process.off('warning', onWarning);
      s.close();
      await srv.close();
    }
  });

  test('http2: an HTTP/1.1 (ALPN fallback) client that stalls its body is cut after requestTimeoutMs', async () => {
    assert.ok(cert);
    const srv = await startServer({
      tls: { key: cert.key, cert: cert.cert },
      http2: true,
      headersTimeoutMs: 300,
      requestTimeoutMs: 600,
    });
    const sock = tlsConnect({
      host: '127.0.0.1',
      port: srv.port,
      ca: cert.cert,
      ALPNProtocols: ['http/1.1'],
    });
    try {
      await withDeadline(once(sock, 'secureConnect'), 3_000, 'TLS');
      assert.equal(sock.alpnProtocol, 'http/1.1');
      let got = '';
      sock.on('data', (d: Buffer) => {
        got += d.toString('latin1');
      });
      // Headers complete, then 10 of the 100 bytes announced, then nothing (slow loris).
      sock.write(
        `POST ${new URL(srv.url).pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"',
      );
      // Node sweeps expired requests every quarter of headersTimeoutMs: well within 3 s.
      await withDeadline(once(sock, 'close'), 3_000, 'the stalled body is cut');
      assert.match(got, /^HTTP\/1\.1 408 /);
    } finally {
      sock.destroy();
      await srv.close();
    }
  });

  test('http2: an h2 stream that stalls its body is answered 408 after requestTimeoutMs; its connection goes on', async () => {
    assert.ok(cert);
    const srv = await startServer({
      tls: { key: cert.key, cert: cert.cert },
      http2: true,
      keepaliveMs: 0,
      headersTimeoutMs: 300,
      requestTimeoutMs: 600,
    });
    const s = new H2Session(srv.url, cert.cert);
    try {
      const stream = s.client.request(
        {
          ':method': 'POST',
          ':path': s.path,
          'content-type': 'application/json',
          accept: ACCEPT_BOTH,
          'content-length': '100',
        },
        { endStream: false },
      );
      stream.on('error', () => {});
      stream.resume();
      // 10 of the 100 bytes announced, then nothing (slow loris).
      stream.write('{"jsonrpc"');
      const status = new Promise<number>((resolve) =>
        stream.once('response', (h) => resolve(Number(h[':status']))),
      );
      assert.equal(await withDeadline(status, 3_000, 'the stalled stream is answered'), 408);
      await withDeadline(once(stream, 'close'), 3_000, 'the stalled stream closes');
      // A stream whose body arrived in time, and a long answer, are not cut; nor is a GET stream
      // whose client left its side open (no END_STREAM on HEADERS, a body nobody reads).
      await s.init();
      const get = s.client.request(
        {
          ':method': 'GET',
          ':path': s.path,
          accept: 'text/event-stream',
          'mcp-session-id': s.sid ?? '',
          'mcp-protocol-version': LATEST,
        },
        { endStream: false },
      );
      get.on('error', () => {});
      const getStatus = new Promise<number>((resolve) =>
        get.once('response', (h) => resolve(Number(h[':status']))),
      );
      assert.equal(await withDeadline(getStatus, 3_000, 'GET head'), 200);
      const call = await s.post(toolCall('slow', { ms: 1_000 }, 'long'));
      await withDeadline(call.done, 5_000, 'a call longer than requestTimeoutMs');
      assert.equal(call.status, 200);
      assert.match(call.text, /slept 1000/);
      assert.equal(get.closed, false, 'the GET stream outlived requestTimeoutMs');
      get.close();
    } finally {
      s.close();
      await srv.close();
    }
  });

  test('http2 without tls is refused when the server is created', async () => {
    await assert.rejects(startServer({ http2: true }), /http2 needs tls/);
  });
});

describe('sluice serve --tls-cert/--tls-key [--http2]', { skip: noCert }, () => {
  test('--http2 serves h2 with the demo server; --tls-* alone serves HTTPS/1.1; --http2 alone is refused', async () => {
    assert.ok(cert);
    const h2 = await spawnServe(['--tls-cert', cert.certFile, '--tls-key', cert.keyFile, '--http2']);
    try {
      assert.match(h2.url, /^https:\/\//);
      const s = new H2Session(h2.url, cert.cert);
      try {
        await s.init();
        assert.equal(s.client.alpnProtocol, 'h2');
        const call = await s.post(toolCall('echo', { text: 'over h2' }, 'e1'));
        await withDeadline(call.done, 5_000, 'echo');
        assert.equal(call.json().result.content[0].text, 'over h2');
      } finally {
        s.close();
      }
    } finally {
      await h2.close();
    }
    const h1 = await spawnServe(['--tls-cert', cert.certFile, '--tls-key', cert.keyFile]);
    try {
      const agent = new Agent({ connect: { ca: cert.cert } });
      const r = await undiciRequest(h1.url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
        body: JSON.stringify(initializeBody(LATEST)),
      });
      assert.equal(r.statusCode, 200);
      await r.body.text();
      await agent.close();
    } finally {
      await h1.close();
    }
    await assert.rejects(spawnServe(['--http2']), /--http2 needs --tls-cert/);
  });
});
