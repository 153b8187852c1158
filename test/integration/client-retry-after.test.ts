// The client re-sends a POST once when it is answered 503 + Retry-After (refused before dispatch, so
// the re-send is safe), waiting as asked when that is within maxRetryAfterMs; never twice, never
// without Retry-After, never beyond the cap.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { type Running, startServer } from '../helpers/test-server.js';

interface Front {
  url: string;
  /** POST bodies seen, in order. */
  posts: string[];
  /** Decides whether a POST is refused with 503 (and which Retry-After, if any). */
  refuse: (body: string, nth: number) => { retryAfter: string | undefined } | undefined;
  close(): Promise<void>;
}

/** A reverse proxy in front of Sluice that can refuse chosen POSTs with 503. */
async function front(target: Running): Promise<Front> {
  const f: Front = {
    url: '',
    posts: [],
    refuse: () => undefined,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.method === 'POST') {
        f.posts.push(body);
        const r = f.refuse(body, f.posts.length);
        if (r !== undefined) {
          const h: Record<string, string> = { 'content-type': 'application/json' };
          if (r.retryAfter !== undefined) h['retry-after'] = r.retryAfter;
          res.writeHead(503, h);
          res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"busy"}}');
          return;
        }
      }
      const up = request(
        { host: '127.0.0.1', port: target.port, path: req.url, method: req.method, headers: req.headers },
        (ures) => {
          res.writeHead(ures.statusCode ?? 502, ures.headers);
          ures.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      up.end(body.length > 0 ? body : undefined);
    });
  });
  server.keepAliveTimeout = 500;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  f.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
  return f;
}

async function connected(url: string, maxRetryAfterMs?: number): Promise<Client> {
  const client = new Client({ name: 'retry-after-test', version: '1' });
  await client.connect(
    new StreamableHttpClientTransport(new URL(url), {
      openStandaloneStream: false,
      ...(maxRetryAfterMs === undefined ? {} : { maxRetryAfterMs }),
    }),
  );
  return client;
}

describe('POST retry on 503 + Retry-After', () => {
  test('initialize refused once with Retry-After: 1 is sent again and the session opens', async () => {
    const srv = await startServer();
    after(() => srv.close());
    const f = await front(srv);
    after(() => f.close());
    f.refuse = (body, nth) => (nth === 1 && body.includes('"initialize"') ? { retryAfter: '1' } : undefined);
    const client = await withDeadline(connected(f.url), 8_000, 'connect');
    after(() => client.close().catch(() => undefined));
    assert.equal(f.posts.filter((b) => b.includes('"initialize"')).length, 2);
    assert.equal(srv.stats().sessions.active, 1);
  });

  test('a tools/call refused with Retry-After: 0 runs once; refused twice it fails with HttpStatusError 503', async () => {
    const srv = await startServer();
    after(() => srv.close());
    const f = await front(srv);
    after(() => f.close());
    const client = await connected(f.url);
    after(() => client.close().catch(() => undefined));
    let refusals = 1;
    f.refuse = (body) => {
      if (!body.includes('"tools/call"') || refusals === 0) return undefined;
      refusals--;
      return { retryAfter: '0' };
    };
    const r = await withDeadline(
      client.callTool({ name: 'echo', arguments: { text: 'again' } }, CallToolResultSchema),
      5_000,
      'call',
    );
    assert.equal((r.content as { text: string }[])[0]?.text, 'again');
    assert.equal(srv.probe.started.get('echo'), 1);

    refusals = 2;
    const before = f.posts.length;
    const e = await withDeadline(
      client.callTool({ name: 'echo', arguments: { text: 'no' } }, CallToolResultSchema).then(
        () => undefined,
        (err: unknown) => err as { code?: string; status?: number },
      ),
      5_000,
      'refused call',
    );
    assert.equal(e?.code, 'SLUICE_CLIENT_HTTP_STATUS');
    assert.equal(e?.status, 503);
    assert.equal(f.posts.length - before, 2, 'sent twice: the first and one retry');
    assert.equal(srv.probe.started.get('echo'), 1);
  });

  test('no retry without Retry-After, or when it asks for more than maxRetryAfterMs', async () => {
    const srv = await startServer();
    after(() => srv.close());
    const f = await front(srv);
    after(() => f.close());
    const client = await connected(f.url, 2_000);
    after(() => client.close().catch(() => undefined));
    for (const retryAfter of [undefined, '3']) {
      f.refuse = (body) => (body.includes('"tools/call"') ? { retryAfter } : undefined);
      const before = f.posts.length;
      const e = await withDeadline(
        client.callTool({ name: 'echo', arguments: { text: 'x' } }, CallToolResultSchema).then(
          () => undefined,
          (err: unknown) => err as { status?: number },
        ),
        5_000,
        'refused call',
      );
      assert.equal(e?.status, 503);
      assert.equal(f.posts.length - before, 1, `Retry-After ${String(retryAfter)}: sent once`);
    }
  });
});
