// Exact wire behaviour of the client transport against small scripted node:http servers on 127.0.0.1:0, over
// both HTTP adapters: node:http (the default on Node) and fetch (what `options.fetch` selects).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import {
  HttpStatusError,
  IdleTimeoutError,
  idempotencyMeta,
  SessionExpiredError,
  type StreamableHttpClientOptions,
  StreamableHttpClientTransport,
  UnauthorizedError,
  UnexpectedContentTypeError,
} from '../../src/client/index.js';
import { CLIENT_ADAPTERS } from '../helpers/client-adapters.js';
import { until as poll } from '../helpers/http.js';
import { scripted } from '../helpers/scripted-server.js';

const SSE = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
const frame = (message: unknown, id?: string): string =>
  `${id !== undefined ? `id: ${id}\n` : ''}data: ${JSON.stringify(message)}\n\n`;
const progress = {
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 1, progress: 1 },
};
const resultFor = (id: unknown, text = 'ok') => ({
  jsonrpc: '2.0',
  id,
  result: { content: [{ type: 'text', text }] },
});
const call = (id: number, meta?: Record<string, string>): JSONRPCMessage =>
  ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'x', arguments: {}, ...(meta !== undefined ? { _meta: meta } : {}) },
  }) as JSONRPCMessage;

/** Options that select each HTTP adapter. */
async function openTransport(url: string, options: StreamableHttpClientOptions) {
  const transport = new StreamableHttpClientTransport(new URL(url), {
    initialReconnectDelayMs: 5,
    maxReconnectDelayMs: 20,
    openStandaloneStream: false,
    ...options,
  });
  const messages: Record<string, unknown>[] = [];
  const errors: Error[] = [];
  transport.onmessage = (m) => messages.push(m as Record<string, unknown>);
  transport.onerror = (e) => errors.push(e);
  await transport.start();
  return { transport, messages, errors };
}

/** Polls every 5 ms: the next step of these races should follow the awaited state at once. */
function until(predicate: () => boolean, label: string, ms = 5_000): Promise<void> {
  return poll(predicate, ms, label, 5);
}

const responses = (messages: Record<string, unknown>[]) =>
  messages.filter((m) => 'result' in m || 'error' in m);
const sluiceCode = (m: Record<string, unknown> | undefined) =>
  (m?.['error'] as { data?: { sluiceCode?: string } } | undefined)?.data?.sluiceCode;

