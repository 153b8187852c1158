// A request re-sent while another request is re-initializing the session must wait for the new
// session and go out with its id (MCP 2025-11-25 basic/transports §"Session Management": every
// request after initialization carries Mcp-Session-Id). A scripted node:http server on 127.0.0.1:0
// controls the order: a cut stream's resume GET leaves with the old session id and is held; another
// request's 404 starts the re-initialization, whose `initialize` the server holds too; only then is
// the GET refused, so the cut request is re-sent while the re-initialization is in progress (the
// order the shutdown-restart suite hit now and then on the fetch binding). Both adapters.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { idempotencyMeta, StreamableHttpClientTransport } from '../../src/client/index.js';
import { CLIENT_ADAPTERS } from '../helpers/client-adapters.js';
import { withDeadline } from '../helpers/deadline.js';
import { until as poll } from '../helpers/http.js';
import { scripted } from '../helpers/scripted-server.js';

const SSE = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
const JSON_TYPE = { 'content-type': 'application/json' };
const VERSION = '2025-11-25';
const call = (id: number, meta?: Record<string, string>): JSONRPCMessage =>
  ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'x', arguments: {}, ...(meta !== undefined ? { _meta: meta } : {}) },
  }) as JSONRPCMessage;
const initResult = (id: unknown) => ({
  jsonrpc: '2.0',
  id,
  result: { protocolVersion: VERSION, capabilities: {}, serverInfo: { name: 's', version: '1' } },
});

/** Polls every 5 ms: the next step of these races should follow the awaited state at once. */
function until(predicate: () => boolean, label: string, ms = 5_000): Promise<void> {
  return poll(predicate, ms, label, 5);
}

/** How long the server holds the replacement initialize when no re-send arrives meanwhile. */
const HOLD_MS = 400;

for (const [adapter, http] of Object.entries(CLIENT_ADAPTERS)) {
  describe(`client re-initialization race (${adapter} adapter)`, () => {
    test('a request re-sent during another request’s re-initialization waits and carries the new session id', async () => {
      let streamA: IncomingMessage | undefined;
      let release: (() => void) | undefined;
      let refuseResume: (() => void) | undefined;
      const srv = await scripted((req, res, seen) => {
        const sid = seen.headers['mcp-session-id'];
        const m = seen.body?.['method'];
        if (seen.method === 'DELETE') {
          res.writeHead(200);
          res.end();
        } else if (seen.method === 'GET') {
          // Resumes of the first session's stream: that session is gone. The first is held until the
          // re-initialization has started.
          const refuse = () => {
            res.writeHead(404);
            res.end();
          };
          if (refuseResume === undefined) refuseResume = refuse;
          else refuse();
        } else if (m === 'initialize' && sid === undefined && release === undefined) {
          res.writeHead(200, { ...JSON_TYPE, 'mcp-session-id': 's1' });
          res.end(JSON.stringify(initResult(seen.body?.['id'])));
          release = () => undefined;
        } else if (m === 'initialize' && sid === undefined) {
          // The replacement initialize: held, and the first session's open stream is cut now, so its
          // request is re-sent while this re-initialization is in progress.
          let done = false;
          release = () => {
            if (done) return;
            done = true;
            res.writeHead(200, { ...JSON_TYPE, 'mcp-session-id': 's2' });
            res.end(JSON.stringify(initResult(seen.body?.['id'])));
          };
          setTimeout(() => release?.(), HOLD_MS);
          refuseResume?.();
        } else if (m === 'notifications/initialized') {
          res.writeHead(202);
          res.end();
        } else if (sid === undefined) {
          // What a server answers a request without a session id (Sluice: 400, -32000).
          res.writeHead(400, JSON_TYPE);
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: null,
              error: { code: -32000, message: 'Bad Request: Mcp-Session-Id header is required' },
            }),
          );
          release?.();
        } else if (sid === 's1' && seen.body?.['id'] === 1) {
          streamA = req;
          res.writeHead(200, SSE);
          res.write(
            `id: e1\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`,
          );
        } else if (sid === 's1') {
          res.writeHead(404);
          res.end();
        } else {
          res.writeHead(200, JSON_TYPE);
          res.end(JSON.stringify({ jsonrpc: '2.0', id: seen.body?.['id'], result: { content: [], sid } }));
          if (String(seen.body?.['id']).startsWith('1.')) release?.();
        }
      });
      const transport = new StreamableHttpClientTransport(new URL(srv.url), {
        initialReconnectDelayMs: 5,
        maxReconnectDelayMs: 20,
        openStandaloneStream: false,
        ...http,
      });
      const messages: Record<string, unknown>[] = [];
      transport.onmessage = (msg) => messages.push(msg as Record<string, unknown>);
      transport.onerror = () => undefined;
      await transport.start();
      try {
        await transport.send({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'c', version: '1' } },
        } as JSONRPCMessage);
        transport.setProtocolVersion(VERSION);
        await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' } as JSONRPCMessage);
        // A: an idempotent request answered on an SSE stream that the server will cut.
        await transport.send(call(1, idempotencyMeta('op-1')));
        await until(() => streamA !== undefined, 'stream of request 1 open');
        // The stream is cut; its resume GET leaves with s1 and is held by the server.
        streamA?.socket.destroy();
        await until(() => srv.seen.some((x) => x.method === 'GET'), 'resume GET of request 1');
        assert.equal(srv.seen.find((x) => x.method === 'GET')?.headers['mcp-session-id'], 's1');
        // B: answered 404, which starts the re-initialization (held by the server).
        const b = transport.send(call(2));
        const answered = (id: number) =>
          messages.some((msg) => msg['id'] === id && ('result' in msg || 'error' in msg));
        await until(() => answered(1) && answered(2), 'both requests answered');
        await withDeadline(b, 5_000, 'send of request 2');
        const calls = srv.seen.filter((s) => s.method === 'POST' && s.body?.['method'] === 'tools/call');
        for (const c of calls)
          assert.ok(
            c.headers['mcp-session-id'] !== undefined,
            `tools/call ${String(c.body?.['id'])} went out without a session id`,
          );
        const resent = calls.filter((c) => String(c.body?.['id']).startsWith('1.'));
        assert.equal(resent.length, 1, 'request 1 re-sent once');
        assert.equal(resent[0]?.headers['mcp-session-id'], 's2');
        for (const id of [1, 2]) {
          const r = messages.find((msg) => msg['id'] === id);
          assert.deepEqual(r?.['result'], { content: [], sid: 's2' }, `request ${id} answered in s2`);
        }
      } finally {
        await transport.close();
        await srv.close();
      }
    });
  });
}
