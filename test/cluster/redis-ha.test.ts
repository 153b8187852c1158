// Redis high availability under a cluster of real instances:
// - Sentinel: the Redis master is SIGKILLed and three sentinels promote a replica while clients
//   keep calling through non-owners (no directory cache, so every call asks Redis) and keep
//   opening sessions. No session is lost, no request gets 404, 503s fall only inside the failover
//   window (measured and printed), and the owners write their entries again afterwards — one
//   session's entry is made to miss the promoted replica, as asynchronous replication may lose it.
// - Cluster: every key of a session hashes to one slot, the change bus is sharded.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { keys } from '../../src/cluster/keys.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { RawSession, type Reply, sleep, toolCall } from '../helpers/http.js';
import { adminCommand } from '../helpers/redis-ha.js';
import { clusterOn, type RedisTarget, startTarget, topologySkip } from '../helpers/redis-topology.js';
import { type Running, startServer } from '../helpers/test-server.js';

const LEASE_MS = 1_500;

function via(s: RawSession, url: string): RawSession {
  const v = new RawSession(url);
  v.sid = s.sid;
  v.version = s.version;
  return v;
}

interface Probe {
  at: number;
  status: number;
  what: string;
}

describe('Redis Sentinel: the cluster follows a failover', { skip: topologySkip('sentinel') }, () => {
  let target: RedisTarget;
  let link: RedisLink;
  const nodes: Running[] = [];

  before(async () => {
    target = await startTarget('sentinel');
    link = await target.connect();
    for (let i = 0; i < 3; i++) {
      nodes.push(
        await startServer({
          cluster: clusterOn(target, { leaseMs: LEASE_MS, directoryCacheMs: 0 }),
          keepaliveMs: 0,
        }),
      );
    }
  });
  after(async () => {
    for (const n of nodes) await n.close().catch(() => undefined);
    await link?.close().catch(() => undefined);
    await target?.stop();
  });

  test('master SIGKILLed: no session lost, never 404, 503 only in the failover window, entries written again', async () => {
    const group = target.sentinel;
    assert.ok(group !== undefined);
    // Two sessions per instance, each called through the other two instances in turn.
    const sessions: { s: RawSession; owner: number }[] = [];
    for (let i = 0; i < 6; i++) {
      const owner = i % nodes.length;
      const s = new RawSession((nodes[owner] as Running).url);
      await s.init();
      sessions.push({ s, owner });
    }
    // One entry misses both replicas, as an asynchronous replica may miss the master's last write.
    const lost = sessions[0] as { s: RawSession; owner: number };
    await sleep(200); // the replicas have the entries; now take one back out of them
    for (const port of group.replicaPorts) {
      assert.equal(await adminCommand(port, ['DEL', keys.session(lost.s.sid ?? '')]), 1);
    }
    const probes: Probe[] = [];
    let round = 0;
    let stop = false;
    const t0 = Date.now();
    const probeRound = async (): Promise<void> => {
      round++;
      const calls: Promise<void>[] = sessions.map(async ({ s, owner }, i) => {
        const relay = nodes[(owner + 1 + ((round + i) % 2)) % nodes.length] as Running;
        const r = await via(s, relay.url).post(toolCall('echo', { text: `r${round}` }));
        probes.push({ at: Date.now() - t0, status: r.status, what: `call ${i}` });
        r.destroy();
      });
      calls.push(
        (async () => {
          const fresh = new RawSession((nodes[round % nodes.length] as Running).url);
          let status = 200;
          await fresh.init().catch((e: unknown) => {
            status = Number(/initialize: (\d+)/.exec(String(e))?.[1] ?? 0);
          });
          probes.push({ at: Date.now() - t0, status, what: 'initialize' });
        })(),
      );
      await Promise.all(calls);
    };
    const loop = (async () => {
      while (!stop) {
        await probeRound();
        await sleep(50);
      }
    })();
    try {
      await sleep(1_000);
      const oldMaster = await group.killMaster();
      const killedAt = Date.now() - t0;
      const newMaster = await group.waitForFailover(oldMaster, 30_000);
      const promotedAt = Date.now() - t0;
      assert.notEqual(newMaster, oldMaster);
      // Carry on until 20 rounds in a row are all 200 (deadline: 30 s after the promotion).
      const deadline = Date.now() + 30_000;
      for (;;) {
        const since = probes.filter((p) => p.at > promotedAt);
        const tail = since.slice(-20 * (sessions.length + 1));
        if (tail.length === 20 * (sessions.length + 1) && tail.every((p) => p.status === 200)) break;
        assert.ok(
          Date.now() < deadline,
          `no recovery within 30 s of the promotion: ${since
            .slice(-14)
            .map((p) => `${p.what}:${p.status}`)
            .join(' ')}`,
        );
        await sleep(100);
      }
      stop = true;
      await loop;
      const bad = probes.filter((p) => p.status !== 200);
      assert.deepEqual(
        bad.filter((p) => p.status !== 503),
        [],
        'every answer is 200 or 503 (never 404, never another error)',
      );
      const first503 = bad[0]?.at;
      const last503 = bad.at(-1)?.at;
      if (first503 !== undefined && last503 !== undefined) {
        assert.ok(
          first503 >= killedAt - 50,
          `the first 503 (${first503} ms) follows the kill (${killedAt} ms)`,
        );
      }
      const before = probes.filter((p) => p.at < killedAt);
      assert.ok(before.length > 0 && before.every((p) => p.status === 200), 'all 200 before the kill');
      process.stderr.write(
        `sentinel failover: master killed at ${killedAt} ms, replica promoted at ${promotedAt} ms ` +
          `(${promotedAt - killedAt} ms); 503s: ${bad.length} of ${probes.length} answers, ` +
          `from ${first503 === undefined ? '-' : first503 - killedAt} to ${last503 === undefined ? '-' : last503 - killedAt} ms after the kill ` +
          `(calls ${bad.filter((p) => p.what !== 'initialize').length}, initialize ${bad.filter((p) => p.what === 'initialize').length})\n`,
      );
      // No session lost: every one answers through every instance.
      for (const { s } of sessions) {
        for (const n of nodes) {
          const r = await via(s, n.url).post(toolCall('echo', { text: 'after' }));
          assert.equal(r.status, 200, `session ${s.sid} through ${n.url}`);
        }
      }
      // The entry the promoted replica lacked was written again by its owner.
      assert.equal(await link.send(['EXISTS', keys.session(lost.s.sid ?? '')]), 1);
      // Re-registration moved the run marker past the kill (so misses meanwhile were 503, not 404).
      const run = Number(await link.send(['GET', keys.run]));
      assert.ok(run >= t0 + killedAt, 'the run marker restarted after the failover');
      // A session opened after the failover is reachable everywhere.
      const fresh = new RawSession((nodes[0] as Running).url);
      await fresh.init();
      const r: Reply = await via(fresh, (nodes[2] as Running).url).post(toolCall('echo', { text: 'x' }));
      assert.equal(r.status, 200);
    } finally {
      stop = true;
      await loop;
    }
  });
});

