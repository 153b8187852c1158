// createMcpHandler mounted in the frameworks people use, each with its JSON body parsing on: Express 5
// (express.json() before the handler), Fastify 5 (its built-in JSON parser) and Hono on @hono/node-server
// (c.req.json()). Each must initialize and stream a tool's progress incrementally: the tool waits for the
// test to receive one progress event before it sends the next, so a buffered or stalled stream cannot pass.
// Also: a body stream consumed without the parsed body handed over fails loudly (500 + a stderr line).
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { type HttpBindings, serve as honoServe } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { z } from 'zod';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { createMcpHandler, type McpHandler } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { ACCEPT_BOTH, initializeBody, LATEST } from '../helpers/http.js';

/** One step at a time: the tool awaits `next()`, the test calls `release()` when it saw the last event. */
class Gate {
  #waiting: (() => void) | undefined;
  #released = 0;
  next(): Promise<void> {
    if (this.#released > 0) {
      this.#released--;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }
  release(): void {
    const w = this.#waiting;
    this.#waiting = undefined;
    if (w !== undefined) w();
    else this.#released++;
  }
}

const STEPS = 4;

function stepServer(gate: Gate, log: string[]): McpServer {
  const server = new McpServer({ name: 'frameworks', version: '1.0.0' });
  server.registerTool('steps', { inputSchema: { n: z.number() } }, async ({ n }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= n; i++) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: n },
        });
      }
      log.push(`sent ${i}`);
      await gate.next();
    }
    log.push('returning');
    return { content: [{ type: 'text', text: `did ${n}` }] };
  });
  return server;
}

interface Mounted {
  url: string;
  close(): Promise<void>;
}

type Mount = (handler: McpHandler) => Promise<Mounted>;

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

const frameworks: Record<string, Mount> = {
  'Express 5 with express.json() before the handler': async (handler) => {
    const app = express();
    app.use(express.json());
    // Mounted as-is: the handler takes req.body when a parser has consumed the stream.
    app.all('/mcp', handler);
    const server = app.listen(0, '127.0.0.1');
    await withDeadline(new Promise((r) => server.once('listening', r)), 5_000, 'express listen');
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
      close: () => closeServer(server),
    };
  },
  'Fastify 5 with its JSON parser': async (handler) => {
    const app = Fastify();
    app.all('/mcp', (request, reply) => {
      reply.hijack();
      handler(request.raw, reply.raw, request.body);
    });
    await withDeadline(app.listen({ host: '127.0.0.1', port: 0 }), 5_000, 'fastify listen');
    return {
      url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`,
      close: async () => {
        app.server.closeAllConnections();
        await app.close();
      },
    };
  },
  'Hono on @hono/node-server with c.req.json()': async (handler) => {
    const app = new Hono<{ Bindings: HttpBindings }>();
    app.all('/mcp', async (c) => {
      const body: unknown = c.req.method === 'POST' ? await c.req.json() : undefined;
      handler(c.env.incoming, c.env.outgoing, body);
      return RESPONSE_ALREADY_SENT;
    });
    let port = 0;
    const server = honoServe({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
      port = info.port;
    }) as Server;
    await withDeadline(
      new Promise<void>((r) => (server.listening ? r() : server.once('listening', () => r()))),
      5_000,
      'hono listen',
    );
    port ||= (server.address() as AddressInfo).port;
    return { url: `http://127.0.0.1:${port}/mcp`, close: () => closeServer(server) };
  },
};

