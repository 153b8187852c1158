// The Sluice client against a server built on the SDK's own StreamableHTTPServerTransport, over both HTTP
// adapters (node:http, the default on Node, and fetch).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type StreamableHttpClientOptions, StreamableHttpClientTransport } from '../../src/client/index.js';
import { CLIENT_ADAPTERS } from '../helpers/client-adapters.js';
import { withDeadline } from '../helpers/deadline.js';
import { type SdkServer, startSdkServer } from '../helpers/sdk-reference-server.js';

/** Options that select each HTTP adapter. */
async function connect(
  url: string,
  fast: boolean,
  http: StreamableHttpClientOptions,
): Promise<{ client: Client; transport: StreamableHttpClientTransport; errors: Error[] }> {
  const client = new Client({ name: 'sluice-test', version: '1.0.0' });
  const transport = new StreamableHttpClientTransport(
    new URL(url),
    fast ? { ...http, protocol: client } : { ...http },
  );
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  await withDeadline(client.connect(transport), 5_000, 'connect');
  return { client, transport, errors };
}

for (const [adapter, http] of Object.entries(CLIENT_ADAPTERS)) {
  for (const mode of ['sse', 'json'] as const) {
    for (const fast of [false, true]) {
      describe(`SDK reference server, ${mode} responses, ${fast ? 'fast dispatch' : 'onmessage dispatch'}, ${adapter} adapter`, () => {
        let server: SdkServer;
        before(async () => {
          server = await startSdkServer({ json: mode === 'json' });
        });
        after(async () => {
          await server.close();
        });

        test('initialize, session and protocol-version headers, tools/call', async () => {
          const { client, transport } = await connect(server.url, fast, http);
          try {
            assert.ok(transport.sessionId !== undefined && transport.sessionId.length > 0);
            assert.equal(transport.protocolVersion, '2025-11-25');
            const result = await withDeadline(
              client.callTool({ name: 'echo', arguments: { text: 'héllo' } }),
              5_000,
              'callTool echo',
            );
            assert.deepEqual(result.content, [{ type: 'text', text: 'héllo' }]);
            const posts = server.log.filter((r) => r.method === 'POST');
            assert.equal(posts[0]?.headers['mcp-session-id'], undefined);
            for (const post of posts) {
              assert.equal(post.headers.accept, 'application/json, text/event-stream');
              assert.equal(post.headers['content-type'], 'application/json');
            }
            const call = posts.find((r) => r.rpcMethod === 'tools/call');
            assert.equal(call?.headers['mcp-session-id'], transport.sessionId);
            assert.equal(call?.headers['mcp-protocol-version'], '2025-11-25');
          } finally {
            await client.close();
          }
        });

        test('onprogress and resetTimeoutOnProgress work through the transport', async () => {
          const { client } = await connect(server.url, fast, http);
          try {
            const seen: number[] = [];
            const result = await withDeadline(
              client.callTool({ name: 'progress', arguments: { steps: 5, delayMs: 250 } }, undefined, {
                onprogress: (p) => seen.push(p.progress),
                // JSON responses cannot carry progress, so only SSE can be kept alive by it.
                // A gap of 250 ms against an 800 ms timeout: wide enough for a loaded machine.
                timeout: mode === 'sse' ? 800 : 4_000,
                resetTimeoutOnProgress: true,
              }),
              10_000,
              'callTool progress',
            );
            assert.deepEqual(result.content, [{ type: 'text', text: 'done 5' }]);
            if (mode === 'sse') {
              // 5 × 250 ms > the 800 ms timeout: only progress resets kept the request alive.
              assert.deepEqual(seen, [1, 2, 3, 4, 5]);
            }
          } finally {
            await client.close();
          }
        });

        test('close() sends DELETE with the session id', async () => {
          const { client, transport } = await connect(server.url, fast, http);
          const sid = transport.sessionId;
          await withDeadline(client.close(), 6_000, 'close');
          const del = server.log.find((r) => r.method === 'DELETE' && r.headers['mcp-session-id'] === sid);
          assert.ok(del !== undefined, 'DELETE was sent');
          assert.equal(server.sessions.has(sid ?? ''), false);
        });
      });
    }
  }

  describe(`SDK reference server: resumption, ${adapter} adapter`, () => {
    let server: SdkServer;
    before(async () => {
      server = await startSdkServer({ retryInterval: 50 });
    });
    after(async () => {
      await server.close();
    });

    test('a POST stream closed before its response is resumed with GET + Last-Event-ID (SEP-1699)', async () => {
      const { client, errors } = await connect(server.url, false, http);
      try {
        const result = await withDeadline(
          client.callTool({ name: 'test_reconnection', arguments: {} }),
          5_000,
          'callTool test_reconnection',
        );
        assert.deepEqual(result.content, [{ type: 'text', text: 'reconnected' }]);
        const resume = server.log.find((r) => r.method === 'GET' && r.headers['last-event-id'] !== undefined);
        assert.ok(resume !== undefined, 'resumed with Last-Event-ID');
        assert.equal(server.calls.get('test_reconnection'), 1, 'not re-sent');
        assert.deepEqual(errors, []);
      } finally {
        await client.close();
      }
    });

    test('opens exactly one standalone GET stream after initialized', async () => {
      const { client, transport } = await connect(server.url, false, http);
      try {
        await withDeadline(client.ping(), 2_000, 'ping');
        await new Promise((r) => setTimeout(r, 100));
        const gets = server.log.filter(
          (r) =>
            r.method === 'GET' &&
            r.headers['mcp-session-id'] === transport.sessionId &&
            r.headers['last-event-id'] === undefined,
        );
        assert.equal(gets.length, 1);
        assert.equal(gets[0]?.headers.accept, 'text/event-stream');
      } finally {
        await client.close();
      }
    });
  });

  describe(`SDK reference server: 404 recovery across a restart on the same port, ${adapter} adapter`, () => {
    test('re-initializes transparently, retries once, and reports onsessionreset', async () => {
      let server = await startSdkServer();
      const { client, transport } = await connect(server.url, true, http);
      const resets: { previousSessionId: string | undefined; sessionId: string | undefined }[] = [];
      transport.onsessionreset = (event) => resets.push(event);
      try {
        const first = transport.sessionId;
        const port = server.port;
        await server.close();
        server = await startSdkServer({ port });
        const result = await withDeadline(
          client.callTool({ name: 'echo', arguments: { text: 'again' } }),
          5_000,
          'callTool after restart',
        );
        assert.deepEqual(result.content, [{ type: 'text', text: 'again' }]);
        assert.notEqual(transport.sessionId, first);
        assert.equal(resets.length, 1);
        assert.equal(resets[0]?.previousSessionId, first);
        assert.equal(resets[0]?.sessionId, transport.sessionId);
        const methods = server.log.filter((r) => r.method === 'POST').map((r) => r.rpcMethod);
        assert.deepEqual(methods.slice(0, 3), ['tools/call', 'initialize', 'notifications/initialized']);
        assert.equal(methods[3], 'tools/call');
      } finally {
        await client.close();
        await server.close();
      }
    });
  });
}
