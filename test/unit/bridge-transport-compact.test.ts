/**
 * The bridge transport's table of observed requests (core/sdk/bridge-transport.ts) is dropped by
 * compact() while empty, so an idle session keeps no empty Map, and kept while a request is in flight.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Operation, type OperationSink } from '../../src/core/observe/operation.js';
import { BridgeTransport } from '../../src/core/sdk/bridge-transport.js';

const sink: OperationSink = {
  ended() {},
  causeOfCancel: () => 'server',
  closeCause: () => 'server',
};
const op = (): Operation => new Operation(sink, Date.now, 'tools/call', 't', undefined, undefined, undefined);

test('compact() drops the empty table of observed requests and keeps one with a request in flight', async () => {
  const t = new BridgeTransport({ route: () => undefined, closedBySdk() {} }, 's');
  assert.equal(t.observing, false, 'made on first use');
  t.track(1, op());
  t.track(2, op());
  await t.send({ jsonrpc: '2.0', id: 1, result: {} });
  t.compact();
  assert.equal(t.observing, true, 'request 2 is still in flight');
  assert.ok(t.operation(2) !== undefined);
  await t.send({ jsonrpc: '2.0', id: 2, result: {} });
  assert.equal(t.observing, true, 'not dropped per response');
  t.compact();
  assert.equal(t.observing, false);
  t.track(3, op());
  assert.ok(t.operation(3) !== undefined, 'made again when needed');
});
