/**
 * The quiet close of a served server (core/sdk/quiet-close.ts): with nothing pending, the SDK's
 * teardown runs without capturing stack traces up to the application's `onclose`, which still
 * fires, with the application's `Error.stackTraceLimit` and its own property back in place; with a
 * server-to-client request pending or a handler in flight, with a subclass overriding `_onclose`,
 * with `onclose` wrapped by someone else, or without the fast dispatch, it closes as before, and
 * the pending request rejects with ConnectionClosed and a stack trace. On every SDK the repo tests.
 *
 * What the teardown ran with is read where the Protocol's `_onclose` drops its transport, right
 * after it built its ConnectionClosed error (`this._transport = undefined`, SDK v1 and v2).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Server as V1Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpServer as V2McpServer } from '@modelcontextprotocol/server';
import { McpServer as FloorMcpServer } from 'sdk-floor/server/mcp.js';
import { BridgeTransport } from '../../src/core/sdk/bridge-transport.js';
import { createDispatcher } from '../../src/core/sdk/dispatcher.js';

interface Closable {
  connect(t: BridgeTransport): Promise<void>;
  close(): Promise<void>;
}

const SERVERS: Record<string, () => Closable> = {
  'SDK 1.32.0 (peer floor) McpServer': () =>
    new FloorMcpServer({ name: 't', version: '1' }) as unknown as Closable,
  'SDK v1 McpServer': () => new V1McpServer({ name: 't', version: '1' }),
  'SDK v1 Server': () => new V1Server({ name: 't', version: '1' }, { capabilities: {} }),
  'SDK v2 McpServer': () => new V2McpServer({ name: 't', version: '1' }) as unknown as Closable,
};

const protocolOf = (s: Closable): Record<string, unknown> =>
  ((s as { server?: unknown }).server ?? s) as Record<string, unknown>;

/** Records `Error.stackTraceLimit` each time the Protocol lets go of its transport. */
function watchTeardown(p: Record<string, unknown>): number[] {
  const seen: number[] = [];
  let value = p['_transport'];
  Object.defineProperty(p, '_transport', {
    configurable: true,
    get: () => value,
    set: (v: unknown) => {
      if (v === undefined) seen.push(Error.stackTraceLimit);
      value = v;
    },
  });
  return seen;
}

const target = { route: () => undefined, closedBySdk() {} };

async function connected(make: () => Closable, fast = true) {
  const server = make();
  const p = protocolOf(server);
  const teardown = watchTeardown(p);
  const transport = new BridgeTransport(target, undefined);
  await server.connect(transport);
  const dispatch = createDispatcher(server, transport, fast);
  return { server, p, teardown, transport, dispatch };
}

const framesOf = (stack: string | undefined): number => (stack ?? '').split('\n    at ').length - 1;

for (const [sdk, make] of Object.entries(SERVERS)) {
  test(`${sdk}: nothing pending, the teardown skips stack traces; the application's onclose fires as before`, async () => {
    const limit = Error.stackTraceLimit;
    const { server, p, teardown } = await connected(make);
    const seen: { limit: number; frames: number; self: unknown }[] = [];
    const onclose = function (this: unknown) {
      seen.push({ limit: Error.stackTraceLimit, frames: framesOf(new Error('probe').stack), self: this });
    };
    p['onclose'] = onclose;
    await server.close();
    assert.deepEqual(teardown, [0], 'the ConnectionClosed error was built without a stack trace');
    assert.equal(seen.length, 1, 'onclose fired once');
    assert.equal(seen[0]?.limit, limit, "onclose runs with the application's limit");
    assert.ok((seen[0]?.frames ?? 0) > 0, 'an error made in onclose has its frames');
    assert.equal(seen[0]?.self, p, 'onclose is called on the Protocol');
    assert.equal(Error.stackTraceLimit, limit, 'the limit is back');
    assert.equal(p['onclose'], onclose, "the application's onclose is back on the Protocol");
  });

  test(`${sdk}: without an onclose of the application's, nothing is left behind`, async () => {
    const limit = Error.stackTraceLimit;
    const { server, p, teardown } = await connected(make);
    const had = Object.hasOwn(p, 'onclose');
    await server.close();
    assert.deepEqual(teardown, [0]);
    assert.equal(Error.stackTraceLimit, limit);
    assert.equal(p['onclose'], undefined);
    assert.equal(Object.hasOwn(p, 'onclose'), had, 'the property is as it was');
  });

  test(`${sdk}: without the fast dispatch the close is the SDK's own`, async () => {
    const limit = Error.stackTraceLimit;
    const { server, teardown } = await connected(make, false);
    await server.close();
    assert.deepEqual(teardown, [limit]);
  });
}

