// The test Redis helper: a private redis-server on a free port, restartable (empty) on the same
// port, gone after stop(). Talks raw RESP so it depends on no Redis client.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import { skipWithoutRedis, startRedis } from '../helpers/redis.js';

function command(port: number, ...args: string[]): Promise<string> {
  return withDeadline(
    new Promise<string>((resolve, reject) => {
      const s = connect(port, '127.0.0.1');
      let out = '';
      s.setEncoding('utf8');
      s.on('data', (d: string) => {
        out += d;
        if (out.endsWith('\r\n')) {
          s.destroy();
          resolve(out);
        }
      });
      s.on('error', reject);
      s.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
    }),
    2_000,
    `redis ${args[0]}`,
  );
}

test('startRedis: a private server that restarts empty on the same port and is gone after stop()', async (t) => {
  if (skipWithoutRedis(t)) return;
  const r = await startRedis();
  try {
    assert.equal(await command(r.port, 'PING'), '+PONG\r\n');
    assert.equal(await command(r.port, 'SET', 'k', 'v'), '+OK\r\n');
    assert.match(await command(r.port, 'CONFIG', 'GET', 'save'), /save\r\n\$0\r\n/);
    await r.restart();
    assert.equal(await command(r.port, 'GET', 'k'), '$-1\r\n', 'the restarted server lost its data');
  } finally {
    await r.stop();
  }
  await assert.rejects(command(r.port, 'PING'), 'nothing listens after stop()');
});
