// Sluice against every SDK version it supports (the peer range's floor, installed as `sdk-floor`, and the
// version in devDependencies), with the user's McpServer coming from that copy while Sluice itself imports
// the other: the fast dispatch (private Protocol members `_onrequest`, `_onnotification`, `_onresponse`)
// must be found on each, a server without them must fall back to `onmessage` and still work, and
// createServer returning something that is not an SDK server must fail with UnsupportedServerError.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer as McpServerCurrent } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client as ClientFloor } from 'sdk-floor/client/index.js';
import { McpServer as McpServerFloor } from 'sdk-floor/server/mcp.js';
import { z } from 'zod';
import { detectFastDispatch } from '../../src/client/dispatch.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { BridgeTransport } from '../../src/core/sdk/bridge-transport.js';
import { createDispatcher } from '../../src/core/sdk/dispatcher.js';
import { canCloseQuietly } from '../../src/core/sdk/quiet-close.js';
import { type Served, serve, UnsupportedServerError } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { ACCEPT_BOTH, initializeBody, LATEST } from '../helpers/http.js';

type AnyMcpServer = McpServerCurrent | McpServerFloor;

const SDKS: Record<
  string,
  {
    McpServer: new (info: { name: string; version: string }) => AnyMcpServer;
    Client: new (info: { name: string; version: string }) => object;
  }
> = {
  'SDK 1.32.0 (peer floor)': { McpServer: McpServerFloor, Client: ClientFloor },
  'SDK in devDependencies (latest tested)': { McpServer: McpServerCurrent, Client },
};

interface Counts {
  onmessage: number;
}

/** An McpServer whose transport's onmessage is counted: the fast path never calls it for inbound traffic. */
function countedServer(
  Ctor: new (info: { name: string; version: string }) => AnyMcpServer,
  counts: Counts,
  strip: boolean,
): AnyMcpServer {
  const server = new Ctor({ name: 'compat', version: '1.0.0' });
  (server as McpServerCurrent).registerTool(
    'count',
    { inputSchema: { n: z.number() } },
    async ({ n }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= n; i++) {
        if (token !== undefined)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i },
          });
      }
      return { content: [{ type: 'text', text: `counted ${n}` }] };
    },
  );
  if (strip) {
    // As if a future SDK had renamed one of the private handlers: the dispatcher must not take the fast path.
    Object.defineProperty(server.server, '_onresponse', { value: undefined, configurable: true });
  }
  const connect = server.connect.bind(server);
  (server as { connect: (t: BridgeTransport) => Promise<void> }).connect = async (t: BridgeTransport) => {
    await connect(t as never);
    const inner = t.onmessage;
    t.onmessage = (m, extra) => {
      counts.onmessage++;
      inner?.(m, extra);
    };
  };
  return server;
}

for (const [name, sdk] of Object.entries(SDKS)) {
  describe(name, () => {
    test('the private Protocol handlers the fast dispatch calls exist (server and client)', () => {
      const server = new sdk.McpServer({ name: 'x', version: '1' });
      const transport = () => new BridgeTransport({ route: () => undefined, closedBySdk() {} }, undefined);
      assert.equal(createDispatcher(server, transport(), true).fast, true);
      assert.equal(createDispatcher(server.server, transport(), true).fast, true);
      assert.equal(createDispatcher(server, transport(), false).fast, false);
      // And those its close reads to skip the stack trace of an error nobody sees (quiet-close.ts).
      assert.equal(canCloseQuietly(server.server), true);
      const client = new sdk.Client({ name: 'c', version: '1' });
      assert.notEqual(detectFastDispatch(client), undefined);
    });

    for (const variant of ['fast', 'fastDispatch: false', 'internals missing'] as const) {
      describe(variant, () => {
        const counts: Counts = { onmessage: 0 };
        let served: Served | undefined;
        after(async () => {
          await served?.close({ graceMs: 100 });
        });
        test('a streaming tools/call works, through the expected path', async () => {
          served = await serve({
            port: 0,
            fastDispatch: variant === 'fast' || variant === 'internals missing',
            // 1.32.0's Transport type differs only under exactOptionalPropertyTypes; at run time it is the same shape.
            createServer: () =>
              countedServer(sdk.McpServer, counts, variant === 'internals missing') as McpServerCurrent,
          });
          const client = new Client({ name: 'compat-test', version: '1.0.0' });
          await withDeadline(
            client.connect(new StreamableHttpClientTransport(new URL(served.url))),
            5_000,
            'connect',
          );
          const seen: number[] = [];
          const result = await withDeadline(
            client.callTool({ name: 'count', arguments: { n: 5 } }, undefined, {
              onprogress: (p) => seen.push(p.progress),
            }),
            5_000,
            'tools/call',
          );
          assert.deepEqual(result.content, [{ type: 'text', text: 'counted 5' }]);
          assert.deepEqual(seen, [1, 2, 3, 4, 5]);
          if (variant === 'fast') assert.equal(counts.onmessage, 0, 'the fast path bypasses onmessage');
          else assert.ok(counts.onmessage >= 3, `onmessage carried the traffic (${counts.onmessage})`);
          await withDeadline(client.close(), 5_000, 'close');
        });
      });
    }
  });
}

describe('createServer returning something Sluice cannot drive', () => {
  let served: Served | undefined;
  after(async () => {
    await served?.close({ graceMs: 100 });
  });
  for (const [label, make, expected] of [
    ['a plain object', () => ({ name: 'not a server' }), /without connect\(\) and close\(\)/],
    [
      'a Promise',
      async () => new McpServerCurrent({ name: 'x', version: '1' }),
      /a Promise \(createServer must be synchronous\)/,
    ],
  ] as const) {
    test(`${label}: 500 naming SLUICE_UNSUPPORTED_SERVER, the logged error says what was expected`, async () => {
      const logged: unknown[] = [];
      await served?.close({ graceMs: 0 });
      served = await serve({
        port: 0,
        createServer: make as never,
        logger: { info: () => {}, warn: () => {}, error: (_m, fields) => logged.push(fields) },
      });
      const res = await withDeadline(
        fetch(served.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
          body: JSON.stringify(initializeBody(LATEST, {}, 1)),
        }),
        5_000,
        'initialize',
      );
      assert.equal(res.status, 500);
      const body = (await res.json()) as { error: { message: string } };
      assert.match(body.error.message, /SLUICE_UNSUPPORTED_SERVER/);
      assert.equal(logged.length, 1);
      const fields = logged[0] as { code: string; error: string };
      assert.equal(fields.code, 'SLUICE_UNSUPPORTED_SERVER');
      assert.match(fields.error, /official SDK v1 McpServer or Server/);
      assert.match(fields.error, expected);
      assert.equal(served.handler.stats().sessions.active, 0, 'no session is left behind');
    });
  }

  test('UnsupportedServerError is a SluiceError with a stable code', () => {
    const e = new UnsupportedServerError('x');
    assert.equal(e.code, 'SLUICE_UNSUPPORTED_SERVER');
    assert.equal(e.name, 'UnsupportedServerError');
  });
});
