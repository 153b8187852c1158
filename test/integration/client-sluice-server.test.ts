// The Sluice client against `sluice serve` (the Sluice server with the demo tools), over both HTTP adapters.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import { CLIENT_ADAPTERS } from '../helpers/client-adapters.js';
import { withDeadline } from '../helpers/deadline.js';

/** Options that select each HTTP adapter. */
for (const [adapter, http] of Object.entries(CLIENT_ADAPTERS)) {
  for (const fast of [false, true]) {
    describe(`sluice serve, ${fast ? 'fast dispatch' : 'onmessage dispatch'}, ${adapter} adapter`, () => {
      let served: Served;
      before(async () => {
        served = await serve({ createServer: createDemoServer, port: 0 });
      });
      after(async () => {
        await served.close({ graceMs: 100 });
      });

      async function connect(): Promise<{
        client: Client;
        transport: StreamableHttpClientTransport;
        errors: Error[];
      }> {
        const client = new Client({ name: 'sluice-test', version: '1.0.0' });
        const transport = new StreamableHttpClientTransport(
          new URL(served.url),
          fast ? { ...http, protocol: client } : { ...http },
        );
        const errors: Error[] = [];
        transport.onerror = (e) => errors.push(e);
        await withDeadline(client.connect(transport), 5_000, 'connect');
        return { client, transport, errors };
      }

      test('echo, and every reindex progress event in order', async () => {
        const { client, errors } = await connect();
        try {
          const echo = await withDeadline(
            client.callTool({ name: 'echo', arguments: { text: 'ü€𝄞' } }),
            5_000,
            'echo',
          );
          assert.deepEqual(echo.content, [{ type: 'text', text: 'ü€𝄞' }]);
          const seen: number[] = [];
          const result = await withDeadline(
            client.callTool(
              { name: 'reindex', arguments: { corpus: 'c', docs: 200, delayMs: 0 } },
              undefined,
              {
                onprogress: (p) => seen.push(p.progress),
              },
            ),
            10_000,
            'reindex',
          );
          assert.deepEqual(result.content, [{ type: 'text', text: 'reindexed 200 docs' }]);
          assert.deepEqual(
            seen,
            Array.from({ length: 200 }, (_, i) => i + 1),
          );
          assert.deepEqual(errors, []);
        } finally {
          await client.close();
        }
      });

      test('flood: 5000 progress events, none lost', async () => {
        const { client } = await connect();
        try {
          let count = 0;
          let last = 0;
          await withDeadline(
            client.callTool({ name: 'flood', arguments: { count: 5000, payloadBytes: 64 } }, undefined, {
              onprogress: (p) => {
                count++;
                last = p.progress;
              },
            }),
            20_000,
            'flood',
          );
          assert.equal(last, 5000);
          assert.ok(count <= 5000 && count > 0);
        } finally {
          await client.close();
        }
      });

      test('test_reconnection: the stream is closed early and resumed, the result arrives once', async () => {
        const { client } = await connect();
        try {
          const result = await withDeadline(
            client.callTool({ name: 'test_reconnection', arguments: {} }),
            10_000,
            'test_reconnection',
          );
          assert.equal(result.isError, undefined);
        } finally {
          await client.close();
        }
      });
    });
  }
}
