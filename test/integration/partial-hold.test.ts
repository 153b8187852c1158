// A producer whose consumer is away is held, not evicting (issue 21, item 4): with pacing off and a
// small fixed replay bound, `generate` floods while the client is disconnected; once the stream's
// replay buffer is nearly full the tool's `await out.text()` waits for the client, so the resume
// still finds every delta after its cursor (before: 410 resume-evicted) and the text is exact. The
// same on a cluster member, whose replay store also copies every frame to Redis (TeeEventStore):
// it must report how full its buffer is, or the producer is never held (skipped loudly without
// redis-server).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { redisCluster } from '../../src/cluster/cluster.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { generateText } from '../../src/demo/generate.js';
import { type Served, type ServeOptions, serve } from '../../src/server/index.js';
import { RawSession, sleep, toolCall, until } from '../helpers/http.js';
import { findRedis, type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';

const WORDS = 50_000;
const MAX_BYTES = 64 * 1024;

/** The scenario on `srv`: a full replay buffer holds the producer until the resume, which gets the exact rest. */
async function heldUntilResumed(srv: Served): Promise<void> {
  const s = new RawSession(srv.url);
  await s.init();
  const p = await s.postOpen(toolCall('generate', { words: WORDS, delayMs: 0, seed: 3 }, 'g1', 'g1'), {
    accept: 'text/event-stream',
  });
  await p.waitFor((r) => r.messages().length >= 10, 10_000, 'first deltas');
  p.destroy();
  const seen = p.events.filter((e) => e.data.length > 0);
  const lastId = seen.at(-1)?.id;
  assert.ok(lastId !== undefined);
  let text = seen.map((e) => JSON.parse(e.data).params.message as string).join('');
  // The producer floods (no pacing) until the buffer is nearly full, then waits.
  await until(
    () => (srv.handler.stats().replayBuffer?.bytes ?? 0) >= 0.9 * MAX_BYTES,
    10_000,
    'buffer fills',
  );
  const held = srv.handler.stats().replayBuffer?.bytes ?? 0;
  await sleep(300);
  assert.ok((srv.handler.stats().replayBuffer?.bytes ?? 0) <= MAX_BYTES, 'within the bound');
  assert.equal(srv.handler.stats().replayBuffer?.evictions, 0, `nothing evicted (held at ${held} bytes)`);
  const g = await s.get({ 'last-event-id': lastId });
  assert.equal(g.status, 200, g.text.slice(0, 300));
  await g.waitFor((r) => r.messages().some((m) => m.id === 'g1'), 60_000, 'the result');
  for (const m of g.messages()) if (m.method === 'notifications/progress') text += m.params.message;
  const result = g.messages().find((m) => m.id === 'g1');
  const expected = generateText(WORDS, 3);
  assert.equal(result.result.content[0].text, expected);
  assert.equal(text.length, expected.length);
  assert.equal(text, expected);
  assert.equal(srv.handler.stats().replays.declined.evicted, 0);
  g.destroy();
  await s.delete();
}

const BASE: ServeOptions = {
  createServer: () => createDemoServer(),
  host: '127.0.0.1',
  port: 0,
  keepaliveMs: 0,
  pacingMs: 0,
  replay: { maxBytes: MAX_BYTES, tolerableDisconnectMs: 0 },
};

describe('partial output while the client is away', () => {
  let srv: Served;
  before(async () => {
    srv = await serve(BASE);
  });
  after(() => srv.close());

  test('a full replay buffer holds the producer until the resume, which gets the exact rest', async () => {
    await heldUntilResumed(srv);
  });
});

describe('partial output while the client is away, on a cluster member (frames copied to Redis)', () => {
  let redis: Redis | undefined;
  let srv: Served | undefined;
  before(async () => {
    if (findRedis() === undefined) return;
    redis = await startRedis();
    srv = await serve({ ...BASE, cluster: redisCluster({ url: redis.url, leaseMs: 1_000 }) });
  });
  after(async () => {
    await srv?.close();
    await redis?.stop();
  });

  test('needs redis-server', (t) => {
    skipWithoutRedis(t);
  });

  test('the same: held, nothing evicted, the exact rest on resume', async (t) => {
    if (srv === undefined) return t.skip('no redis-server (see above)');
    await heldUntilResumed(srv);
  });
});
