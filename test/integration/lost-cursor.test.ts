/**
 * A fresh GET right after a resumed GET connection was lost. The official SDK client (1.x) keeps
 * the id it resumes from only per connection: when the resumed connection dies before a new event
 * reaches it, its next GET carries no Last-Event-ID. Everything the server wrote on that lost
 * connection then never reached the client; the fresh GET must start after the cursor the client
 * last presented, not after the last frame written (else those frames are lost: seen as 4 of 2,000
 * progress events missing in json-mode-order's seeded cuts). Reproduced here deterministically with
 * raw requests, in json mode, where a call's progress travels on the GET stream.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import { RawSession, sleep, toolCall, until } from '../helpers/http.js';

describe('fresh GET after a lost resumed connection', () => {
  let srv: Served;
  before(async () => {
    srv = await serve({
      createServer: () => createDemoServer(),
      host: '127.0.0.1',
      port: 0,
      mode: 'json',
      keepaliveMs: 0,
      pacingMs: 1,
    });
  });
  after(async () => {
    await srv.close();
  });

  test('starts after the cursor the client last presented: no progress lost', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const g1 = await s.get();
    await g1.waitFor((r) => r.events.length >= 1, 3_000, 'priming event');
    const call = s.post(toolCall('reindex', { corpus: 'c', docs: 60, delayMs: 15 }, 'r', 'tok'), {}, 15_000);
    await g1.waitFor((r) => r.messages().length >= 5, 5_000, 'progress on the first GET');
    g1.destroy();
    const cursor = g1.events.at(-1)?.id;
    assert.ok(cursor, 'the first connection carried ids');
    const before1 = progressOf(g1);

    // The resumed connection: frames are written to it, and it is lost before the client takes any.
    const g2 = await s.get({ 'last-event-id': cursor });
    await g2.waitFor((r) => r.messages().length >= 3, 5_000, 'frames written on the resumed connection');
    g2.destroy();
    await sleep(20);

    // What the SDK client then does: a GET without Last-Event-ID.
    const g3 = await s.get();
    const answer = await call;
    assert.equal(answer.status, 200, answer.text);
    await until(() => progressOf(g3).includes(60), 5_000, 'the last progress on the fresh GET');
    g3.destroy();
    const got = [...before1, ...progressOf(g3)];
    const missing = Array.from({ length: 60 }, (_, i) => i + 1).filter((p) => !got.includes(p));
    assert.deepEqual(missing, [], `progress values never delivered (first GET ${before1.join(',')})`);
  });
});

function progressOf(r: {
  messages(): readonly { method?: string; params?: { progress?: number } }[];
}): number[] {
  return r
    .messages()
    .filter((m) => m.method === 'notifications/progress')
    .map((m) => m.params?.progress ?? -1);
}
