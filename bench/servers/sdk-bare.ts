// The official SDK's `McpServer` on a bare transport: the same bench tools (tools.ts) served through
// the least a Streamable HTTP transport can do and still let the SDK answer. Plain node:http, the
// body read and `JSON.parse`d, one McpServer per session connected through the SDK's own `connect`
// to a `BareTransport` (bare-transport.ts), each answer written with `JSON.stringify` and one
// `res.end`. No Origin, Host, Accept, Content-Type or protocol-version checks, no session expiry, no
// event ids, no backpressure, no metrics, no keepalive: what this child costs over raw.ts is what
// hosting the SDK through its `Transport` interface costs a transport that adds nothing.
// docs/benchmarks.md, "The SDK on a bare transport", reads it beside raw, Sluice and the SDK's own.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { BareTransport, type WriteAnswer } from './bare-transport.js';
import { failJsonRpc as fail, listenHandling, readBody, runChild, type WireMode } from './child.js';
import { createBenchServer } from './tools.js';

const PATH = '/mcp';

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
  return listenHandling('sdk-bare server', PATH, (req, res) => handle(req, res, mode, sessions));
});
