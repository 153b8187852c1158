/**
 * The quiet close (core/sdk/quiet-close.ts) over real sockets: a 2026-07-28 request's own server
 * is closed after its answer with the application's `onclose` still called, once per request,
 * with its stack traces; a session ended while its tool awaits a server-to-client request still
 * rejects that request with ConnectionClosed and a stack trace.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { RawSession, toolCall, until } from '../helpers/http.js';
import { modernBody, modernSend } from '../helpers/modern.js';

interface Closed {
  limit: number;
  frames: number;
}

const closed: Closed[] = [];
let asked: Promise<{ code?: unknown; stack?: string }> | undefined;
let s: Served;

const framesOf = (stack: string | undefined): number => (stack ?? '').split('\n    at ').length - 1;

function createServer(): McpServer {
  const server = new McpServer({ name: 'quiet', version: '1' }, { capabilities: { tools: {} } });
  server.registerTool('echo', {}, async () => ({ content: [{ type: 'text', text: 'hi' }] }));
  // Asks the client and keeps the outcome of the ask for the test (the tool itself never finishes).
  server.registerTool('ask', {}, (extra) => {
    asked = extra
      .sendRequest(
        {
          method: 'elicitation/create',
          params: { message: 'm', requestedSchema: { type: 'object', properties: {} } },
        },
        ElicitResultSchema,
      )
      .then(
        () => ({ code: 'resolved' }),
        (e: unknown) => e as { code?: unknown; stack?: string },
      );
    return new Promise(() => {});
  });
  server.server.onclose = () => {
    closed.push({ limit: Error.stackTraceLimit, frames: framesOf(new Error('probe').stack) });
  };
  return server;
}

before(async () => {
  s = await serve({ createServer, host: '127.0.0.1', port: 0, path: '/mcp' });
});
after(async () => {
  await s.close();
});

test('2026-07-28: every request’s server is closed and its onclose runs with stack traces', async () => {
  const limit = Error.stackTraceLimit;
  closed.length = 0;
  for (let i = 0; i < 3; i++) {
    const r = await modernSend(s.url, modernBody('tools/call', { name: 'echo', arguments: {} }));
    assert.equal(r.status, 200, r.text);
  }
  await until(() => closed.length === 3, 2_000, 'three onclose calls');
  for (const c of closed) {
    assert.equal(c.limit, limit);
    assert.ok(c.frames > 0);
  }
  assert.equal(Error.stackTraceLimit, limit);
});

test('a session ended while its tool awaits the client: the request rejects with ConnectionClosed and its stack', async () => {
  const session = new RawSession(s.url);
  await session.init(undefined, { elicitation: {} });
  const call = await session.postOpen(toolCall('ask', {}));
  assert.equal(call.status, 200);
  await until(() => asked !== undefined, 2_000, 'the tool asked');
  const d = await session.delete();
  assert.equal(d.status, 204, d.text);
  const e = await withDeadline(
    asked as Promise<{ code?: unknown; stack?: string }>,
    2_000,
    'the ask settles',
  );
  assert.equal(e.code, -32000, 'ConnectionClosed');
  assert.ok(framesOf(e.stack) > 0, 'with its stack trace');
  call.destroy();
});
