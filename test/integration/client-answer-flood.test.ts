// A server that floods its client with requests (or a burst of them, as a server fanning out elicitations does)
// used to get one POST per answer at once, each on a connection of its own: 3,000 pings meant 3,000 sockets opened
// together, the listen backlog overflowed and answers lagged by seconds of SYN retries (measured). The answers
// and notifications the client POSTs are now at most MAX_CONCURRENT_ANSWERS at a time, the rest queued (started in order);
// requests are not limited (a streaming call holds its connection, and an answer must never wait behind one).
// A scripted node:http server on 127.0.0.1:0, both adapters.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_CONCURRENT_ANSWERS } from '../../src/client/answer-slots.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { CLIENT_ADAPTERS } from '../helpers/client-adapters.js';
import { until } from '../helpers/http.js';
import { scripted } from '../helpers/scripted-server.js';

const PINGS = 120;

for (const [adapter, http] of Object.entries(CLIENT_ADAPTERS)) {
  describe(`client: a flood of server requests (${adapter} adapter)`, () => {
    test(`answers go out at most ${MAX_CONCURRENT_ANSWERS} at a time, every one of them`, async () => {
      let open = 0;
      let most = 0;
      const answered: unknown[] = [];
      const server = await scripted((_req, res, seen) => {
        if (seen.method === 'GET') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          let burst = '';
          for (let i = 0; i < PINGS; i++)
            burst += `data: ${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'ping' })}\n\n`;
          res.write(burst);
          return;
        }
        if (seen.method !== 'POST') {
          res.writeHead(405).end();
          return;
        }
        // Each answer is held a moment, so that answers sent together are seen together.
        open++;
        most = Math.max(most, open);
        answered.push(seen.body?.['id']);
        setTimeout(() => {
          open--;
          res.writeHead(202).end();
        }, 20);
      });
      const transport = new StreamableHttpClientTransport(server.url, { ...http, sessionId: 's1' });
      const failures: unknown[] = [];
      transport.onmessage = (m) => {
        const request = m as { id?: number; method?: string };
        if (request.method !== 'ping' || request.id === undefined) return;
        transport
          .send({ jsonrpc: '2.0', id: request.id, result: {} } as JSONRPCMessage)
          .catch((e: unknown) => failures.push(e));
      };
      try {
        await transport.start();
        await until(() => answered.length === PINGS, 10_000, 'every ping answered');
        assert.deepEqual(failures, []);
        assert.ok(most <= MAX_CONCURRENT_ANSWERS, `${most} answers were open at once`);
        assert.deepEqual(
          [...answered].sort((a, b) => Number(a) - Number(b)),
          Array.from({ length: PINGS }, (_, i) => i),
        );
      } finally {
        await transport.close();
        await server.close();
      }
    });
  });
}
