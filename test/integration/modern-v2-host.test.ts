/**
 * Hosting an SDK v2 server (@modelcontextprotocol/server 2.4.0): `createServer` returns a v2
 * McpServer and Sluice serves it on both eras, legacy sessions through its bridge transport and
 * 2026-07-28 requests through its modern adapter: stamped results, server/discover and listen.
 * Not covered: MRTR on a v2 server through the adapter. The v2 server reads inputResponses, but it
 * takes a connection without initialize for a 2025-era one and turns input_required into
 * server-to-client requests (its legacy shim); marking it modern needs SDK-internal API
 * (docs/dual-era.md, "Hosting SDK v2 servers").
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer as V2McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { type CreateServer, type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { modernBody, modernOpen, modernSend } from '../helpers/modern.js';

function buildV2(): V2McpServer {
  const m = new V2McpServer(
    { name: 'v2-hosted', version: '2.4.0' },
    { capabilities: { tools: { listChanged: true } } },
  );
  m.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return m;
}

describe('hosting an SDK v2 server on both eras', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      createServer: (() => buildV2()) as unknown as CreateServer,
      port: 0,
      host: '127.0.0.1',
    });
  });
  after(async () => {
    await s.close();
  });

  test('modern: tools/call is stamped; server/discover and listen work', async () => {
    const r = await modernSend(
      s.url,
      modernBody('tools/call', { name: 'echo', arguments: { text: 'hi' } }, {}, 'e1'),
    );
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json().result.resultType, 'complete');
    assert.deepEqual(r.json().result._meta['io.modelcontextprotocol/serverInfo'], {
      name: 'v2-hosted',
      version: '2.4.0',
    });
    const d = await modernSend(s.url, modernBody('server/discover'));
    assert.deepEqual(d.json().result.capabilities.tools, { listChanged: true });
    const l = await modernOpen(
      s.url,
      modernBody('subscriptions/listen', { notifications: { toolsListChanged: true } }, {}, 'L'),
    );
    await l.waitFor((x) => x.messages().length >= 1, 3_000, 'ack');
    assert.equal(l.messages()[0].method, 'notifications/subscriptions/acknowledged');
    l.destroy();
  });

  test('legacy: an SDK 1.32 client gets a session and calls the v2 server', async () => {
    const c = new V1Client({ name: 'v1', version: '1.0.0' });
    const t = new V1Transport(new URL(s.url));
    await withDeadline(c.connect(t), 10_000, 'connect');
    try {
      assert.equal(typeof t.sessionId, 'string');
      const r = await withDeadline(
        c.callTool({ name: 'echo', arguments: { text: 'legacy' } }),
        5_000,
        'call',
      );
      assert.deepEqual(r.content, [{ type: 'text', text: 'legacy' }]);
    } finally {
      await c.close();
    }
  });

  test('the SDK v2 client in auto mode lands on the modern era against the v2-hosted server', async () => {
    const c = new V2Client({ name: 'v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await withDeadline(c.connect(new V2Transport(new URL(s.url))), 10_000, 'connect');
    try {
      assert.equal(c.getProtocolEra(), 'modern');
      const r = await withDeadline(c.callTool({ name: 'echo', arguments: { text: 'm' } }), 5_000, 'call');
      assert.deepEqual(r.content, [{ type: 'text', text: 'm' }]);
    } finally {
      await c.close();
    }
  });
});
