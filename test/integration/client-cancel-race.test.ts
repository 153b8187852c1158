// A request the Client cancels while its POST is still in flight (no response headers yet) must not
// have its answer stream adopted: the server ends that stream without a response (the request was
// cancelled), and an adopted stream would be resumed with Last-Event-ID. A scripted node:http server
// on 127.0.0.1:0 holds the POST's response until the cancellation has arrived, so the order is fixed
// (the order close-races hit now and then on the fetch binding under load). Both adapters.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { CLIENT_ADAPTERS } from '../helpers/client-adapters.js';
import { withDeadline } from '../helpers/deadline.js';
import { until as poll } from '../helpers/http.js';

/** Polls every 5 ms: the next step of these races should follow the awaited state at once. */
function until(predicate: () => boolean, label: string, ms = 5_000): Promise<void> {
  return poll(predicate, ms, label, 5);
}

for (const [adapter, http] of Object.entries(CLIENT_ADAPTERS)) {
  describe(`client cancellation racing the response (${adapter} adapter)`, () => {
    test('a request cancelled before its POST is answered: its stream is not adopted, nor resumed', async () => {
      const seen: { method: string; lastEventId: string | undefined; rpc: unknown }[] = [];
      let held: ServerResponse | undefined;
      const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const body = text.length > 0 ? (JSON.parse(text) as Record<string, unknown>) : undefined;
          const lastEventId = req.headers['last-event-id'];
          seen.push({
            method: req.method ?? '',
            lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
            rpc: body?.['method'],
          });
          if (req.method === 'GET') {
            res.writeHead(404);
            res.end();
          } else if (body?.['method'] === 'tools/call') {
            held = res;
          } else {
            res.writeHead(202);
            res.end();
            if (body?.['method'] === 'notifications/cancelled' && held !== undefined) {
              // The cancelled request's stream: a priming event with an id, then it ends without a response.
              held.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
              held.end('id: e1\nretry: 10\ndata: \n\n');
            }
          }
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      const { port } = server.address() as AddressInfo;
      const transport = new StreamableHttpClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
        initialReconnectDelayMs: 5,
        maxReconnectDelayMs: 20,
        openStandaloneStream: false,
        ...http,
      });
      const messages: unknown[] = [];
      transport.onmessage = (m) => messages.push(m);
      transport.onerror = () => undefined;
      await transport.start();
      try {
        const sent = transport.send({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'slow', arguments: {} },
        } as JSONRPCMessage);
        await until(() => held !== undefined, 'tools/call reached the server');
        // What the SDK Client sends when its request times out.
        await transport.send({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 1, reason: 'timeout' },
        } as JSONRPCMessage);
        await withDeadline(sent, 5_000, 'send of the cancelled request');
        // Long enough for a resume (reconnect delay 5–20 ms) to have gone out if the stream was adopted.
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(
          seen.filter((s) => s.method === 'GET'),
          [],
          'no GET (resume) for a cancelled request',
        );
        assert.deepEqual(messages, [], 'nothing delivered for a cancelled request');
      } finally {
        await transport.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });
}
