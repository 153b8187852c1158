/**
 * serve()'s idle keep-alive connections (keepAliveTimeoutMs, 65 s by default): kept longer than a
 * proxy's pool keeps them (nginx's upstream keepalive_timeout is 60 s), so the proxy closes an idle
 * connection first and never sends a POST on one the server is closing at that instant (nginx answers
 * such a POST 502: a tasks conformance run through nginx met it once with Node's 5 s default). Kept
 * past headersTimeoutMs too: that bounds a request's headers, not the wait for the next request.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { InvalidOptionError, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { sleep } from '../helpers/http.js';
import { createProbe, startServer, testServerFactory } from '../helpers/test-server.js';

const LIST =
  'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
  'MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: ';

/** A keep-alive connection that sends one request at a time and reads each answer's status line. */
class Conn {
  readonly #socket: Socket;
  #buffer = '';
  #closed = false;
  readonly closedAt: Promise<number>;
  constructor(port: number) {
    this.#socket = connect(port, '127.0.0.1');
    this.#socket.setEncoding('utf8');
    this.#socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
    });
    this.closedAt = new Promise((resolve) =>
      this.#socket.on('close', () => {
        this.#closed = true;
        resolve(Date.now());
      }),
    );
    this.#socket.on('error', () => undefined);
  }
  get closed(): boolean {
    return this.#closed;
  }
  /** Sends a 2026-07-28 tools/list and resolves with the answer's status code. */
  async list(id: number): Promise<number> {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    });
    this.#buffer = '';
    this.#socket.write(`${LIST}${Buffer.byteLength(body)}\r\n\r\n${body}`);
    return withDeadline(
      new Promise<number>((resolve) => {
        const look = (): void => {
          const m = /^HTTP\/1\.1 (\d{3})[\s\S]*?\r\n\r\n[\s\S]*"id":\s*(\d+)/.exec(this.#buffer);
          if (m !== null && Number(m[2]) === id) resolve(Number(m[1]));
          else setTimeout(look, 10);
        };
        look();
      }),
      5_000,
      `answer ${id}`,
    );
  }
  destroy(): void {
    this.#socket.destroy();
  }
}

describe('idle keep-alive connections (serve keepAliveTimeoutMs)', () => {
  test('65 s by default; an impossible value is refused', async () => {
    const served = await serve({ createServer: testServerFactory(createProbe()), port: 0 });
    after(() => served.close());
    assert.equal((served.server as { keepAliveTimeout?: number }).keepAliveTimeout, 65_000);
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      await assert.rejects(
        serve({ createServer: testServerFactory(createProbe()), port: 0, keepAliveTimeoutMs: bad }),
        (e: unknown) => e instanceof InvalidOptionError && /keepAliveTimeoutMs/.test(e.message),
      );
    }
  });

  test('an idle connection outlives headersTimeoutMs and serves the next request, then closes once idle that long', async () => {
    const srv = await startServer({
      headersTimeoutMs: 200,
      requestTimeoutMs: 400,
      keepAliveTimeoutMs: 1_500,
    });
    after(() => srv.close());
    const conn = new Conn(srv.port);
    try {
      assert.equal(await conn.list(1), 200);
      // Idle four times headersTimeoutMs (the server checks its connections every 100 ms here).
      await sleep(800);
      assert.equal(conn.closed, false, 'closed while idle for less than keepAliveTimeoutMs');
      assert.equal(await conn.list(2), 200, 'the same connection serves the next request');
      const idleFrom = Date.now();
      const closedAt = await withDeadline(conn.closedAt, 10_000, 'the idle connection closed by the server');
      assert.ok(closedAt - idleFrom >= 1_000, `closed after ${closedAt - idleFrom} ms idle`);
    } finally {
      conn.destroy();
    }
  });
});
