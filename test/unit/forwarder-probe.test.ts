// The hop's liveness probe (cluster/forwarder.ts `refusesConnections`): after a hop fails on a pooled
// socket (a reset, as after kill -9 of the owner), a fresh connect tells a dead address from a live
// one, so the 503's Retry-After can name the end of the owner's lease (cluster.ts).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { Forwarder } from '../../src/cluster/forwarder.js';
import { withDeadline } from '../helpers/deadline.js';

function listen(): Promise<Server> {
  const s = createServer((_req, res) => res.end('ok'));
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

test('refusesConnections: false while something listens, true once the port is closed', async () => {
  const f = new Forwarder({ connectTimeoutMs: 2_000 });
  const server = await listen();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  try {
    assert.equal(await withDeadline(f.refusesConnections(url), 5_000, 'probe of a live port'), false);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    assert.equal(await withDeadline(f.refusesConnections(url), 5_000, 'probe of a closed port'), true);
  } finally {
    f.close();
    server.closeAllConnections();
  }
});
