/**
 * A reference MCP server built on the official SDK's own `StreamableHTTPServerTransport`, on 127.0.0.1,
 * for the client tests. Sessions are routed the way the spec wants (unknown id → 404, missing id → 400),
 * and an in-memory event store (below) makes streams resumable.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  type EventStore,
  StreamableHTTPServerTransport,
} from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { generateDeltas } from '../../src/demo/generate.js';
import { PARTIAL_META_KEY } from '../../src/jsonrpc/partial.js';
import { partialResults } from '../../src/server/index.js';

/** Every event ever stored, per stream, in order; metadata is kept, never recovered by splitting ids. */
export class MemoryEventStore implements EventStore {
  private readonly byId = new Map<string, { streamId: string; seq: number }>();
  private readonly byStream = new Map<string, { id: string; message: JSONRPCMessage }[]>();
  private seq = 0;

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const seq = ++this.seq;
    const id = `ev-${seq}`;
    this.byId.set(id, { streamId, seq });
    let list = this.byStream.get(streamId);
    if (list === undefined) {
      list = [];
      this.byStream.set(streamId, list);
    }
    list.push({ id, message });
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.byId.get(eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const meta = this.byId.get(lastEventId);
    if (meta === undefined) throw new Error(`unknown event id ${lastEventId}`);
    for (const event of this.byStream.get(meta.streamId) ?? []) {
      const seq = this.byId.get(event.id)?.seq ?? 0;
      // The SDK stores a priming event as `{}`; it carries no message to replay.
      if (seq > meta.seq && Object.keys(event.message).length > 0) await send(event.id, event.message);
    }
    return meta.streamId;
  }
}

export interface SdkServerOptions {
  /** `enableJsonResponse`: answer requests with application/json instead of SSE. */
  readonly json?: boolean;
  /** Listen on this port (to restart a server on the port it had). */
  readonly port?: number;
  /** `retryInterval` sent in the priming event. */
  readonly retryInterval?: number;
}

export interface LoggedRequest {
  readonly method: string;
  readonly headers: IncomingMessage['headers'];
  readonly rpcMethod: string | undefined;
}

export interface SdkServer {
  readonly url: string;
  readonly port: number;
  readonly log: LoggedRequest[];
  readonly sessions: Map<string, StreamableHTTPServerTransport>;
  /** How many times each tool ran. */
  readonly calls: Map<string, number>;
  close(): Promise<void>;
}

function buildMcpServer(calls: Map<string, number>): McpServer {
  const server = new McpServer(
    { name: 'sdk-reference', version: '1.0.0' },
    { capabilities: { logging: {} } },
  );
  const count = (name: string): void => {
    calls.set(name, (calls.get(name) ?? 0) + 1);
  };
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => {
    count('echo');
    return { content: [{ type: 'text', text }] };
  });
  // Partial output on the SDK's own transport: partialResults() falls back to extra.sendNotification.
  server.registerTool(
    'generate',
    { inputSchema: { words: z.number().int(), seed: z.number().int() } },
    async ({ words, seed }, extra) => {
      count('generate');
      const out = partialResults(extra);
      let full = '';
      for (const d of generateDeltas(words, seed)) {
        full += d;
        await out.text(d);
      }
      return { content: [{ type: 'text', text: full }] };
    },
  );
  // Marked deltas 0, 1, then 3: delta 2 is missing (a server or proxy that lost text).
  server.registerTool('gappy', { inputSchema: {} }, async (_args, extra) => {
    const token = extra._meta?.progressToken;
    if (token === undefined) return { content: [{ type: 'text', text: 'no token' }] };
    for (const seq of [0, 1, 3]) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: seq + 1,
          message: `d${seq} `,
          _meta: { [PARTIAL_META_KEY]: { seq, n: 1 } },
        },
      });
    }
    return { content: [{ type: 'text', text: 'd0 d1 d2 d3 ' }] };
  });
  server.registerTool(
    'progress',
    { inputSchema: { steps: z.number(), delayMs: z.number() } },
    async ({ steps, delayMs }, extra) => {
      count('progress');
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        await new Promise((r) => setTimeout(r, delayMs));
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
          });
        }
      }
      return { content: [{ type: 'text', text: `done ${steps}` }] };
    },
  );
  server.registerTool('sleep', { inputSchema: { ms: z.number() } }, async ({ ms }) => {
    count('sleep');
    await new Promise((r) => setTimeout(r, ms));
    return { content: [{ type: 'text', text: `slept ${ms}` }] };
  });
  // Closes the request's SSE stream before answering (SEP-1699 polling); the client must resume.
  server.registerTool('test_reconnection', { inputSchema: {} }, async (_args, extra) => {
    count('test_reconnection');
    await extra.sendNotification({
      method: 'notifications/message',
      params: { level: 'info', data: 'before close' },
    });
    extra.closeSSEStream?.();
    await new Promise((r) => setTimeout(r, 100));
    return { content: [{ type: 'text', text: 'reconnected' }] };
  });
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text.length > 0 ? JSON.parse(text) : undefined;
}

export async function startSdkServer(options: SdkServerOptions = {}): Promise<SdkServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const log: LoggedRequest[] = [];
  const calls = new Map<string, number>();
  const eventStore = new MemoryEventStore();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const rpcMethod =
      body !== null && typeof body === 'object' && 'method' in body
        ? String((body as { method: unknown }).method)
        : undefined;
    log.push({ method: req.method ?? '', headers: req.headers, rpcMethod });
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const transport = sessions.get(sid);
      if (transport === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }),
        );
        return;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    if (req.method === 'POST' && rpcMethod === 'initialize') {
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: options.json === true,
        eventStore,
        ...(options.retryInterval !== undefined ? { retryInterval: options.retryInterval } : {}),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      await buildMcpServer(calls).connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Mcp-Session-Id required' },
      }),
    );
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    log,
    sessions,
    calls,
    async close() {
      for (const transport of sessions.values()) await transport.close().catch(() => {});
      sessions.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
