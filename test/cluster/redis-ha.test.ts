// Redis high availability under a cluster of real instances:
// - Failover, one body for Sentinel and Cluster: the Redis master is SIGKILLed and a replica is
//   promoted (by three sentinels, or by the Cluster itself) while clients keep calling through
//   non-owners (no directory cache, so every call asks Redis) and keep opening sessions. No
//   session is lost, no request gets 404, 503s fall only inside the failover window (measured and
//   printed), and the owners write their entries again afterwards; with Sentinel one session's
//   entry is made to miss the promoted replica, as asynchronous replication may lose it; so are
//   three finished tasks, of a task store on a member's shared link (what `sluice serve
//   --redis-sentinel` runs), one on a link of its own, and one with `recentWrites: false`: the
//   first two are written again, result and all; the third is lost (docs/tasks.md); and so is a
//   stream's Redis copy, which its owner writes again from its buffer.
// - Cluster: every key of a session hashes to one slot, the change bus is sharded.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RedisCluster } from '../../src/cluster/cluster.js';
import { keys } from '../../src/cluster/keys.js';
import { Lease } from '../../src/cluster/lease.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { sharedLinkOf } from '../../src/cluster/shared-link.js';
import { connectRedisTaskStore } from '../../src/tasks/redis-connect.js';
import { RedisTaskStore } from '../../src/tasks/redis-store.js';
import { copyToLose, tasksToLose } from '../helpers/failover-link.js';
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

/** How a topology loses its master (the one serving `key`) and promotes a replica. */
interface Failover {
  kill(key: string): Promise<number>;
  promoted(key: string, oldPort: number, ms: number): Promise<number>;
  /** Makes the entry at `key` miss the replicas (what asynchronous replication can lose), if the topology lets a test. */
  loseOnReplicas?(key: string): Promise<void>;
}

/**
 * One failover trial, the same for Sentinel and Cluster: sessions called through non-owners (no
 * directory cache: every call asks Redis) and one initialize per round, the master killed after
 * 1 s, then calls until 20 rounds in a row are all 200.
 */
