/**
 * The shape check of the direct `extra.sendNotification` (core/sdk/fast-notify.ts): installed on an
 * SDK v1 server connected to Sluice's transport, for handlers registered before and after; left
 * off for anything else (no internals, another transport, an SDK v2 server, a subclass or wrapper
 * of `notification`); a task's request, or a server no longer connected, keeps the SDK's function.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Server as V1Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpServer as V2McpServer } from '@modelcontextprotocol/server';
import { McpServer as FloorMcpServer } from 'sdk-floor/server/mcp.js';
import { BridgeTransport } from '../../src/core/sdk/bridge-transport.js';
import { fastNotifyOn } from '../../src/core/sdk/fast-notify.js';
import type { JsonRpcMessage, RequestId } from '../../src/jsonrpc/message.js';

/** A transport target that records what is routed. */
function recorder() {
  const routed: { message: JsonRpcMessage; related: RequestId | undefined }[] = [];
  const target = {
    route(message: JsonRpcMessage, related: RequestId | undefined) {
      routed.push({ message, related });
      return undefined;
    },
    closedBySdk() {},
  };
  return { routed, transport: new BridgeTransport(target, 's') };
}

type Handler = (request: unknown, extra: Record<string, unknown>) => unknown;
const handlersOf = (s: object): Map<string, Handler> =>
  (s as { _requestHandlers: Map<string, Handler> })._requestHandlers;

/** An `extra` as the SDK builds it (the fields the direct path reads). */
function sdkExtra(more: Record<string, unknown> = {}) {
  const calls: unknown[] = [];
  const extra: Record<string, unknown> = {
    signal: new AbortController().signal,
    requestId: 4,
    sendNotification: async (n: unknown) => {
      calls.push(n);
    },
    ...more,
  };
  return { extra, calls, original: extra['sendNotification'] };
}

const V1_SDKS = { 'SDK 1.32.0 (peer floor)': FloorMcpServer, 'SDK in devDependencies': V1McpServer };

for (const [sdk, Ctor] of Object.entries(V1_SDKS))
  test(`${sdk}: every handler, also one registered later, gets the direct function`, async () => {
    const { routed, transport } = recorder();
    const m = new Ctor({ name: 't', version: '1' });
    m.registerTool('early', {}, () => ({ content: [] }));
    await m.connect(transport as never);
    assert.equal(fastNotifyOn(m, transport), m.server, 'installed: the v1 Protocol');
    m.registerTool('late', {}, () => ({ content: [] }));
    for (const method of ['tools/call', 'ping']) {
      const h = handlersOf(m.server).get(method);
      assert.ok(h !== undefined, method);
      const { extra, calls, original } = sdkExtra();
      // The handler may fail on the bare request: only what it did to `extra` matters here.
      try {
        await h({ method, params: { name: 'late', arguments: {} } }, extra);
      } catch {}
      assert.notEqual(extra['sendNotification'], original, `${method}: replaced`);
      const send = extra['sendNotification'] as (n: unknown) => Promise<void>;
      const n = { method: 'notifications/progress', params: { progressToken: 1, progress: 1 } };
      await send(n);
      assert.equal(calls.length, 0, 'not through the SDK function');
      const last = routed.at(-1);
      assert.deepEqual(last?.message, { ...n, jsonrpc: '2.0' });
      assert.equal(
        JSON.stringify(last?.message),
        JSON.stringify({ ...n, jsonrpc: '2.0' }),
        'key order as the SDK',
      );
      assert.equal(last?.related, 4);
    }
  });

test('a handler is wrapped when first looked up, once: an idle session holds no wrapper per method', async () => {
  const { transport } = recorder();
  const m = new V1McpServer({ name: 't', version: '1' });
  m.registerTool('t', {}, () => ({ content: [] }));
  await m.connect(transport as never);
  const before = new Map(handlersOf(m.server));
  assert.equal(fastNotifyOn(m, transport), m.server, 'installed: the v1 Protocol');
  const table = handlersOf(m.server);
  // Stored as the SDK made them until the Protocol asks for one (Map's own get reads the slot).
  for (const [method, h] of before) assert.equal(Map.prototype.get.call(table, method), h, method);
  const wrapped = table.get('tools/list');
  assert.notEqual(wrapped, before.get('tools/list'));
  assert.equal(table.get('tools/list'), wrapped, 'the wrapper is kept, not made per request');
  assert.equal(Map.prototype.get.call(table, 'ping'), before.get('ping'), 'the others are still unwrapped');
});

