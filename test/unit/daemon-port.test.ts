// The daemon helpers' readiness (test/helpers/daemon.ts): a port that accepts connections is the daemon's
// only when the daemon holds the listening socket. A CI run here sent a Caddy test's requests to another
// process that had taken the port from freePort() before Caddy bound it (the stranger closed the socket on
// them: "fetch failed: UND_ERR_SOCKET"); the wait had taken any accepting port for the daemon's.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, test } from 'node:test';
import { freePort, spawnDaemon, stopDaemon, waitForPort } from '../helpers/daemon.js';

const servers: Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

/** A node process as the daemon: it listens on `port` after `afterMs`, or never when port is undefined. */
function fakeDaemon(port: number | undefined, afterMs = 0) {
  const code =
    port === undefined
      ? 'setTimeout(() => {}, 30000)'
      : `setTimeout(() => require('node:net').createServer().listen(${port}, '127.0.0.1'), ${afterMs}); setTimeout(() => {}, 30000)`;
  return spawnDaemon(process.execPath, ['-e', code], 'ignore', 'SIGKILL');
}

test("a port another process holds is not the daemon's: the wait times out instead of answering ready", async () => {
  const stranger = createServer();
  servers.push(stranger);
  const port = await new Promise<number>((resolve) =>
    stranger.listen(0, '127.0.0.1', () => {
      const a = stranger.address();
      resolve(typeof a === 'object' && a !== null ? a.port : 0);
    }),
  );
  const d = fakeDaemon(undefined);
  try {
    assert.equal(await waitForPort(d, port, 600), 'timeout');
  } finally {
    await stopDaemon(d, 'SIGKILL', 'fake daemon');
  }
});

test('the daemon listening on the port, late or at once, is ready; one that dies first has exited', async () => {
  for (const afterMs of [0, 300]) {
    const port = await freePort();
    const d = fakeDaemon(port, afterMs);
    try {
      assert.equal(await waitForPort(d, port, 10_000), 'ready', `listening after ${afterMs} ms`);
    } finally {
      await stopDaemon(d, 'SIGKILL', 'fake daemon');
    }
  }
  const gone = spawnDaemon(process.execPath, ['-e', 'process.exit(3)'], 'ignore', 'SIGKILL');
  assert.equal(await waitForPort(gone, await freePort(), 10_000), 'exited');
});