describe('Redis Cluster: one slot per session, sharded change bus', { skip: topologySkip('cluster') }, () => {
  let target: RedisTarget;
  const nodes: Running[] = [];

  before(async () => {
    target = await startTarget('cluster');
    for (let i = 0; i < 2; i++) {
      nodes.push(await startServer({ cluster: clusterOn(target, { leaseMs: LEASE_MS }), keepaliveMs: 0 }));
    }
  });
  after(async () => {
    for (const n of nodes) await n.close().catch(() => undefined);
    await target?.stop();
  });

  test("a session's directory entry and frame copies hash to one slot; the bus is sharded", async () => {
    const cluster = target.cluster;
    assert.ok(cluster !== undefined);
    const port = cluster.ports[0] as number;
    const [a, b] = nodes as [Running, Running];
    const s = new RawSession(a.url);
    await s.init();
    const r = await via(s, b.url).post(toolCall('progress', { n: 3, delayMs: 1 }, 'p', 'tok'));
    assert.equal(r.status, 200);
    const sid = s.sid ?? '';
    const slots = new Set<unknown>();
    for (const key of [
      keys.session(sid),
      keys.streamMeta(sid, 1),
      keys.streamList(sid, 1),
      keys.streamMeta(sid, 9),
    ])
      slots.add(await adminCommand(port, ['CLUSTER', 'KEYSLOT', key]));
    assert.equal(slots.size, 1, 'one slot for every key of a session');
    // The owner's frame copy was written on the cluster (a two-key script: one slot) and reads back.
    await a.served.handler.cluster?.flush();
    const link = await target.connect();
    try {
      assert.equal(await link.send(['EXISTS', keys.streamMeta(sid, 1), keys.streamList(sid, 1)]), 2);
    } finally {
      await link.close();
    }
    for (const n of nodes) {
      const st = n.stats().cluster;
      assert.equal(st?.bus.mode, 'sharded');
      assert.equal(st?.bus.subscribed, true);
      assert.equal(st?.redis.errors, 0, 'no CROSSSLOT or other error on the way');
    }
  });
});
