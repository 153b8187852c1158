// The official SDK's `McpServer` on a bare transport: the same bench tools (tools.ts) served
// through the least a Streamable HTTP transport can do and still let the SDK answer — plain node:http, the body read and `JSON.parse`d, one McpServer per session connected to
// a bare `Transport` whose `send` writes the answer with `JSON.stringify` and one `res.end`, keyed by
// request id. No Origin, Host, Accept, Content-Type or protocol-version checks, no session expiry, no
// event ids, no backpressure, no metrics, no keepalive: everything a real transport must add is left
// out, so what this child costs over raw.ts is what hosting the SDK costs a transport that adds
// nothing. docs/benchmarks.md,
// "Section (a), where a session echo's CPU goes", reads the three side by side.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { BareTransport, type WriteAnswer } from './bare-transport.js';
import { listenLocal, readBody, runChild, type WireMode } from './child.js';
import { createBenchServer } from './tools.js';

const PATH = '/mcp';

function fail(res: ServerResponse, status: number, message: string): void {
  const body = `{"jsonrpc":"2.0","error":{"code":-32000,"message":${JSON.stringify(message)}},"id":null}`;
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

/** Writes an answer as `mode` asks: one JSON body, or one SSE frame, with a content-length. */
function answerWriter(mode: WireMode, sessionId: string): WriteAnswer {
  return (res, message) => {
    const json = JSON.stringify(message);
    const body = mode === 'json' ? json : `event: message\ndata: ${json}\n\n`;
    res.writeHead(200, {
      'content-type': mode === 'json' ? 'application/json' : 'text/event-stream',
      'content-length': Buffer.byteLength(body),
      'mcp-session-id': sessionId,
    });
    res.end(body);
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  mode: WireMode,
  sessions: Map<string, BareTransport>,
): Promise<void> {
  const sid = req.headers['mcp-session-id'];
  if (req.method === 'DELETE' && typeof sid === 'string') {
    await sessions.get(sid)?.close();
    sessions.delete(sid);
    res.writeHead(200).end();
    return;
  }
  if (req.method !== 'POST') {
    fail(res, 405, 'Method not allowed');
    return;
  }
  let message: JSONRPCMessage;
  try {
    message = JSON.parse(await readBody(req)) as JSONRPCMessage;
  } catch {
    fail(res, 400, 'Parse error'); // Reported to the client; nothing is lost.
    return;
  }
  let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
  if (transport === undefined) {
    if (typeof sid === 'string' || !('method' in message) || message.method !== 'initialize') {
      fail(res, typeof sid === 'string' ? 404 : 400, 'No session');
      return;
    }
    const id = randomUUID();
    transport = new BareTransport(answerWriter(mode, id));
    sessions.set(id, transport);
    await createBenchServer().connect(transport);
  }
  transport.receive(message, res);
}

runChild(({ mode }) => {
  const sessions = new Map<string, BareTransport>();
  const server = createServer((req, res) => {
    if (req.url !== PATH) {
      fail(res, 404, 'Not found');
      return;
    }
    handle(req, res, mode, sessions).catch((err: unknown) => {
      process.stderr.write(`sdk-bare server: ${String(err)}\n`);
      if (!res.headersSent) fail(res, 500, 'Internal error');
    });
  });
  return listenLocal(server, PATH);
});
