// The standalone GET stream and the first request after initialize race. A server built on the SDK's own
// transport sends what is not tied to a request (`server.request()`, here an elicitation from inside a tool,
// as the conformance suite's SEP-1034 scenario does) on the GET stream, and drops it when that stream is not
// open yet. The client holds later messages until the GET has its answer (bounded by standaloneReadyWaitMs), so
// the request is never lost to a slow GET; and a GET that never answers delays them by the bound, not forever.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { withDeadline } from '../helpers/deadline.js';

interface SlowGetServer {
  readonly url: string;
  /** In order: `GET answered` when the GET's headers went out, `POST <method>` as each POST arrived. */
  readonly events: string[];
  close(): Promise<void>;
}

/** An SDK v1 server whose GET is handed to the SDK only after `getDelayMs`; `null` never answers it. */
async function startServer(getDelayMs: number | null): Promise<SlowGetServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const events: string[] = [];
  const held = new Set<ServerResponse>();
  const build = (): McpServer => {
    const mcp = new McpServer({ name: 'slow-get', version: '1.0.0' });
    mcp.registerTool('ask', {}, async () => {
      // Not related to the tools/call: the SDK routes it to the standalone GET stream.
      const answer = await mcp.server.elicitInput({
        message: 'name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
      });
      return { content: [{ type: 'text', text: JSON.stringify(answer.content ?? null) }] };
    });
    return mcp;
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const sid = req.headers['mcp-session-id'];
    const existing = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (req.method === 'GET') {
      if (existing === undefined) return void res.writeHead(400).end();
      if (getDelayMs === null) {
        held.add(res);
        return;
      }
      await new Promise((r) => setTimeout(r, getDelayMs));
      const writeHead = res.writeHead.bind(res);
      res.writeHead = ((...args: Parameters<typeof res.writeHead>) => {
        events.push('GET answered');
        return writeHead(...args);
      }) as typeof res.writeHead;
      await existing.handleRequest(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { method?: string };
    if (req.method === 'POST') events.push(`POST ${body.method ?? 'response'}`);
    if (existing !== undefined) return existing.handleRequest(req, res, body);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    await build().connect(transport);
    await transport.handleRequest(req, res, body);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    events,
    close: async () => {
      for (const res of held) res.destroy();
      for (const t of sessions.values()) await t.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function connect(url: string, waitMs?: number): Promise<Client> {
  const client = new Client(
    { name: 'standalone-ready', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: 'accept',
    content: { name: 'Ada' },
  }));
  const transport = new StreamableHttpClientTransport(new URL(url), {
    ...(waitMs !== undefined ? { standaloneReadyWaitMs: waitMs } : {}),
  });
  await withDeadline(client.connect(transport), 5_000, 'connect');
  return client;
}

describe('the standalone GET stream and the first request', () => {
  const servers: SlowGetServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  test('a server request sent on the GET stream while it opens slowly reaches the client', async () => {
    const server = await startServer(150);
    servers.push(server);
    const client = await connect(server.url);
    try {
      const result = await withDeadline(client.callTool({ name: 'ask', arguments: {} }), 8_000, 'ask');
      assert.deepEqual(result.content, [{ type: 'text', text: '{"name":"Ada"}' }]);
      // The tools/call left only once the GET stream existed on the server.
      const get = server.events.indexOf('GET answered');
      const call = server.events.indexOf('POST tools/call');
      assert.ok(get >= 0 && call > get, `order: ${server.events.join(', ')}`);
    } finally {
      await client.close();
    }
  });

  test('a GET that never answers holds the next request for standaloneReadyWaitMs, not forever', async () => {
    const server = await startServer(null);
    servers.push(server);
    const client = await connect(server.url, 100);
    try {
      // No tool needs the GET here: tools/list must be answered although the GET never is.
      const { tools } = await withDeadline(client.listTools(), 8_000, 'tools/list');
      assert.deepEqual(
        tools.map((t) => t.name),
        ['ask'],
      );
    } finally {
      await withDeadline(client.close(), 8_000, 'close');
    }
  });
});
