/**
 * The node:http request view reads the socket's addresses only when asked: node:http keeps an
 * address object on the socket for the connection's life once one is read, and a GET stream to an
 * allowed Host needs neither (idle memory per stream, docs/benchmarks.md).
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { test } from 'node:test';
import { nodeView } from '../../src/server/node-view.js';

test('remoteAddress and loopback are read from the socket when asked, not when the view is made', () => {
  const reads: string[] = [];
  const socket = {
    get remoteAddress() {
      reads.push('remote');
      return '127.0.0.1';
    },
    get localAddress() {
      reads.push('local');
      return '127.0.0.1';
    },
  };
  const req = { method: 'GET', url: '/mcp', headers: { host: 'localhost' }, socket };
  const view = nodeView(req as unknown as IncomingMessage, {} as ServerResponse);
  assert.deepEqual(reads, []);
  assert.equal(view.loopback, true);
  assert.equal(view.remoteAddress, '127.0.0.1');
  assert.deepEqual(reads, ['local', 'remote']);
});