async function failoverTrial(label: string, nodes: Running[], link: RedisLink, f: Failover): Promise<void> {
  // Two sessions per instance, each called through the other two instances in turn.
  const sessions: { s: RawSession; owner: number }[] = [];
  for (let i = 0; i < 6; i++) {
    const owner = i % nodes.length;
    const s = new RawSession((nodes[owner] as Running).url);
    await s.init();
    sessions.push({ s, owner });
  }
  const lost = sessions[0] as { s: RawSession; owner: number };
  const lostKey = keys.session(lost.s.sid ?? '');
  if (f.loseOnReplicas !== undefined) {
    await sleep(200); // the replicas have the entries; now take one back out of them
    await f.loseOnReplicas(lostKey);
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
    // The kill's moment is when it began: `kill` resolves once the process has been reaped, and
    // under load that can come well after the link saw the master's connection close (and a 503
    // could be answered in between).
    const killedAt = Date.now() - t0;
    const oldMaster = await f.kill(lostKey);
    const reapedAt = Date.now() - t0;
    const newMaster = await f.promoted(lostKey, oldMaster, 30_000);
    const promotedAt = Date.now() - t0;
    assert.notEqual(newMaster, oldMaster);
    // Carry on until 20 rounds in a row are all 200 (deadline: 30 s after the promotion).
    const perRound = sessions.length + 1;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const tail = probes.filter((p) => p.at > promotedAt).slice(-20 * perRound);
      if (tail.length === 20 * perRound && tail.every((p) => p.status === 200)) break;
      assert.ok(
        Date.now() < deadline,
        `no recovery within 30 s of the promotion: ${tail
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
    if (first503 !== undefined) {
      assert.ok(first503 >= killedAt, `the first 503 (${first503} ms) follows the kill (${killedAt} ms)`);
    }
    const before = probes.filter((p) => p.at < killedAt);
    assert.ok(before.length > 0, 'probes ran before the kill');
    assert.deepEqual(
      before.filter((p) => p.status !== 200),
      [],
      `all 200 before the kill (${killedAt} ms)`,
    );
    process.stderr.write(
      `${label} failover: master killed at ${killedAt} ms (reaped ${reapedAt - killedAt} ms later), replica promoted at ${promotedAt} ms ` +
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
    // The entries are there (the one the promoted replica lacked was written again by its owner).
    assert.equal(await link.send(['EXISTS', lostKey]), 1);
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
}

for (const kind of ['sentinel', 'cluster'] as const) {
  describe(`Redis ${kind}: the cluster follows a failover`, { skip: topologySkip(kind) }, () => {
    let target: RedisTarget;
    let link: RedisLink;
    const nodes: Running[] = [];
    const clusters: RedisCluster[] = [];
    const stores: RedisTaskStore[] = [];

    before(async () => {
      target = await startTarget(kind, { clusterReplicas: 1 });
      link = await target.connect();
      for (let i = 0; i < 3; i++) {
        const cluster = clusterOn(target, { leaseMs: LEASE_MS, directoryCacheMs: 0 });
        clusters.push(cluster);
        nodes.push(await startServer({ cluster, keepaliveMs: 0 }));
      }
    });
    after(async () => {
      for (const s of stores) await s.close().catch(() => undefined);
      for (const n of nodes) await n.close().catch(() => undefined);
      await link?.close().catch(() => undefined);
      await target?.stop();
    });

    test('master SIGKILLed: no session lost, never 404, 503 only in the failover window, entries (and with Sentinel, tasks and a stream copy) written again', async () => {
      const sentinel = target.sentinel;
      const cluster = target.cluster;
      if (sentinel !== undefined) {
        stores.push(new RedisTaskStore(sharedLinkOf(clusters[0] as RedisCluster)));
        stores.push(await connectRedisTaskStore(target.options));
        const control = new RedisTaskStore(link, { recentWrites: false });
        const tasks = await tasksToLose(stores, control);
        const copy = await copyToLose((nodes[1] as Running).url, link);
        await failoverTrial('sentinel', nodes, link, {
          kill: () => sentinel.killMaster(),
          promoted: (_key, old, ms) => sentinel.waitForFailover(old, ms),
          // Writable test replicas: delete the entry and the tasks on each, as if the master had
          // died before sending them.
          async loseOnReplicas(key) {
            for (const port of sentinel.replicaPorts) {
              assert.equal(await adminCommand(port, ['DEL', key]), 1);
              await tasks.lose(port);
              await copy.lose(port);
            }
          },
        });
        await tasks.check();
        await copy.check();
      } else {
        assert.ok(cluster !== undefined);
        // A Cluster replica takes no write of its own: the lost write cannot be staged there.
        await failoverTrial('cluster', nodes, link, {
          kill: (key) => cluster.killMasterOf(key),
          promoted: (key, old, ms) => cluster.waitForFailover(key, old, ms),
        });
      }
    });
  });
}

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

  test('the peer count sees every instance though their lease keys live on different masters', async () => {
    const cluster = target.cluster;
    assert.ok(cluster !== undefined);
    // One incarnation whose lease key each master serves (each SCAN call is answered by one node).
    const byMaster = new Map<number, string>();
    for (let i = 0; byMaster.size < cluster.ports.length && i < 1_000; i++) {
      const inc = `peer${i}`;
      const port = await cluster.masterOf(keys.lease(inc));
      if (!byMaster.has(port)) byMaster.set(port, inc);
    }
    assert.equal(byMaster.size, cluster.ports.length, 'an incarnation per master');
    const link = await target.connect();
    const leases = [...byMaster.values()].map(
      (inc) =>
        new Lease(link, {
          incarnation: inc,
          address: `http://${inc}`,
          leaseMs: 60_000,
          onReRegister: () => undefined,
        }),
    );
    try {
      for (const l of leases) await l.start();
      // The two in-process members of this suite hold leases too.
      for (const l of leases) assert.equal(await l.others(), leases.length - 1 + nodes.length);
      const ready = await nodes[0]?.served.handler.cluster?.peersSeen();
      assert.equal(ready, leases.length + nodes.length - 1, 'the join line of a member');
    } finally {
      for (const l of leases) await l.stop();
      await link.close();
    }
  });
});
