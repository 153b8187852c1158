/**
 * Interop with the official clients, against Sluice hosting the v1 demo server: the SDK v2 client
 * (@modelcontextprotocol/client 2.4.0) in `auto` mode lands on the 2026-07-28 era (no session), in
 * its default mode on the legacy one (a session); the v1 client (@modelcontextprotocol/sdk 1.32)
 * lands on legacy. One endpoint serves all three at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';

describe('modern era: interop with the official clients', () => {
  let s: Served;
  before(async () => {
    s = await serve({ createServer: () => createDemoServer(), port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await s.close();
  });

  test('SDK v2 client in auto mode lands on the modern era and calls tools statelessly', async () => {
    const client = new V2Client(
      { name: 'v2-auto', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    const transport = new V2Transport(new URL(s.url));
    await withDeadline(client.connect(transport), 10_000, 'v2 auto connect');
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      assert.equal(transport.sessionId, undefined);
      const tools = await withDeadline(client.listTools(), 5_000, 'listTools');
      assert.ok(tools.tools.some((t) => t.name === 'test_simple_text'));
      const r = await withDeadline(
        client.callTool({ name: 'test_simple_text', arguments: {} }),
        5_000,
        'callTool',
      );
      assert.equal((r.content as { text: string }[])[0]?.text, 'This is a simple text response for testing.');
      const x = await withDeadline(
        client.callTool({ name: 'test_x_mcp_header', arguments: { region: 'eu-west-1' } }),
        5_000,
        'x-mcp-header tool',
      );
      assert.equal((x.content as { text: string }[])[0]?.text, 'region eu-west-1');
      assert.equal(s.handler.stats().sessions.active, 0, 'no session was created');
      assert.ok(s.handler.stats().modern.requests >= 3);
    } finally {
      await client.close();
    }
  });

  test('SDK v2 client in its default mode lands on legacy (a session)', async () => {
    const client = new V2Client({ name: 'v2-default', version: '1.0.0' });
    const transport = new V2Transport(new URL(s.url));
    await withDeadline(client.connect(transport), 10_000, 'v2 default connect');
    try {
      assert.notEqual(client.getProtocolEra(), 'modern');
      assert.equal(typeof transport.sessionId, 'string');
      const r = await withDeadline(
        client.callTool({ name: 'test_simple_text', arguments: {} }),
        5_000,
        'callTool',
      );
      assert.ok(Array.isArray(r.content));
    } finally {
      await client.close();
    }
  });

  test('SDK 1.32 client lands on legacy while a v2 auto client is served alongside', async () => {
    const v1 = new V1Client({ name: 'v1', version: '1.0.0' });
    const t1 = new V1Transport(new URL(s.url));
    const v2 = new V2Client({ name: 'v2-auto', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await withDeadline(
      Promise.all([v1.connect(t1), v2.connect(new V2Transport(new URL(s.url)))]),
      10_000,
      'connect both',
    );
    try {
      assert.equal(typeof t1.sessionId, 'string');
      assert.equal(v2.getProtocolEra(), 'modern');
      const [a, b] = await withDeadline(
        Promise.all([
          v1.callTool({ name: 'test_simple_text', arguments: {} }),
          v2.callTool({ name: 'test_simple_text', arguments: {} }),
        ]),
        5_000,
        'calls',
      );
      assert.deepEqual(a.content, b.content);
    } finally {
      await Promise.all([v1.close(), v2.close()]);
    }
  });
});
