// The hop's liveness probe (cluster/forwarder.ts `refusesConnections`): after a hop fails on a pooled
// socket (a reset, as after kill -9 of the owner), a fresh connect tells a dead address from a live
// one, so the 503's Retry-After can name the end of the owner's lease (cluster.ts).
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
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

test('forward: a client gone before the hop starts opens no hop (the owner would stream into nothing)', async () => {
  let ownerRequests = 0;
  const owner = createServer((_req, res) => {
    ownerRequests++;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': open\n\n');
  });
  await new Promise<void>((resolve) => owner.listen(0, '127.0.0.1', resolve));
  const f = new Forwarder({ connectTimeoutMs: 2_000 });
  const target = `http://127.0.0.1:${(owner.address() as AddressInfo).port}/mcp`;
  // The relay's client leaves while the relay still looks the owner up (a Redis round trip).
  let outcome: Promise<unknown> | undefined;
  const front: Server = createServer();
  const gone = new Promise<void>((ready) => {
    front.once('request', (req, res) => {
      res.once('close', () => {
        outcome = f.forward({ target, method: 'GET', headers: {}, body: '', extra: {} }, req, res);
        ready();
      });
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const client = request({ port: (front.address() as AddressInfo).port, method: 'GET' });
  client.on('error', () => undefined);
  client.end();
  try {
    await withDeadline(new Promise((r) => front.once('connection', r)), 5_000, 'the client connected');
    await new Promise((r) => setTimeout(r, 50));
    client.destroy();
    await withDeadline(gone, 5_000, 'the relay saw its client go');
    assert.deepEqual(await withDeadline(outcome ?? Promise.reject(), 5_000, 'the outcome'), {
      kind: 'client-gone',
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(ownerRequests, 0, 'nothing was sent to the owner');
  } finally {
    f.close();
    owner.closeAllConnections();
    owner.close();
    front.close();
  }
});

test('the keep-alive agents stay bounded however many owner addresses come and go', async () => {
  const f = new Forwarder({ connectTimeoutMs: 2_000 });
  try {
    // Members restarted on new addresses (pod IPs): 1,100 loopback addresses, nothing listening.
    for (let i = 0; i < 1_100; i++) {
      const url = `http://127.1.${i >> 8}.${i & 255}:9/mcp`;
      await withDeadline(f.refusesConnections(url), 5_000, `probe of ${url}`);
    }
    assert.ok(f.agents <= 1_024, `${f.agents} agents held`);
  } finally {
    f.close();
  }
});