for (const [adapter, http] of Object.entries(CLIENT_ADAPTERS)) {
  describe(`client transport on the wire (${adapter} adapter)`, () => {
    const open = (url: string, options: StreamableHttpClientOptions = {}) =>
      openTransport(url, { ...http, ...options });

    test('the JSON branch is chosen by the parsed media type, not a substring', async () => {
      const srv = await scripted((_req, res, seen) => {
        const id = seen.body?.['id'];
        res.writeHead(200, {
          'content-type': id === 1 ? 'Application/JSON; charset=utf-8' : 'application/json-seq',
        });
        res.end(JSON.stringify(resultFor(id)));
      });
      const { transport, messages } = await open(srv.url);
      try {
        await transport.send(call(1));
        await until(() => responses(messages).length === 1, 'json response');
        await assert.rejects(transport.send(call(2)), UnexpectedContentTypeError);
        assert.equal(srv.seen[0]?.headers.accept, 'application/json, text/event-stream');
      } finally {
        await transport.close();
        await srv.close();
      }
    });

    test('a socket dropped mid-stream is resumed with Last-Event-ID: no loss, no duplicate, no re-send', async () => {
      const srv = await scripted((req, res, seen) => {
        if (seen.method === 'POST') {
          res.writeHead(200, SSE);
          res.write(frame(progress, 'e1'));
          setTimeout(() => req.socket.destroy(), 20);
        } else {
          res.writeHead(200, SSE);
          res.end(frame(resultFor(1), 'e2'));
        }
      });
      const { transport, messages } = await open(srv.url);
      try {
        await transport.send(call(1));
        await until(() => responses(messages).length === 1, 'resumed response');
        await new Promise((r) => setTimeout(r, 50));
        assert.deepEqual(
          messages.map((m) => m['method'] ?? `response ${String(m['id'])}`),
          ['notifications/progress', 'response 1'],
        );
        assert.equal(srv.seen.filter((s) => s.method === 'POST').length, 1);
        const get = srv.seen.find((s) => s.method === 'GET');
        assert.equal(get?.headers['last-event-id'], 'e1');
        assert.equal(get?.headers.accept, 'text/event-stream');
      } finally {
        await transport.close();
        await srv.close();
      }
    });

    test('resume declined (4xx): a non-idempotent request fails with RESUME_DECLINED', async () => {
      const srv = await scripted((req, res, seen) => {
        if (seen.method === 'POST') {
          res.writeHead(200, SSE);
          res.write(frame(progress, 'e1'));
          setTimeout(() => req.socket.destroy(), 10);
        } else {
          res.writeHead(400);
          res.end('unknown event id');
        }
      });
      const { transport, messages, errors } = await open(srv.url);
      try {
        await transport.send(call(1));
        await until(() => responses(messages).length === 1, 'failure response');
        const failure = responses(messages)[0];
        assert.equal(failure?.['id'], 1);
        assert.equal(sluiceCode(failure), 'SLUICE_CLIENT_RESUME_DECLINED');
        assert.ok(errors.some((e) => (e as { code?: string }).code === 'SLUICE_CLIENT_RESUME_DECLINED'));
        assert.equal(srv.seen.filter((s) => s.method === 'POST').length, 1, 'not re-sent');
      } finally {
        await transport.close();
        await srv.close();
      }
    });

    test('resume declined: a request marked idempotent is re-sent under a new wire id and answered under its own', async () => {
      const srv = await scripted((req, res, seen, all) => {
        const posts = all.filter((s) => s.method === 'POST').length;
        if (seen.method === 'POST' && posts === 1) {
          res.writeHead(200, SSE);
          res.write(frame(progress, 'e1'));
          setTimeout(() => req.socket.destroy(), 10);
        } else if (seen.method === 'POST') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(resultFor(seen.body?.['id'], 'second')));
        } else {
          res.writeHead(404);
          res.end();
        }
      });
      const { transport, messages } = await open(srv.url);
      try {
        await transport.send(call(7, idempotencyMeta('op-7')));
        await until(() => responses(messages).length === 1, 'response to the re-sent request');
        const response = responses(messages)[0];
        assert.equal(response?.['id'], 7);
        assert.deepEqual(response?.['result'], resultFor(7, 'second').result);
        const posts = srv.seen.filter((s) => s.method === 'POST');
        assert.equal(posts.length, 2);
        assert.notEqual(posts[1]?.body?.['id'], 7);
      } finally {
        await transport.close();
        await srv.close();
      }
    });

    test('no event id ever received: idempotent methods are re-sent, others fail with RESUME_IMPOSSIBLE', async () => {
      const srv = await scripted((_req, res, seen, all) => {
        const method = seen.body?.['method'];
        const tries = all.filter((s) => s.body?.['method'] === method).length;
        if (method === 'tools/list' && tries === 2) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: seen.body?.['id'], result: { tools: [] } }));
          return;
        }
        res.writeHead(200, SSE);
        res.end(frame(progress)); // graceful end, no id, no response
      });
      const { transport, messages, errors } = await open(srv.url);
      try {
        await transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } as JSONRPCMessage);
        await transport.send(call(2));
        await until(() => responses(messages).length === 2, 'two outcomes');
        const byId = new Map(responses(messages).map((m) => [m['id'], m]));
        assert.deepEqual(byId.get(1)?.['result'], { tools: [] });
        assert.equal(sluiceCode(byId.get(2)), 'SLUICE_CLIENT_RESUME_IMPOSSIBLE');
        assert.equal(srv.seen.filter((s) => s.method === 'GET').length, 0, 'nothing to resume from');
        assert.ok(errors.some((e) => (e as { code?: string }).code === 'SLUICE_CLIENT_RESUME_IMPOSSIBLE'));
      } finally {
        await transport.close();
        await srv.close();
      }
    });

    test('retry: is honoured before resuming', async () => {
      let closedAt = 0;
      const srv = await scripted((_req, res, seen) => {
        if (seen.method === 'POST') {
          res.writeHead(200, SSE);
          res.write('id: p1\nretry: 300\ndata: \n\n');
          setTimeout(() => {
            closedAt = Date.now();
            res.end();
          }, 20);
        } else {
          res.writeHead(200, SSE);
          res.end(frame(resultFor(1), 'p2'));
        }
      });
      // retry: is honoured up to maxReconnectDelayMs (the cap of every reconnection wait).
      const { transport, messages } = await open(srv.url, { maxReconnectDelayMs: 1_000 });
      try {
        await transport.send(call(1));
        await until(() => responses(messages).length === 1, 'response after retry');
        const get = srv.seen.find((s) => s.method === 'GET');
        const waited = (get?.at ?? 0) - closedAt;
        assert.ok(waited >= 290 && waited < 1_000, `waited ${waited} ms for retry: 300`);
        assert.equal(get?.headers['last-event-id'], 'p1');
      } finally {
        await transport.close();
        await srv.close();
      }
    });

    test('graceful closes without progress do not reset the attempt counter (gives up after maxReconnectAttempts)', async () => {
      const srv = await scripted((_req, res) => {
        res.writeHead(200, SSE);
        res.end('id: same\ndata: \n\n');
      });
      const { transport, messages } = await open(srv.url, { maxReconnectAttempts: 3 });
      try {
        await transport.send(call(1));
        await until(() => responses(messages).length === 1, 'exhausted');
        assert.equal(sluiceCode(responses(messages)[0]), 'SLUICE_CLIENT_RESUME_EXHAUSTED');
        assert.equal(srv.seen.filter((s) => s.method === 'GET').length, 3);
      } finally {
        await transport.close();
        await srv.close();
      }
    });

    test('an idle stream (no bytes for idleTimeoutMs) is treated as dead and resumed', async () => {
      const srv = await scripted((_req, res, seen) => {
        res.writeHead(200, SSE);
        if (seen.method === 'POST')
          res.write('id: i1\ndata: \n\n'); // then silence
        else res.end(frame(resultFor(1), 'i2'));
      });
      const { transport, messages, errors } = await open(srv.url, { idleTimeoutMs: 150 });
      try {
        await transport.send(call(1));
        await until(() => responses(messages).length === 1, 'resumed after idle');
        assert.ok(errors.some((e) => e instanceof IdleTimeoutError));
        assert.equal(srv.seen.find((s) => s.method === 'GET')?.headers['last-event-id'], 'i1');
      } finally {
        await transport.close();
        await srv.close();
      }
    });

    test('an event over maxEventBytes fails the request with EVENT_TOO_LARGE and is not resumed', async () => {
      const srv = await scripted((_req, res) => {
        res.writeHead(200, SSE);
        res.end(`id: b1\ndata: ${'x'.repeat(5000)}\n\n`);
      });
      const { transport, messages } = await open(srv.url, { maxEventBytes: 2048 });
      try {
        await transport.send(call(1));
        await until(() => responses(messages).length === 1, 'too large');
        assert.equal(sluiceCode(responses(messages)[0]), 'SLUICE_CLIENT_EVENT_TOO_LARGE');
        assert.equal(srv.seen.filter((s) => s.method === 'GET').length, 0);
      } finally {
        await transport.close();
        await srv.close();
      }
    });

    test('sessions: id echoed, GET opened once after initialized, 405 means no stream, DELETE on close tolerates 405', async () => {
      const srv = await scripted((_req, res, seen) => {
        if (seen.method === 'POST' && seen.body?.['method'] === 'initialize') {
          res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'sess-1' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: 0,
              result: { protocolVersion: '2025-06-18', capabilities: {} },
            }),
          );
        } else if (seen.method === 'POST') {
          res.writeHead(202);
          res.end();
        } else {
          res.writeHead(405, { allow: 'POST, DELETE' });
          res.end();
        }
      });
      const { transport, errors } = await open(srv.url, { openStandaloneStream: true });
      try {
        await transport.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} } as JSONRPCMessage);
        assert.equal(transport.sessionId, 'sess-1');
        assert.equal(srv.seen.filter((s) => s.method === 'GET').length, 0, 'no GET before initialized');
        transport.setProtocolVersion('2025-06-18');
        await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' } as JSONRPCMessage);
        await until(() => srv.seen.some((s) => s.method === 'GET'), 'GET opened');
        await new Promise((r) => setTimeout(r, 150));
        const gets = srv.seen.filter((s) => s.method === 'GET');
        assert.equal(gets.length, 1, '405: never retried');
        assert.equal(gets[0]?.headers['mcp-session-id'], 'sess-1');
        assert.equal(gets[0]?.headers['mcp-protocol-version'], '2025-06-18');
        const initialized = srv.seen.find((s) => s.body?.['method'] === 'notifications/initialized');
        assert.equal(initialized?.headers['mcp-session-id'], 'sess-1');
      } finally {
        await transport.close();
      }
      const del = srv.seen.find((s) => s.method === 'DELETE');
      assert.equal(del?.headers['mcp-session-id'], 'sess-1');
      assert.deepEqual(errors, []);
      await srv.close();
    });

    test('404 with re-initialization off: SessionExpiredError, and close() skips the DELETE', async () => {
      const srv = await scripted((_req, res, seen) => {
        if (seen.body?.['method'] === 'initialize') {
          res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: 0, result: {} }));
          return;
        }
        res.writeHead(404);
        res.end();
      });
      const { transport } = await open(srv.url, { reinitializeOnSessionExpiry: false });
      await transport.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} } as JSONRPCMessage);
      await assert.rejects(transport.send(call(1)), SessionExpiredError);
      await transport.close();
      assert.equal(srv.seen.filter((s) => s.method === 'DELETE').length, 0);
      await srv.close();
    });

    test('auth: the token provider runs per request; 401 surfaces as UnauthorizedError with the challenge', async () => {
      const srv = await scripted((_req, res, seen) => {
        if (seen.headers.authorization === 'Bearer t1') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(resultFor(seen.body?.['id'])));
          return;
        }
        res.writeHead(401, { 'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1/x"' });
        res.end();
      });
      let calls = 0;
      const { transport } = await open(srv.url, {
        token: async () => `t${++calls}`,
        headers: { 'X-Trace': 'abc' },
      });
      try {
        await transport.send(call(1));
        const error = await transport.send(call(2)).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(error instanceof UnauthorizedError);
        assert.equal(error.code, 'SLUICE_CLIENT_UNAUTHORIZED');
        assert.match(error.wwwAuthenticate ?? '', /resource_metadata/);
        assert.equal(calls, 2);
        assert.equal(srv.seen[0]?.headers['x-trace'], 'abc');
      } finally {
        await transport.close();
        await srv.close();
      }
    });
    test('redirects: within the origin 307 keeps POST, body and headers; one leaving the origin is not followed', async () => {
      // Headers meant for this server only (the session id, a token, a caller's API key) would go along with a
      // redirect to another origin: fetch drops only authorization and cookie. A cross-origin (or https → http)
      // hop is refused, as the SDK's default redirectPolicy 'same-origin' does (RFC 9110 §15.4: following is the
      // client's choice).
      const target = await scripted((_req, res, seen) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(resultFor(seen.body?.['id'], 'moved')));
      });
      const srv = await scripted((req, res, seen) => {
        if (req.url === '/mcp') res.writeHead(307, { location: '/mcp/' }).end();
        else if (seen.body?.['id'] === 1) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(resultFor(1, 'same origin')));
        } else res.writeHead(307, { location: target.url }).end();
      });
      const { transport, messages } = await open(srv.url, {
        token: 'secret',
        sessionId: 'sess-1',
        headers: { 'x-api-key': 'k' },
      });
      try {
        await transport.send(call(1));
        await until(() => responses(messages).length === 1, 'response after the same-origin redirect');
        assert.deepEqual(responses(messages)[0]?.['result'], resultFor(1, 'same origin').result);
        assert.deepEqual(
          srv.seen.map((s) => `${s.method} ${s.url}`),
          ['POST /mcp', 'POST /mcp/'],
        );
        assert.equal(srv.seen[1]?.headers.authorization, 'Bearer secret', 'same origin: kept');
        assert.equal(srv.seen[1]?.headers['mcp-session-id'], 'sess-1');
        assert.deepEqual(srv.seen[1]?.body, srv.seen[0]?.body);
        await assert.rejects(transport.send(call(2)), (e: unknown) => {
          assert.ok(e instanceof HttpStatusError, String(e));
          assert.equal(e.status, 307);
          assert.match(e.message, /not followed/);
          return true;
        });
        assert.equal(target.seen.length, 0, 'nothing reached the other origin');
      } finally {
        await transport.close();
        await srv.close();
        await target.close();
      }
    });

    test("redirectPolicy 'follow': a 307 to another origin is followed without the credentials; a 302 of a POST is not", async () => {
      // Two loopback ports are two origins. The server that moved keeps the session: the session id, the protocol
      // version and the caller's headers go along; Authorization and Cookie do not (as fetch drops them).
      const target = await scripted((_req, res, seen) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(resultFor(seen.body?.['id'], 'moved')));
      });
      const srv = await scripted((_req, res, seen) => {
        const location = new URL(target.url);
        location.searchParams.set('from', 'old');
        if (seen.body?.['id'] === 2) res.writeHead(302, { location: location.href }).end();
        else res.writeHead(307, { location: location.href }).end();
      });
      const { transport, messages } = await open(srv.url, {
        redirectPolicy: 'follow',
        token: 'secret',
        sessionId: 'sess-1',
        headers: { 'x-api-key': 'k', cookie: 'c=1' },
      });
      try {
        await transport.send(call(1));
        await until(() => responses(messages).length === 1, 'response from the other origin');
        assert.deepEqual(responses(messages)[0]?.['result'], resultFor(1, 'moved').result);
        const moved = target.seen[0];
        assert.equal(moved?.method, 'POST');
        assert.equal(moved?.url, `${new URL(target.url).pathname}?from=old`);
        assert.deepEqual(moved?.body, srv.seen[0]?.body, 'the message went along');
        assert.equal(moved?.headers['mcp-session-id'], 'sess-1');
        assert.equal(moved?.headers['x-api-key'], 'k');
        assert.equal(moved?.headers.authorization, undefined, 'no token to another origin');
        assert.equal(moved?.headers.cookie, undefined, 'no cookie to another origin');
        assert.equal(srv.seen[0]?.headers.authorization, 'Bearer secret', 'the first origin had it');
        await assert.rejects(transport.send(call(2)), (e: unknown) => {
          assert.ok(e instanceof HttpStatusError, String(e));
          assert.equal(e.status, 302);
          assert.match(e.message, /not followed/);
          return true;
        });
        assert.equal(target.seen.length, 1, 'the 302 of a POST reached nobody');
      } finally {
        await transport.close();
        await srv.close();
        await target.close();
      }
    });

    test('gzip-encoded JSON and SSE bodies are decoded; accept-encoding and user-agent are sent', async () => {
      const srv = await scripted((_req, res, seen) => {
        const id = seen.body?.['id'];
        if (id === 1) {
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
          res.end(gzipSync(JSON.stringify(resultFor(id, 'zipped json'))));
        } else {
          res.writeHead(200, { ...SSE, 'content-encoding': 'gzip' });
          res.end(gzipSync(frame(progress, 'z1') + frame(resultFor(id, 'zipped sse'), 'z2')));
        }
      });
      const { transport, messages } = await open(srv.url);
      try {
        await transport.send(call(1));
        await transport.send(call(2));
        await until(() => responses(messages).length === 2, 'two responses');
        const texts = responses(messages).map(
          (m) => (m['result'] as { content: { text: string }[] }).content[0]?.text,
        );
        assert.deepEqual(texts.sort(), ['zipped json', 'zipped sse']);
        assert.ok(messages.some((m) => m['method'] === 'notifications/progress'));
        assert.match(String(srv.seen[0]?.headers['accept-encoding']), /gzip/);
        assert.ok(String(srv.seen[0]?.headers['user-agent']).length > 0);
      } finally {
        await transport.close();
        await srv.close();
      }
    });

    test('a keep-alive connection the server closed while idle does not fail the next request', async () => {
      const srv = await scripted((_req, res, seen) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(resultFor(seen.body?.['id'])));
      });
      const { transport, messages } = await open(srv.url);
      try {
        await transport.send(call(1));
        await until(() => responses(messages).length === 1, 'first');
        for (let i = 2; i <= 6; i++) {
          srv.closeIdle();
          await transport.send(call(i));
        }
        await until(() => responses(messages).length === 6, 'all answered');
      } finally {
        await transport.close();
        await srv.close();
      }
    });

    test('repeated response headers are joined like Headers.get (Content-Type "a, b" is not JSON)', async () => {
      const srv = await scripted((_req, res, seen) => {
        res.setHeader('content-type', ['application/json', 'text/plain']);
        res.writeHead(200);
        res.end(JSON.stringify(resultFor(seen.body?.['id'])));
      });
      const { transport } = await open(srv.url);
      try {
        const error = await transport.send(call(1)).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(error instanceof UnexpectedContentTypeError);
        assert.equal(error.contentType, 'application/json, text/plain');
      } finally {
        await transport.close();
        await srv.close();
      }
    });
  });
}
