// Named cases the generated hostile answers (client-fuzz.test.ts) found, pinned over both HTTP
// adapters against scripted node:http servers on 127.0.0.1:0:
// - a response repeated on a stream settles its request once; the second is reported, not passed on;
// - a server that replays the same events on every resume (ignoring Last-Event-ID) runs into
//   maxReconnectAttempts, and a replayed server-to-client request is delivered once;
// - a JSON answer whose body stalls fails with IdleTimeoutError, one cut mid-body with NetworkError
//   (typed, where node's adapter used to throw a bare "aborted");
// - an error answer whose body stalls still raises its HttpStatusError, within the idle timeout;
// - a re-sent request answered with some other request's response fails instead of staying pending.
// Found by the client robustness audit:
// - a replacement initialize answered on an SSE stream the server keeps open (keep-alives after the
//   response) completes the re-initialization at the response, not at an EOF that never comes;
// - a server's `retry:` is bounded by maxReconnectDelayMs: a huge one neither overflows the timer into an
//   immediate reconnect nor parks the stream for days;
// - close() is bounded by closeTimeoutMs even when building the DELETE's headers hangs;
// - an event id outside ASCII is sent back in Last-Event-ID as its UTF-8 bytes, as EventSource does;
// - an event id over 4,096 characters is neither kept nor sent: the stream cannot resume from it.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import {
  HttpStatusError,
  IdleTimeoutError,
  MalformedMessageError,
  NetworkError,
  ResumeExhaustedError,
  type StreamableHttpClientOptions,
  StreamableHttpClientTransport,
} from '../../src/client/index.js';
import { CLIENT_ADAPTERS } from '../helpers/client-adapters.js';
import { withDeadline } from '../helpers/deadline.js';
import { until } from '../helpers/http.js';
import { initializeAnswer, scripted } from '../helpers/scripted-server.js';

const IDLE_MS = 200;
const SSE = { 'content-type': 'text/event-stream' };
const frame = (id: string, message: unknown): string => `id: ${id}\ndata: ${JSON.stringify(message)}\n\n`;
const call = (id: string): JSONRPCMessage =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } }) as JSONRPCMessage;

async function open(url: string, options: StreamableHttpClientOptions) {
  const transport = new StreamableHttpClientTransport(new URL(url), {
    initialReconnectDelayMs: 2,
    maxReconnectDelayMs: 10,
    maxReconnectAttempts: 3,
    idleTimeoutMs: IDLE_MS,
    openStandaloneStream: false,
    ...options,
  });
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  transport.onmessage = (m) => messages.push(m);
  transport.onerror = (e) => errors.push(e);
  await transport.start();
  return { transport, messages, errors };
}

/** A server whose POST stream carries one event with id `id` and ends; a GET that resumes gets c1's answer. */
const cutAfterId = (id: string) =>
  scripted((_req, res, seen) => {
    res.writeHead(200, SSE);
    if (seen.method === 'POST') res.end(`id: ${id}\ndata: \n\n`);
    else res.end(frame('next', { jsonrpc: '2.0', id: 'c1', result: { content: [] } }));
  });

const responsesFor = (messages: JSONRPCMessage[], id: string) =>
  messages.filter((m) => 'id' in m && m.id === id && !('method' in m));

