/**
 * SDK v2's own server (`@modelcontextprotocol/server` 2.x `createMcpHandler`, both eras: 2026-07-28 requests
 * statelessly, 2025-era requests through its stateless legacy leg) on 127.0.0.1, mounted on `node:http` with a
 * small fetch bridge, for the client tests. Every request's headers are logged. A tool call whose `Mcp-Name`
 * is `drop` (or, in the legacy era, whose body calls `drop`) gets its response head and first chunk, then the
 * socket is destroyed: a stream broken mid-way, before any event id (this server stores no events).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

export interface V2Server {
  readonly url: string;
  /** Headers of every HTTP request, in arrival order (names lower-case). */
  readonly log: { method: string; headers: IncomingMessage['headers']; body: string }[];
  /** Tool calls whose handler saw its signal abort (the era's cancellation reached it). */
  readonly aborted: string[];
  close(): Promise<void>;
}

function buildServer(aborted: string[]): McpServer {
  const server = new McpServer({ name: 'sdk-v2-fixture', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Echoes its text; region travels as the Mcp-Param-Region header',
      inputSchema: z.object({
        text: z.string(),
        region: z.string().optional().meta({ 'x-mcp-header': 'Region' }),
      }),
    },
    async ({ text, region }) => ({
      content: [{ type: 'text', text: `${text}|${region ?? ''}` }],
    }),
  );
  const slow = async (
    { steps, delayMs }: { steps: number; delayMs: number },
    ctx: {
      mcpReq: {
        _meta?: { progressToken?: string | number };
        signal: AbortSignal;
        notify: (n: { method: string; params?: Record<string, unknown> }) => Promise<void>;
      };
    },
    name: string,
  ) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (ctx.mcpReq.signal.aborted) {
        aborted.push(name);
        throw new Error('aborted');
      }
      if (token !== undefined) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: steps },
        });
      }
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    if (ctx.mcpReq.signal.aborted) aborted.push(name);
    return { content: [{ type: 'text' as const, text: `done ${steps}` }] };
  };
  const slowSchema = z.object({
    steps: z.number().int().min(1).max(200),
    delayMs: z.number().int().min(0).max(1000),
  });
  server.registerTool('slow', { description: 'Reports progress', inputSchema: slowSchema }, (args, ctx) =>
    slow(args, ctx as never, 'slow'),
  );
  server.registerTool(
    'drop',
    { description: 'Its stream is cut by the fixture', inputSchema: slowSchema },
    (args, ctx) => slow(args, ctx as never, 'drop'),
  );
  return server;
}

/** The headers a browser page on `origin` needs to call this server (CORS): preflight and exposure. */
function cors(origin: string): Record<string, string> {
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': 'GET, POST, DELETE',
    'access-control-allow-headers':
      'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name, mcp-param-region',
    'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version',
    vary: 'Origin',
  };
}

/** `allowOrigin`: answer CORS for a browser page on that origin. */
export async function startV2Server(allowOrigin?: string): Promise<V2Server> {
  const aborted: string[] = [];
  const log: V2Server['log'] = [];
  const handler = createMcpHandler(() => buildServer(aborted), { responseMode: 'sse' } as never);
  const http: Server = createServer((req, res) => {
    if (allowOrigin !== undefined) {
      for (const [k, v] of Object.entries(cors(allowOrigin))) res.setHeader(k, v);
      if (req.method === 'OPTIONS') {
        res.writeHead(204);
        res.end();
        return;
      }
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      log.push({ method: req.method ?? '', headers: req.headers, body });
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string') headers.set(k, v);
        else if (Array.isArray(v)) headers.set(k, v.join(', '));
      }
      const init: RequestInit = { method: req.method ?? 'GET', headers, signal: abort.signal };
      if (req.method === 'POST') init.body = body;
      const cut = req.headers['mcp-name'] === 'drop' || callsDrop(body);
      void (async () => {
        const response = await handler.fetch(new Request(`http://127.0.0.1${req.url ?? '/'}`, init));
        res.writeHead(response.status, Object.fromEntries(response.headers));
        if (response.body === null) {
          res.end();
          return;
        }
        const reader = response.body.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          res.write(value);
          if (cut) {
            // Give the chunk time to leave, then break the connection mid-stream.
            setTimeout(() => res.socket?.destroy(), 20);
            await reader.cancel().catch(() => undefined);
            return;
          }
        }
        res.end();
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log,
    aborted,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

function callsDrop(body: string): boolean {
  try {
    const message = JSON.parse(body) as { method?: unknown; params?: { name?: unknown } };
    return message.method === 'tools/call' && message.params?.name === 'drop';
  } catch {
    return false;
  }
}
