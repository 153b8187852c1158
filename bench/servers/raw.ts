// The floor: the same MCP wire as the other two servers on plain node:http, with responses
// spliced from precomputed strings and sent with one res.end and a content-length. It does what
// a transport must do and nothing more: session ids on initialize, session and Accept checks,
// 202 for notifications, tools/call echo/flood/sleep, the GET SSE stream and DELETE. flood
// writes pre-serialized frames coalesced into 64 KiB writes, honours 'drain' and stops when the
// client goes away.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal, readBody, runChild, type WireMode } from './child.js';

const PATH = '/mcp';
const SUPPORTED_VERSIONS = new Set(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
const LATEST_VERSION = '2025-11-25';
const COALESCE_BYTES = 64 * 1024;
const SERVER_INFO = '{"name":"raw-bench","version":"1.0.0"}';
const TOOLS_LIST =
  '{"tools":[' +
  '{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},' +
  '{"name":"flood","inputSchema":{"type":"object","properties":{"count":{"type":"integer"},"payloadBytes":{"type":"integer"},"yieldEvery":{"type":"integer"}},"required":["count"]}},' +
  '{"name":"sleep","inputSchema":{"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]}}]}';

type Id = string | number;

interface Session {
  stream: ServerResponse | undefined;
}

interface Rpc {
  id?: unknown;
  method?: unknown;
  params?: {
    protocolVersion?: unknown;
    name?: unknown;
    arguments?: { text?: unknown; count?: unknown; payloadBytes?: unknown; ms?: unknown };
    _meta?: { progressToken?: unknown };
  };
}

const sessions = new Map<string, Session>();

function textResult(text: string): string {
  return `{"content":[{"type":"text","text":${JSON.stringify(text)}}]}`;
}

function response(id: Id, result: string): string {
  return `{"result":${result},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}

function sseFrame(json: string): string {
  return `event: message\ndata: ${json}\n\n`;
}

function send(res: ServerResponse, mode: WireMode, json: string, sessionId?: string): void {
  const body = mode === 'json' ? json : sseFrame(json);
  const headers: Record<string, string | number> = {
    'content-type': mode === 'json' ? 'application/json' : 'text/event-stream',
    'content-length': Buffer.byteLength(body),
  };
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId;
  res.writeHead(200, headers);
  res.end(body);
}

function fail(res: ServerResponse, status: number, code: number, message: string): void {
  const body = `{"jsonrpc":"2.0","error":{"code":${code},"message":${JSON.stringify(message)}},"id":null}`;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function waitDrainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

async function flood(
  res: ServerResponse,
  id: Id,
  token: unknown,
  count: number,
  payloadBytes: number,
): Promise<void> {
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const head = `event: message\ndata: {"method":"notifications/progress","params":{"progressToken":${JSON.stringify(token)},"progress":`;
  const tail = `,"total":${count},"message":${JSON.stringify('x'.repeat(payloadBytes))}},"jsonrpc":"2.0"}\n\n`;
  let pending = '';
  if (token !== undefined) {
    for (let progress = 1; progress <= count && !closed; progress++) {
      pending += head + progress + tail;
      if (pending.length >= COALESCE_BYTES) {
        const ok = res.write(pending);
        pending = '';
        if (!ok) await waitDrainOrClose(res);
      }
    }
  }
  if (!closed) res.end(pending + sseFrame(response(id, textResult(`sent ${count}`))));
}

function sleepThen(res: ServerResponse, mode: WireMode, id: Id, ms: number): void {
  const timer = setTimeout(() => send(res, mode, response(id, textResult(`slept ${ms}`))), ms);
  res.on('close', () => clearTimeout(timer));
}

function callTool(res: ServerResponse, mode: WireMode, id: Id, params: Rpc['params']): void {
  const args = params?.arguments ?? {};
  switch (params?.name) {
    case 'echo':
      send(res, mode, response(id, textResult(String(args.text))));
      return;
    case 'flood':
      flood(res, id, params._meta?.progressToken, Number(args.count), Number(args.payloadBytes ?? 0)).catch(
        (err: unknown) => {
          process.stderr.write(`raw server: flood: ${String(err)}\n`);
          res.destroy();
        },
      );
      return;
    case 'sleep':
      sleepThen(res, mode, id, Number(args.ms));
      return;
    default:
      send(
        res,
        mode,
        `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32602,"message":"unknown tool"}}`,
      );
  }
}

function sessionOf(req: IncomingMessage, res: ServerResponse): Session | undefined {
  const id = req.headers['mcp-session-id'];
  if (typeof id !== 'string') {
    fail(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    return undefined;
  }
  const session = sessions.get(id);
  if (session === undefined) fail(res, 404, -32001, 'Session not found');
  return session;
}

async function post(req: IncomingMessage, res: ServerResponse, mode: WireMode): Promise<void> {
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    fail(res, 406, -32000, 'Not Acceptable: accept both application/json and text/event-stream');
    return;
  }
  let msg: Rpc;
  try {
    msg = JSON.parse(await readBody(req)) as Rpc;
  } catch {
    fail(res, 400, -32700, 'Parse error'); // The error goes to the client; nothing is lost.
    return;
  }
  if (msg.method === 'initialize') {
    const asked = msg.params?.protocolVersion;
    const version = typeof asked === 'string' && SUPPORTED_VERSIONS.has(asked) ? asked : LATEST_VERSION;
    const sessionId = randomUUID();
    sessions.set(sessionId, { stream: undefined });
    const result = `{"protocolVersion":"${version}","capabilities":{"tools":{"listChanged":true}},"serverInfo":${SERVER_INFO}}`;
    send(res, mode, response(msg.id as Id, result), sessionId);
    return;
  }
  if (sessionOf(req, res) === undefined) return;
  const id = msg.id;
  if (typeof id !== 'string' && typeof id !== 'number') {
    res.writeHead(202).end(); // A notification or a response from the client.
    return;
  }
  switch (msg.method) {
    case 'tools/call':
      callTool(res, mode, id, msg.params);
      return;
    case 'tools/list':
      send(res, mode, response(id, TOOLS_LIST));
      return;
    case 'ping':
      send(res, mode, response(id, '{}'));
      return;
    default:
      send(
        res,
        mode,
        `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32601,"message":"Method not found"}}`,
      );
  }
}

function get(req: IncomingMessage, res: ServerResponse): void {
  if (!(req.headers.accept ?? '').includes('text/event-stream')) {
    fail(res, 406, -32000, 'Not Acceptable: accept text/event-stream');
    return;
  }
  const session = sessionOf(req, res);
  if (session === undefined) return;
  if (session.stream !== undefined) {
    fail(res, 409, -32000, 'Conflict: a stream is already open for this session');
    return;
  }
  session.stream = res;
  res.on('close', () => {
    if (session.stream === res) session.stream = undefined;
  });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

function del(req: IncomingMessage, res: ServerResponse): void {
  const session = sessionOf(req, res);
  if (session === undefined) return;
  sessions.delete(String(req.headers['mcp-session-id']));
  session.stream?.end();
  res.writeHead(200).end();
}

runChild(({ mode }) => {
  const server = createServer((req, res) => {
    if (req.url !== PATH) {
      fail(res, 404, -32000, 'Not found');
      return;
    }
    switch (req.method) {
      case 'POST':
        post(req, res, mode).catch((err: unknown) => {
          process.stderr.write(`raw server: ${String(err)}\n`);
          if (!res.headersSent) fail(res, 500, -32603, 'Internal error');
        });
        return;
      case 'GET':
        get(req, res);
        return;
      case 'DELETE':
        del(req, res);
        return;
      default:
        fail(res, 405, -32000, 'Method not allowed');
    }
  });
  return listenLocal(server, PATH);
});