for (const [adapter, options] of Object.entries(CLIENT_ADAPTERS)) {
  describe(`client transport, hostile answers (${adapter} adapter)`, () => {
    test('a response sent twice settles its request once; the second is reported to onerror', async () => {
      const server = await scripted((_req, res) => {
        const result = { jsonrpc: '2.0', id: 'c1', result: { content: [] } };
        res.writeHead(200, SSE).end(frame('s/1/1', result) + frame('s/1/2', result));
      });
      const { transport, messages, errors } = await open(server.url, options);
      try {
        await transport.send(call('c1'));
        await until(() => errors.length > 0, 5_000, 'the duplicate is reported');
        assert.equal(responsesFor(messages, 'c1').length, 1);
        assert.ok(
          errors.some((e) => e instanceof MalformedMessageError && /no pending request/.test(e.message)),
        );
      } finally {
        await transport.close();
        await server.close();
      }
    });

    test('a server replaying the same events on every resume ends in ResumeExhaustedError; its request is delivered once', async () => {
      // Every connection (the POST and each resuming GET) sends the same two events from the start, a
      // server-to-client request and a progress notification, and closes without the response.
      const gets: (string | undefined)[] = [];
      const server = await scripted((req, res, seen) => {
        if (seen.method === 'GET') gets.push(req.headers['last-event-id'] as string | undefined);
        res.writeHead(200, SSE).end(
          frame('s/1/1', { jsonrpc: '2.0', id: 'srv-1', method: 'ping' }) +
            frame('s/1/2', {
              jsonrpc: '2.0',
              method: 'notifications/progress',
              params: { progressToken: 't', progress: 1 },
            }),
        );
      });
      const { transport, messages, errors } = await open(server.url, options);
      try {
        await transport.send(call('c1'));
        await until(() => responsesFor(messages, 'c1').length > 0, 5_000, 'the request fails');
        const failed = responsesFor(messages, 'c1')[0] as { error?: { data?: { sluiceCode?: string } } };
        assert.equal(failed.error?.data?.sluiceCode, 'SLUICE_CLIENT_RESUME_EXHAUSTED');
        assert.ok(errors.some((e) => e instanceof ResumeExhaustedError));
        // Every resume asked for what followed the last event (the cursor never moved back) ...
        assert.equal(gets.length, 3);
        assert.ok(
          gets.every((id) => id === 's/1/2'),
          JSON.stringify(gets),
        );
        // ... and the replays delivered nothing a second time.
        assert.equal(messages.filter((m) => 'method' in m && m.method === 'ping').length, 1);
        assert.equal(
          messages.filter((m) => 'method' in m && m.method === 'notifications/progress').length,
          1,
        );
      } finally {
        await transport.close();
        await server.close();
      }
    });

    test('a re-sent request whose JSON answer names another request fails with NoResponseError', async () => {
      // The POST's stream ends with no event id (nothing to resume from), so the idempotent request is
      // re-sent; the re-send is answered with a response for some other id. It used to stay pending.
      let posts = 0;
      const server = await scripted((_req, res) => {
        posts++;
        if (posts === 1) res.writeHead(200, SSE).end(': nothing\n\n');
        else
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: 'not-yours', result: {} }));
      });
      const { transport, messages } = await open(server.url, { ...options, isIdempotent: () => true });
      try {
        await transport.send(call('c1'));
        await until(() => responsesFor(messages, 'c1').length > 0, 5_000, 'the request settles');
        const failed = responsesFor(messages, 'c1')[0] as { error?: { data?: { sluiceCode?: string } } };
        assert.equal(failed.error?.data?.sluiceCode, 'SLUICE_CLIENT_NO_RESPONSE');
        assert.equal(posts, 2);
      } finally {
        await transport.close();
        await server.close();
      }
    });

    test('a JSON answer whose body stalls fails with IdleTimeoutError', async () => {
      const held: ServerResponse[] = [];
      const server = await scripted((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"jsonrpc":"2.0",');
        held.push(res);
      });
      const { transport } = await open(server.url, options);
      try {
        const t0 = Date.now();
        await assert.rejects(withDeadline(transport.send(call('c1')), 5_000, 'send'), IdleTimeoutError);
        assert.ok(Date.now() - t0 < 5_000);
      } finally {
        for (const r of held) r.destroy();
        await transport.close();
        await server.close();
      }
    });

    test('a JSON answer cut mid-body fails with NetworkError', async () => {
      const server = await scripted((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"jsonrpc":"2.0",');
        setTimeout(() => res.destroy(), 10);
      });
      const { transport } = await open(server.url, options);
      try {
        await assert.rejects(withDeadline(transport.send(call('c1')), 5_000, 'send'), NetworkError);
      } finally {
        await transport.close();
        await server.close();
      }
    });

    test('an error answer whose body stalls still raises its HttpStatusError', async () => {
      const held: ServerResponse[] = [];
      const server = await scripted((_req, res) => {
        res.writeHead(410, { 'content-type': 'text/plain' });
        res.write('gone, and then');
        held.push(res);
      });
      const { transport } = await open(server.url, options);
      try {
        await assert.rejects(withDeadline(transport.send(call('c1')), 5_000, 'send'), (e: unknown) => {
          assert.ok(e instanceof HttpStatusError);
          assert.equal(e.status, 410);
          return true;
        });
      } finally {
        for (const r of held) r.destroy();
        await transport.close();
        await server.close();
      }
    });
    test('a replacement initialize answered on an SSE stream kept open with keep-alives completes at its response', async () => {
      // MCP 2025-11-25 basic/transports §"Sending Messages to the Server": the server SHOULD close the stream
      // after the response, but nothing obliges it to; a client that reads the re-initialize's stream to its
      // end waits forever here (keep-alives defeat the idle timeout), and every request with it.
      const held: ServerResponse[] = [];
      const timers: NodeJS.Timeout[] = [];
      let initializes = 0;
      const server = await scripted((_req, res, seen) => {
        const m = seen.body?.['method'];
        const sid = seen.headers['mcp-session-id'];
        if (m === 'initialize') {
          initializes++;
          const answer = initializeAnswer(seen);
          res.writeHead(200, { ...SSE, 'mcp-session-id': `s${initializes}` });
          res.write(frame(`i/${initializes}`, answer));
          held.push(res);
          timers.push(setInterval(() => res.write(': keep-alive\n\n'), IDLE_MS / 4));
        } else if (m === 'notifications/initialized') {
          res.writeHead(202).end();
        } else if (sid === 's1') {
          res.writeHead(404).end();
        } else {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: seen.body?.['id'], result: { content: [] } }));
        }
      });
      const { transport, messages } = await open(server.url, options);
      try {
        await withDeadline(
          transport.send({
            jsonrpc: '2.0',
            id: 'init',
            method: 'initialize',
            params: {
              protocolVersion: '2025-11-25',
              capabilities: {},
              clientInfo: { name: 'c', version: '1' },
            },
          } as JSONRPCMessage),
          5_000,
          'initialize',
        );
        await until(() => responsesFor(messages, 'init').length === 1, 5_000, 'the initialize answer');
        await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' } as JSONRPCMessage);
        await withDeadline(transport.send(call('c1')), 5_000, 'the call after the 404 and re-initialize');
        assert.equal(responsesFor(messages, 'c1').length, 1);
        assert.equal(transport.sessionId, 's2');
      } finally {
        for (const t of timers) clearInterval(t);
        for (const r of held) r.destroy();
        await transport.close();
        await server.close();
      }
    });

    for (const retry of ['99999999999999', '2000000000', '9'.repeat(400)]) {
      test(`retry: ${retry.slice(0, 16)}${retry.length > 16 ? '…' : ''} waits maxReconnectDelayMs, not ~0 ms nor days`, async () => {
        // WHATWG HTML §9.2.6 takes any run of ASCII digits as the reconnection time; a timer given more than
        // 2^31-1 ms fires at once (a reconnect storm), and below that a hostile value parks the stream for
        // weeks. The client's own cap bounds it (MCP 2025-11-25 basic/transports §"Resumability and Redelivery").
        let closedAt = 0;
        const server = await scripted((_req, res, seen) => {
          res.writeHead(200, SSE);
          if (seen.method === 'POST') {
            res.write(`id: p1\nretry: ${retry}\ndata: \n\n`);
            setTimeout(() => {
              closedAt = Date.now();
              res.end();
            }, 20);
          } else {
            res.end(frame('p2', { jsonrpc: '2.0', id: 'c1', result: { content: [] } }));
          }
        });
        const { transport, messages } = await open(server.url, {
          ...options,
          initialReconnectDelayMs: 2,
          maxReconnectDelayMs: 300,
        });
        try {
          await transport.send(call('c1'));
          await until(
            () => responsesFor(messages, 'c1').length === 1,
            3_000,
            'the response after the resume',
          );
          const get = server.seen.find((s) => s.method === 'GET');
          const waited = (get?.at ?? 0) - closedAt;
          assert.ok(waited >= 250, `resumed after ${waited} ms: the retry: overflowed the timer`);
          assert.equal(server.seen.filter((s) => s.method === 'GET').length, 1);
        } finally {
          await transport.close();
          await server.close();
        }
      });
    }

    test('close() is bounded by closeTimeoutMs even when the DELETE headers never come', async () => {
      let hang = false;
      const server = await scripted((_req, res, seen) => {
        if (seen.body?.['method'] === 'initialize') {
          res
            .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' })
            .end(JSON.stringify(initializeAnswer(seen)));
        } else res.writeHead(202).end();
      });
      // A token provider stuck on its own dependency (an unreachable vault, a refresh that never answers).
      const token = (): Promise<string> => (hang ? new Promise<string>(() => {}) : Promise.resolve('t'));
      const { transport } = await open(server.url, { ...options, token, closeTimeoutMs: 200 });
      try {
        await transport.send({
          jsonrpc: '2.0',
          id: 'init',
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'c', version: '1' },
          },
        } as JSONRPCMessage);
        assert.equal(transport.sessionId, 's1');
        hang = true;
        const t0 = Date.now();
        await withDeadline(transport.close(), 3_000, 'close()');
        assert.ok(Date.now() - t0 < 2_000);
      } finally {
        await transport.close();
        await server.close();
      }
    });
    test('an event id outside ASCII resumes with Last-Event-ID as its UTF-8 bytes', async () => {
      // WHATWG HTML §9.2.3 "reestablish the connection": the last event ID string is sent "encoded as UTF-8".
      // Any character but LF, CR and NUL may stand in an id, and a header value is bytes: a character above
      // U+00FF refused by both adapters' header checks made every resume fail before it was sent.
      const id = 'café-😀';
      const server = await cutAfterId(id);
      const { transport, messages } = await open(server.url, options);
      try {
        await transport.send(call('c1'));
        await until(() => responsesFor(messages, 'c1').length === 1, 5_000, 'the response after the resume');
        assert.ok(!('error' in (responsesFor(messages, 'c1')[0] as object)), 'answered, not failed');
        const get = server.seen.find((s) => s.method === 'GET');
        // node:http reads header bytes as latin1: one character per byte.
        assert.equal(get?.headers['last-event-id'], Buffer.from(id, 'utf8').toString('latin1'));
      } finally {
        await transport.close();
        await server.close();
      }
    });
    test('an event id over 4,096 characters is not a cursor: no resume with it, the request fails as unresumable', async () => {
      // An id may be as long as an event (maxEventBytes). Each new one was kept (the last 256, to recognise
      // replays: up to 256 × maxEventBytes held for a stream) and sent back in a header no server takes.
      const long = 'a'.repeat(5_000);
      const server = await cutAfterId(long);
      const { transport, messages } = await open(server.url, options);
      try {
        await transport.send(call('c1'));
        await until(() => responsesFor(messages, 'c1').length === 1, 5_000, 'the request settles');
        const failed = responsesFor(messages, 'c1')[0] as { error?: { data?: { sluiceCode?: string } } };
        assert.equal(failed.error?.data?.sluiceCode, 'SLUICE_CLIENT_RESUME_IMPOSSIBLE');
        assert.equal(server.seen.filter((s) => s.method === 'GET').length, 0, 'no resume with the long id');
      } finally {
        await transport.close();
        await server.close();
      }
    });
  });
}
