// The official SDK's Streamable HTTP server transport, set up as its examples do: plain
// node:http, the body parsed with JSON.parse and passed as `parsedBody`, one McpServer plus one
// StreamableHTTPServerTransport per session (`sessionIdGenerator: randomUUID`), no event store.
// `--mode json` turns on `enableJsonResponse`.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { failJsonRpc as fail, listenHandling, readBody, runChild, type WireMode } from './child.js';
import { createBenchServer } from './tools.js';

const PATH = '/mcp';

function isInitialize(body: unknown): boolean {
  // A property check, not the SDK's zod guard: the harness should not add cost of its own.
  return typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize';
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  mode: WireMode,
  transports: Map<string, StreamableHTTPServerTransport>,
): Promise<void> {
  let parsedBody: unknown;
  if (req.method === 'POST') {
    try {
      parsedBody = JSON.parse(await readBody(req));
    } catch {
      fail(res, 400, 'Parse error'); // Reported to the client; nothing is lost.
      return;
    }
  }
  const sid = req.headers['mcp-session-id'];
  let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
  if (transport === undefined) {
    if (typeof sid === 'string') {
      fail(res, 404, 'Session not found');
      return;
    }
    if (req.method !== 'POST' || !isInitialize(parsedBody)) {
      fail(res, 400, 'Bad Request: no valid session id');
      return;
    }
    const created = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      enableJsonResponse: mode === 'json',
      onsessioninitialized: (id) => {
        transports.set(id, created);
      },
    });
    created.onclose = () => {
      if (created.sessionId !== undefined) transports.delete(created.sessionId);
    };
    await createBenchServer().connect(created);
    transport = created;
  }
  await transport.handleRequest(req, res, parsedBody);
}

runChild(({ mode }) => {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  return listenHandling('sdk server', PATH, (req, res) => handle(req, res, mode, transports));
});
