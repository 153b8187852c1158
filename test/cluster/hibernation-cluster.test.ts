// Hibernation in a cluster (option hibernateAfterMs, core/era-2025/wake.ts): a session sleeps on its
// owner, and a message that reaches another instance is forwarded as always and wakes it there. The
// directory, the lease and the hop do not know about hibernation: a sleeping session is still owned.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RawSession, toolCall, until } from '../helpers/http.js';
import { clusterOn, type RedisTarget, startTarget, topologySkip } from '../helpers/redis-topology.js';
import { type Running, startServer } from '../helpers/test-server.js';

describe('cluster: a sleeping session is woken by a forwarded request', {
  skip: topologySkip('single'),
}, () => {
  let target: RedisTarget;
  const nodes: Running[] = [];

  before(async () => {
    target = await startTarget('single');
    for (let i = 0; i < 2; i++) {
      nodes.push(
        await startServer({
          cluster: clusterOn(target, { leaseMs: 1_000 }),
          keepaliveMs: 0,
          hibernateAfterMs: 60,
        }),
      );
    }
  });
  after(async () => {
    for (const n of nodes) await n.close().catch(() => undefined);
    await target?.stop();
  });

  test('asleep on its owner, a call through the other instance wakes it; each sleep and wake is the owner’s', async () => {
    const [a, b] = nodes as [Running, Running];
    const s = new RawSession(a.url);
    await s.init();
    const viaB = new RawSession(b.url);
    viaB.sid = s.sid;
    viaB.version = s.version;
    for (let round = 0; round < 3; round++) {
      await until(
        () => a.stats().sessions.hibernation.asleep === 1,
        3_000,
        `asleep on its owner (round ${round})`,
      );
      const r = await viaB.post(toolCall('echo', { text: `via b ${round}` }));
      assert.equal(r.status, 200, r.text);
      const msg = r.isSse ? r.messages().at(-1) : r.json();
      assert.equal(msg.result.content[0].text, `via b ${round}`);
    }
    assert.equal(a.stats().sessions.hibernation.wakes, 3);
    assert.equal(b.stats().sessions.hibernation.wakes, 0);
    assert.equal(b.stats().sessions.active, 0, 'the other instance holds no copy');
    assert.equal(b.stats().cluster?.forwarded.out, 3);
  });
});
