/**
 * Sluice's client and Sluice's server agree on `x-mcp-header` (MCP 2026-07-28 basic/transports/streamable-http
 * §"Custom Headers from Tool Parameters"): both take the declaration rules and the value encoding from
 * http/param-headers.ts. A tool whose declaration is invalid (a `number` property, excluded by the spec) has no
 * header sent and none required — it was 400 / -32020 "Mcp-Param-Amount header is required" — and values that
 * need the Base64 sentinel (empty, a tab, non-ASCII) are sent that way and accepted. Real sockets on 127.0.0.1:0.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { createMcpHandler } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';

const MODERN = '2026-07-28';
const DEADLINE_MS = 15_000;
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'param-headers', version: '0' },
};
const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

function createMcp(): McpServer {
  const server = new McpServer({ name: 'param-headers', version: '1.0.0' });
  server.registerTool(
    'pay',
    { inputSchema: { amount: z.number().meta({ 'x-mcp-header': 'Amount' }), memo: z.string() } },
    async ({ amount, memo }) => text(`${memo}:${amount}`),
  );
  server.registerTool(
    'tag',
    {
      inputSchema: {
        label: z.string().meta({ 'x-mcp-header': 'Label' }),
        n: z.number().int().optional().meta({ 'x-mcp-header': 'N' }),
      },
    },
    async ({ label, n }) => text(`${JSON.stringify(label)}|${String(n)}`),
  );
  return server;
}

describe('x-mcp-header: Sluice client ↔ Sluice server', () => {
  const seen: IncomingHttpHeaders[] = [];
  let url = '';
  let close: () => Promise<void> = async () => {};
  let transport: StreamableHttpClientTransport;
  const answers = new Map<unknown, { result?: unknown; error?: { code: number; message: string } }>();
  let nextId = 1;

  async function request(method: string, params: Record<string, unknown>) {
    const id = nextId++;
    await transport.send({
      jsonrpc: '2.0',
      id,
      method,
      params: { ...params, _meta: envelope },
    } as JSONRPCMessage);
    const until = Date.now() + DEADLINE_MS;
    while (!answers.has(id) && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    const answer = answers.get(id);
    assert.ok(answer !== undefined, `${method} ${id} unanswered`);
    return answer;
  }
  const textOf = (r: { result?: unknown; error?: unknown }) => {
    assert.equal(r.error, undefined, `error: ${JSON.stringify(r.error)}`);
    return (r.result as { content: { text: string }[] }).content[0]?.text;
  };

  before(async () => {
    const handler = createMcpHandler({ createServer: createMcp });
    const http = createServer((req, res) => {
      seen.push(req.headers);
      handler(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    close = async () => {
      http.closeAllConnections();
      await Promise.all([handler.close(), new Promise<void>((resolve) => http.close(() => resolve()))]);
    };
    transport = new StreamableHttpClientTransport(new URL(url));
    transport.onmessage = (m) => {
      if ('id' in m) answers.set(m.id, m as never);
    };
    await transport.start();
    const list = await withDeadline(request('tools/list', {}), DEADLINE_MS, 'tools/list');
    assert.ok(list.result, 'tools/list answered');
  });
  after(async () => {
    await transport?.close();
    await close();
  });

  test('a number property is no valid declaration: no header is sent, none is required', async () => {
    const r = await withDeadline(
      request('tools/call', { name: 'pay', arguments: { amount: 12.5, memo: 'rent' } }),
      DEADLINE_MS,
      'tools/call pay',
    );
    assert.equal(textOf(r), 'rent:12.5');
    assert.equal(seen.at(-1)?.['mcp-param-amount'], undefined);
  });

  test('values that need the sentinel are sent as the sentinel and accepted', async () => {
    for (const label of ['', 'a\tb', 'Zürich', ' padded ', 'plain-value', '=?base64?literal?=']) {
      const r = await withDeadline(
        request('tools/call', { name: 'tag', arguments: { label, n: -7 } }),
        DEADLINE_MS,
        `tools/call tag ${JSON.stringify(label)}`,
      );
      assert.equal(textOf(r), `${JSON.stringify(label)}|-7`);
      const sent = seen.at(-1);
      assert.equal(sent?.['mcp-param-n'], '-7');
      const header = sent?.['mcp-param-label'];
      if (label === 'plain-value') assert.equal(header, label);
      else assert.equal(header, `=?base64?${Buffer.from(label).toString('base64')}?=`);
    }
  });

  test('a header that disagrees with the body is still refused (400 / -32020)', async () => {
    const r = await withDeadline(
      request('tools/call', { name: 'tag', arguments: { label: 'x', n: 1 } }),
      DEADLINE_MS,
      'baseline',
    );
    assert.equal(textOf(r), '"x"|1');
    // A raw request whose header names another value than its body.
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'tag',
        'mcp-param-label': 'y',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 99,
        method: 'tools/call',
        params: { name: 'tag', arguments: { label: 'x' }, _meta: envelope },
      }),
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32020);
  });
});
