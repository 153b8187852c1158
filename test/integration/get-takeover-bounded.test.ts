// GET streams must not ping-pong. The official SDK client, when a resuming GET ends before its
// first event, forgets its Last-Event-ID and opens a second standalone GET; if each new GET
// displaced the older one, the client's two loops would displace each other forever.
// Reproduced here with the SDK client itself; the test counts the GETs the server receives.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { RawSession, sleep, until } from '../helpers/http.js';
import { createProbe, startServer, testServerFactory } from '../helpers/test-server.js';

describe('GET stream replacement is bounded', () => {
  test('the SDK client whose resuming GET ends empty does not start an endless GET loop', async () => {
    const handler = createMcpHandler({
      createServer: testServerFactory(createProbe()),
      mode: 'sse',
      retryMs: 100,
    });
    let gets = 0;
    const server: Server = createServer((req, res) => {
      if (req.method === 'GET') gets++;
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    after(async () => {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const client = new Client({ name: 'pingpong', version: '1' });
    await client.connect(transport);
    after(() => client.close().catch(() => undefined));
    await until(() => handler.stats().streams.open.get === 1, 3_000, 'standalone GET open');

    // A call answered on an SSE stream; its last event id is a cursor with nothing after it.
    let last: string | undefined;
    await withDeadline(
      client.callTool({ name: 'echo', arguments: { text: 'x' } }, CallToolResultSchema, {
        onresumptiontoken: (token) => {
          last = token;
        },
      }),
      5_000,
      'call',
    );
    assert.ok(last !== undefined, 'the call carried event ids');
    // The SDK resumes from it: the replay is empty, the GET ends before any event, and the SDK
    // then opens a second standalone GET without Last-Event-ID.
    await transport.resumeStream(last);
    await sleep(2_000);
    const settled = gets;
    await sleep(2_000);
    const more = gets - settled;
    assert.ok(more <= 2, `GETs keep coming: ${more} in the 2 s after settling (${gets} in all)`);
    const s = handler.stats().streams;
    assert.equal(s.open.get, 1, 'one standalone GET stays open');
    assert.ok(s.conflicts >= 1, 'the displacing GET was refused and counted');
    assert.match(handler.metrics(), /sluice_stream_takeovers_total\{outcome="refused"\} [1-9]/);
  });

  test('a GET replaces the live connection (a proxy may have killed it); another one right after that takeover gets 409 + Retry-After', async () => {
    const srv = await startServer({ retryMs: 100 });
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const first = await s.get();
    await first.waitFor((r) => r.events.length > 0, 2_000, 'priming');
    const second = await s.get();
    assert.equal(second.status, 200);
    await first.finished(2_000, 'the replaced connection ends');
    const third = await s.get();
    assert.equal(third.status, 409, third.text);
    assert.match(String(third.headers['retry-after']), /^[1-9]\d*$/);
    assert.equal(third.json().error.data.reason, 'stream-conflict');
    third.destroy();
    const st = srv.stats().streams;
    assert.equal(st.replaced, 1);
    assert.equal(st.conflicts, 1);
    assert.equal(st.open.get, 1);
    second.destroy();
  });
});
