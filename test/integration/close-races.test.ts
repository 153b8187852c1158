// Races around close() and cancellation: an initialize still connecting when a close begins gets
// 503 and leaves no session; a request the client cancelled is not resumed by the client.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { assertRefusal, initializeBody, send, sleep } from '../helpers/http.js';
import { slowConnect } from '../helpers/slow-connect.js';
import { buildTestServer, createProbe, startServer } from '../helpers/test-server.js';

describe('close() racing an initialize', () => {
  test('an initialize still connecting when close() begins gets 503 and no session is left', async () => {
    const probe = createProbe();
    const served = await serve({
      port: 0,
      createServer: () => {
        // A slow application-side connect (e.g. loading state) keeps the initialize in flight.
        return slowConnect(buildTestServer(probe), 200) as never;
      },
    });
    const pending = send(served.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initializeBody()),
    });
    await sleep(50);
    const closing = served.handler.close({ graceMs: 0 });
    const r = await pending;
    assertRefusal(r, 503, -32000, 'shutting-down');
    assert.equal(r.headers['mcp-session-id'], undefined);
    await closing;
    assert.equal(served.handler.stats().sessions.active, 0);
    assert.equal(served.handler.stats().sessions.created, 0);
    await served.close();
  });
});

describe('client cancellation', () => {
  test('a request the Client cancelled (timeout) is not resumed: no GET with Last-Event-ID follows', async () => {
    const srv = await startServer({ mode: 'sse' });
    after(() => srv.close());
    const client = new Client({ name: 'cancel-test', version: '1' });
    await client.connect(new StreamableHttpClientTransport(new URL(srv.url), { protocol: client }));
    after(() => client.close());
    await assert.rejects(
      client.callTool({ name: 'slow', arguments: { ms: 2_000 } }, CallToolResultSchema, { timeout: 150 }),
      /timed out/i,
    );
    // The SDK sent notifications/cancelled: the handler is aborted and the stream ends without a response.
    await withDeadline(
      (async () => {
        while (!srv.probe.aborted.includes('slow:2000')) await sleep(10);
      })(),
      3_000,
      'handler aborted by the cancellation',
    );
    await sleep(1_500);
    const st = srv.stats();
    assert.equal(st.replays.served + Object.values(st.replays.declined).reduce((a, b) => a + b, 0), 0);
    // The transport still works for the next call.
    const r = await client.callTool({ name: 'echo', arguments: { text: 'after' } }, CallToolResultSchema);
    assert.equal((r.content as { text: string }[])[0]?.text, 'after');
  });
});
