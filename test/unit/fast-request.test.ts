/**
 * The guards and the request-in-flight of the fast request path (core/sdk/fast-request.ts): the
 * installed SDKs' `_onrequest` (the peer floor and the dev dependency, ESM and CommonJS builds) are
 * known ones, so an SDK upgrade that changes it fails here instead of silently leaving the path; the
 * path is not taken for an overridden `_onrequest`, a task store the SDK gives requests no view of,
 * or an SDK v2 server;
 * a request cancelled before its handler reads `extra.signal` sees it aborted with the reason, and
 * its answer is not sent; one not cancelled is answered and leaves the SDK's table empty.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental';
import { Server as V1Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Protocol as DevProtocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { McpServer as V2McpServer } from '@modelcontextprotocol/server';
import { Protocol as FloorProtocol } from 'sdk-floor/shared/protocol.js';
import { shortHash } from '../../src/core/observe/probe.js';
import { BridgeTransport } from '../../src/core/sdk/bridge-transport.js';
import { fastNotifyOn } from '../../src/core/sdk/fast-notify.js';
import { FastRequests, knownOnrequest } from '../../src/core/sdk/fast-request.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/message.js';

const require = createRequire(import.meta.url);

function recorder() {
  const routed: JsonRpcMessage[] = [];
  const target = {
    route(message: JsonRpcMessage) {
      routed.push(message);
      return undefined;
    },
    closedBySdk() {},
  };
  return { routed, transport: new BridgeTransport(target, 's') };
}

/** `server` connected to a recording transport, with the fast notify in place, and its path. */
async function connected(server: { connect(t: never): Promise<void> }) {
  const r = recorder();
  await server.connect(r.transport as never);
  const v1 = fastNotifyOn(server, r.transport);
  return { ...r, fast: v1 !== undefined, requests: FastRequests.of(v1, r.transport) };
}

test('FNV-1a test vectors (shortHash, the fingerprint of _onrequest)', () => {
  assert.equal(shortHash(''), '811c9dc5');
  assert.equal(shortHash('a'), 'e40c292c');
  assert.equal(shortHash('foobar'), 'bf9cf968');
});

test("the installed SDKs' _onrequest are known (peer floor and dev dependency, ESM and CommonJS)", () => {
  const builds = {
    'dev ESM': DevProtocol,
    'floor ESM': FloorProtocol,
    'dev CJS': require('@modelcontextprotocol/sdk/shared/protocol.js').Protocol,
    'floor CJS': require('sdk-floor/shared/protocol.js').Protocol,
  } as unknown as Record<string, { prototype: { _onrequest: unknown } }>;
  for (const [name, P] of Object.entries(builds))
    assert.equal(
      knownOnrequest(P.prototype._onrequest),
      true,
      `${name}: read its _onrequest against fast-request.ts, then add its fingerprint`,
    );
  assert.equal(
    knownOnrequest(() => undefined),
    false,
  );
  assert.equal(knownOnrequest(undefined), false);
});

test('taken for a plain SDK v1 server and one with a task store; not for an overridden _onrequest or SDK v2', async () => {
  assert.ok((await connected(new V1McpServer({ name: 't', version: '1' }))).requests);
  class Own extends V1Server {}
  const base = (V1Server.prototype as unknown as { _onrequest: (...a: unknown[]) => void })._onrequest;
  Object.defineProperty(Own.prototype, '_onrequest', {
    value(this: unknown, ...a: unknown[]): void {
      base.apply(this, a);
    },
  });
  const own = await connected(new Own({ name: 't', version: '1' }));
  assert.equal(own.requests, undefined, 'a subclass overriding _onrequest');
  const instance = new V1McpServer({ name: 't', version: '1' });
  const inner = instance.server as unknown as { _onrequest: (...a: unknown[]) => void };
  const orig = inner._onrequest;
  inner._onrequest = (...a: unknown[]) => orig.apply(instance.server, a);
  assert.equal((await connected(instance)).requests, undefined, 'an own _onrequest on the instance');
  const tasks = new V1McpServer(
    { name: 't', version: '1' },
    { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore: new InMemoryTaskStore() },
  );
  assert.ok((await connected(tasks)).requests, 'a server with a task store');
  const noView = new V1McpServer({ name: 't', version: '1' }, { taskStore: new InMemoryTaskStore() });
  (noView.server as unknown as { requestTaskStore: unknown }).requestTaskStore = undefined;
  assert.equal((await connected(noView)).requests, undefined, 'a task store without its request view');
  const v2 = await connected(new V2McpServer({ name: 'v2', version: '1' }) as never);
  assert.equal(v2.requests, undefined, 'SDK v2');
});

function toolServer(log: string[]) {
  const m = new V1McpServer({ name: 't', version: '1' });
  let go: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    go = resolve;
  });
  m.registerTool('t', {}, async (extra) => {
    log.push('started');
    await gate;
    log.push(`aborted ${extra.signal.aborted} ${String(extra.signal.reason)}`);
    return { content: [{ type: 'text' as const, text: 'done' }] };
  });
  return { m, go };
}

const call = (id: number) =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 't', arguments: {} } }) as const;

test('cancelled before the handler reads its signal: aborted with the first reason, no answer', async () => {
  const log: string[] = [];
  const { m, go } = toolServer(log);
  const c = await connected(m);
  assert.ok(c.requests);
  assert.equal(c.requests.run(call(1), {}), true);
  const table = (
    m.server as unknown as { _requestHandlerAbortControllers: Map<unknown, { abort(r?: unknown): void }> }
  )._requestHandlerAbortControllers;
  const flight = table.get(1);
  assert.ok(flight, 'in the SDK table while running');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(log, ['started']);
  flight.abort('first');
  flight.abort('second');
  go();
  for (let i = 0; i < 10 && table.size > 0; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(log, ['started', 'aborted true first']);
  assert.deepEqual(c.routed, [], 'nothing answered');
  assert.equal(table.size, 0);
});

test('not cancelled: answered as the SDK answers, the table left empty', async () => {
  const log: string[] = [];
  const { m, go } = toolServer(log);
  const c = await connected(m);
  assert.ok(c.requests);
  go();
  assert.equal(c.requests.run(call(2), {}), true);
  const table = (m.server as unknown as { _requestHandlerAbortControllers: Map<unknown, unknown> })
    ._requestHandlerAbortControllers;
  for (let i = 0; i < 10 && table.size > 0; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(log, ['started', 'aborted false undefined']);
  assert.deepEqual(c.routed, [
    { result: { content: [{ type: 'text', text: 'done' }] }, jsonrpc: '2.0', id: 2 },
  ]);
  assert.equal(table.size, 0);
  assert.equal(
    c.requests.run({ jsonrpc: '2.0', id: 3, method: 'no/such' }, {}),
    false,
    'no handler: the SDK answers',
  );
});