for (const [sdk, make] of Object.entries(SERVERS)) {
  if (sdk.includes('v2')) continue; // SDK v2's outbound requests need a negotiated era; its teardown is the same code path
  test(`${sdk}: a pending server-to-client request still rejects with ConnectionClosed and its stack`, async () => {
    const limit = Error.stackTraceLimit;
    const { server, p, teardown } = await connected(make);
    const ping = (p as unknown as { ping(): Promise<unknown> }).ping();
    let fired = 0;
    p['onclose'] = () => {
      fired++;
    };
    await server.close();
    const error = await ping.then(
      () => assert.fail('the ping resolved'),
      (e: unknown) => e as { code?: unknown; stack?: string },
    );
    assert.equal(error.code, -32000, 'ConnectionClosed');
    assert.ok(framesOf(error.stack) > 0, 'the rejection has its stack trace');
    assert.deepEqual(teardown, [limit], 'a pending request: the close is the SDK’s own');
    assert.equal(fired, 1);
  });
}

test('a handler in flight: its abort listener runs with the application’s limit', async () => {
  const limit = Error.stackTraceLimit;
  const server = new V1McpServer({ name: 't', version: '1' });
  let abortedWith: number | undefined;
  let entered = false;
  server.registerTool('wait', {}, (extra) => {
    entered = true;
    return new Promise((resolve) => {
      extra.signal.addEventListener('abort', () => {
        abortedWith = Error.stackTraceLimit;
        resolve({ content: [] });
      });
    });
  });
  const p = protocolOf(server);
  const teardown = watchTeardown(p);
  const transport = new BridgeTransport(target, undefined);
  await server.connect(transport);
  const dispatch = createDispatcher(server, transport, true);
  dispatch.request(
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait', arguments: {} } },
    {},
  );
  // Until the SDK's handler chain reached the tool (a bounded number of turns).
  for (let i = 0; i < 50 && !entered; i++) await new Promise((r) => setImmediate(r));
  assert.ok(entered, 'the tool runs');
  await server.close();
  assert.equal(abortedWith, limit);
  assert.deepEqual(teardown, [limit]);
});

test('a Protocol subclass overriding _onclose, or an onclose someone else wrapped: the SDK’s own close', async () => {
  const limit = Error.stackTraceLimit;
  // `_onclose` is private in the SDK's types: the override is made the way plain JS would make it.
  class Custom extends V1Server {}
  const base = V1Server.prototype as unknown as { _onclose(this: unknown): void };
  Object.defineProperty(Custom.prototype, '_onclose', {
    configurable: true,
    writable: true,
    value(this: unknown) {
      base._onclose.call(this);
    },
  });
  const a = await connected(() => new Custom({ name: 't', version: '1' }, { capabilities: {} }));
  await a.server.close();
  assert.deepEqual(a.teardown, [limit]);

  const b = await connected(() => new V1McpServer({ name: 't', version: '1' }));
  const sdkOnclose = b.transport.onclose;
  let wrapped = 0;
  b.transport.onclose = () => {
    wrapped++;
    sdkOnclose?.();
  };
  await b.server.close();
  assert.equal(wrapped, 1);
  assert.deepEqual(b.teardown, [limit]);
  assert.equal(Error.stackTraceLimit, limit);
});

test('an onclose that throws still leaves the limit and the property restored', async () => {
  const limit = Error.stackTraceLimit;
  const { server, p, transport } = await connected(() => new V1McpServer({ name: 't', version: '1' }));
  const onclose = () => {
    throw new Error('boom');
  };
  p['onclose'] = onclose;
  await assert.rejects(() => server.close(), /boom/);
  assert.equal(Error.stackTraceLimit, limit);
  assert.equal(p['onclose'], onclose);
  assert.equal(transport.onclose !== undefined, true);
});