for (const [name, mount] of Object.entries(frameworks)) {
  describe(name, () => {
    const gate = new Gate();
    const log: string[] = [];
    const handler = createMcpHandler({ createServer: () => stepServer(gate, log) });
    let mounted: Mounted | undefined;
    after(async () => {
      await handler.close({ graceMs: 100 });
      await mounted?.close();
    });

    test('initialize, then a tools/call whose progress arrives while the tool runs', async () => {
      mounted = await mount(handler);
      const client = new Client({ name: 'frameworks-test', version: '1.0.0' });
      const transport = new StreamableHttpClientTransport(new URL(mounted.url));
      await withDeadline(client.connect(transport), 5_000, 'initialize');
      assert.equal(client.getServerVersion()?.name, 'frameworks');
      const seen: number[] = [];
      const call = client.callTool({ name: 'steps', arguments: { n: STEPS } }, undefined, {
        onprogress: (p) => {
          seen.push(p.progress);
          // The tool is parked right after sending this event: it is still running, so this event
          // travelled through the framework on its own, not in a buffer flushed at the end.
          assert.equal(log.at(-1), `sent ${p.progress}`);
          assert.ok(!log.includes('returning'));
          gate.release();
        },
      });
      const result = await withDeadline(call, 10_000, `${name}: the streaming call`);
      assert.deepEqual(seen, [1, 2, 3, 4]);
      assert.deepEqual(result.content, [{ type: 'text', text: `did ${STEPS}` }]);
      assert.equal(log.at(-1), 'returning');
      await withDeadline(client.close(), 5_000, 'client close');
    });
  });
}

describe('a body stream consumed by a parser that hands nothing over', () => {
  let server: Server | undefined;
  after(async () => {
    if (server !== undefined) await closeServer(server);
  });

  test('fails loudly: 500 naming SLUICE_BODY_CONSUMED, a log line with the fix, no hang', async () => {
    const logged: { msg: string; fields: unknown }[] = [];
    const handler = createMcpHandler({
      createServer: () => new McpServer({ name: 'x', version: '1' }),
      logger: { info: () => {}, warn: () => {}, error: (msg, fields) => logged.push({ msg, fields }) },
    });
    // A home-made parser: reads the body, keeps it to itself.
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.once('end', () => handler(req, res));
    });
    server.listen(0, '127.0.0.1');
    await withDeadline(new Promise((r) => server?.once('listening', r)), 5_000, 'listen');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const res = await withDeadline(
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
        body: JSON.stringify(initializeBody(LATEST, {}, 1)),
      }),
      5_000,
      'POST to a handler whose body was consumed',
    );
    assert.equal(res.status, 500);
    const body = (await res.json()) as { error: { code: number; message: string; data: { reason: string } } };
    assert.equal(body.error.code, -32603);
    assert.match(body.error.message, /SLUICE_BODY_CONSUMED/);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]?.msg, 'request.failed');
    const fields = logged[0]?.fields as { code: string; error: string };
    assert.equal(fields.code, 'SLUICE_BODY_CONSUMED');
    assert.match(fields.error, /handler\(req, res, req\.body\)/);
    await handler.close();
  });

  test('without a logger: one stderr line naming the code and the fix, however many requests fail', async () => {
    const handler = createMcpHandler({ createServer: () => new McpServer({ name: 'x', version: '1' }) });
    const quiet = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.once('end', () => handler(req, res));
    });
    quiet.listen(0, '127.0.0.1');
    await withDeadline(new Promise((r) => quiet.once('listening', r)), 5_000, 'listen');
    const url = `http://127.0.0.1:${(quiet.address() as AddressInfo).port}/mcp`;
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      if (String(chunk).startsWith('sluice: ')) lines.push(String(chunk));
      return write(chunk, ...rest);
    }) as typeof process.stderr.write;
    try {
      for (let i = 0; i < 3; i++) {
        const res = await withDeadline(
          fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
          }),
          5_000,
          'POST',
        );
        assert.equal(res.status, 500);
        await res.text();
      }
    } finally {
      process.stderr.write = write;
      await handler.close();
      await closeServer(quiet);
    }
    assert.equal(lines.length, 1, lines.join(''));
    assert.match(lines[0] ?? '', /^sluice: SLUICE_BODY_CONSUMED: .*handler\(req, res, req\.body\)/);
  });
});