test('a task request and a server no longer connected keep the SDK function', async () => {
  const { routed, transport } = recorder();
  const m = new V1McpServer({ name: 't', version: '1' });
  await m.connect(transport);
  assert.equal(fastNotifyOn(m, transport), m.server, 'installed: the v1 Protocol');
  const ping = handlersOf(m.server).get('ping');
  assert.ok(ping !== undefined);
  const task = sdkExtra({ taskId: 'task-1' });
  await ping({ method: 'ping' }, task.extra);
  assert.equal(
    task.extra['sendNotification'],
    task.original,
    'a task queues its notifications: SDK function',
  );

  const live = sdkExtra();
  await ping({ method: 'ping' }, live.extra);
  const send = live.extra['sendNotification'] as (n: unknown) => Promise<void>;
  await m.close();
  await send({ method: 'notifications/progress', params: { progressToken: 1, progress: 2 } });
  assert.equal(live.calls.length, 1, 'after close: the SDK function decides');
  assert.equal(routed.length, 0);
});

test('a server closed and connected to another transport is wrapped once and sends there', async () => {
  const first = recorder();
  const second = recorder();
  const m = new V1McpServer({ name: 't', version: '1' });
  await m.connect(first.transport);
  assert.equal(fastNotifyOn(m, first.transport), m.server, 'installed: the v1 Protocol');
  const table = handlersOf(m.server);
  await m.close();
  await m.connect(second.transport);
  assert.equal(fastNotifyOn(m, second.transport), m.server, 'installed: the v1 Protocol');
  assert.equal(handlersOf(m.server), table, 'the same table, not a wrapper of the wrapper');
  const ping = table.get('ping');
  assert.ok(ping !== undefined);
  const live = sdkExtra();
  await ping({ method: 'ping' }, live.extra);
  await (live.extra['sendNotification'] as (n: unknown) => Promise<void>)({
    method: 'notifications/progress',
    params: { progressToken: 1, progress: 1 },
  });
  assert.equal(live.calls.length, 0, 'the direct function, not the SDK one');
  assert.equal(first.routed.length, 0);
  assert.equal(second.routed.length, 1);
});

test('anything else is left as it was', async () => {
  const { transport } = recorder();
  // No Protocol internals at all.
  assert.equal(fastNotifyOn({ connect: async () => {}, close: async () => {} }, transport), undefined);
  // Not connected to this transport.
  const other = new V1McpServer({ name: 't', version: '1' });
  await other.connect(recorder().transport);
  const before = handlersOf(other.server);
  assert.equal(fastNotifyOn(other, transport), undefined);
  assert.equal(handlersOf(other.server), before);
  // A subclass that overrides notification().
  class Wrapped extends V1Server {
    override notification(...a: Parameters<V1Server['notification']>): Promise<void> {
      return super.notification(...a);
    }
  }
  const w = new Wrapped({ name: 't', version: '1' });
  const t2 = recorder().transport;
  await w.connect(t2);
  assert.equal(fastNotifyOn(w, t2), undefined);
  // An own notification on the instance (an application's wrapper).
  const own = new V1McpServer({ name: 't', version: '1' });
  const t3 = recorder().transport;
  await own.connect(t3);
  const inner = own.server as unknown as { notification: (...a: unknown[]) => Promise<void> };
  const n = inner.notification;
  inner.notification = (...a: unknown[]) => n.apply(own.server, a);
  assert.equal(fastNotifyOn(own, t3), undefined);
  // SDK v2: its notify is the negotiated era's codec.
  const v2 = new V2McpServer({ name: 'v2', version: '1' });
  const t4 = recorder().transport;
  await v2.connect(t4 as never);
  assert.equal(fastNotifyOn(v2, t4), undefined);
});
