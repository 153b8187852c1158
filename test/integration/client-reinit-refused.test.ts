// A re-initialization that the server refuses must not leave the client without a session: every later
// request of the session would go out without Mcp-Session-Id and be refused (400) forever. MCP 2025-11-25
// basic/transports §"Session Management": after initialization every request carries the session id, and
// a client that gets 404 starts a new session with a fresh initialize. A scripted node:http server on
// 127.0.0.1:0 plays a server killed and restarted behind a cluster still settling its lease: the session
// is unknown (404), the replacement initialize is answered 503 (twice), then a new session is granted.
// Both adapters.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { SessionExpiredError, StreamableHttpClientTransport } from '../../src/client/index.js';
import { CLIENT_ADAPTERS } from '../helpers/client-adapters.js';
import { withDeadline } from '../helpers/deadline.js';
import { scripted } from '../helpers/scripted-server.js';

const JSON_TYPE = { 'content-type': 'application/json' };
const VERSION = '2025-11-25';
const call = (id: number): JSONRPCMessage =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } }) as JSONRPCMessage;

for (const [adapter, http] of Object.entries(CLIENT_ADAPTERS)) {
  describe(`client re-initialization refused (${adapter} adapter)`, () => {
    test('after a 503 on the re-initialize, the next request re-initializes (with backoff) and never goes out session-less', async () => {
      let initializes = 0;
      /** Replacement initializes to refuse with 503 before one is granted. */
      let refusals = 2;
      const srv = await scripted((_req, res, seen) => {
        const sid = seen.headers['mcp-session-id'];
        const m = seen.body?.['method'];
        if (seen.method !== 'POST') {
          res.writeHead(405);
          res.end();
        } else if (m === 'initialize') {
          initializes++;
          if (initializes > 1 && refusals > 0) {
            refusals--;
            res.writeHead(503, JSON_TYPE);
            res.end(
              JSON.stringify({
                jsonrpc: '2.0',
                id: null,
                error: { code: -32000, message: 'owner unavailable' },
              }),
            );
            return;
          }
          res.writeHead(200, { ...JSON_TYPE, 'mcp-session-id': `s${initializes}` });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: seen.body?.['id'],
              result: { protocolVersion: VERSION, capabilities: {}, serverInfo: { name: 's', version: '1' } },
            }),
          );
        } else if (sid === undefined) {
          // What Sluice answers a non-initialize request without a session id.
          res.writeHead(400, JSON_TYPE);
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: null,
              error: { code: -32000, message: 'Bad Request: Mcp-Session-Id header is required' },
            }),
          );
        } else if (m === 'notifications/initialized') {
          res.writeHead(202);
          res.end();
        } else if (sid === 's1') {
          // The first session died with its server.
          res.writeHead(404);
          res.end();
        } else {
          res.writeHead(200, JSON_TYPE);
          res.end(JSON.stringify({ jsonrpc: '2.0', id: seen.body?.['id'], result: { content: [], sid } }));
        }
      });
      const transport = new StreamableHttpClientTransport(new URL(srv.url), {
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
        // 404, then the replacement initialize is refused (503): this request fails, typed.
        await assert.rejects(withDeadline(transport.send(call(1)), 10_000, 'call 1'), SessionExpiredError);
        // The next request re-initializes again (refused once more), the one after that gets a session.
        const second = Date.now();
        await assert.rejects(withDeadline(transport.send(call(2)), 10_000, 'call 2'), SessionExpiredError);
        await withDeadline(transport.send(call(3)), 10_000, 'call 3');
        const elapsed = Date.now() - second;
        const answer = messages.find((msg) => msg['id'] === 3);
        assert.deepEqual(
          answer?.['result'],
          { content: [], sid: 's4' },
          'call 3 answered in the new session',
        );
        assert.equal(transport.sessionId, 's4');
        for (const s of srv.seen) {
          if (s.method === 'POST' && s.body?.['method'] !== 'initialize') {
            assert.ok(
              s.headers['mcp-session-id'] !== undefined,
              `${String(s.body?.['method'])} ${String(s.body?.['id'] ?? '')} went out without a session id`,
            );
          }
        }
        // The attempts after a refusal are spaced (backoff), not fired back to back.
        const inits = srv.seen.filter((s) => s.body?.['method'] === 'initialize').map((s) => s.at);
        assert.equal(inits.length, 4, 'initial + three replacement initializes');
        const [, , third, fourth] = inits as [number, number, number, number];
        assert.ok(fourth - third >= 200, `re-initialize attempts ${fourth - third} ms apart`);
        assert.ok(elapsed < 8_000, `recovered in ${elapsed} ms`);
      } finally {
        await transport.close();
        await srv.close();
      }
    });
  });
}
