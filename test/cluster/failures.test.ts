// Failure semantics of a cluster of real `sluice serve --redis` processes on a real redis-server:
// an owner killed with SIGKILL, an owner stopped with SIGTERM, Redis restarted (data lost), and one
// instance's Redis link cut (through a TCP proxy the test controls). The instance failures run over
// every Redis topology (single server, Sentinel, Cluster); the Redis failures of a single server
// here (a Sentinel failover is redis-ha.test.ts's).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { JsonRpcCode as C } from '../../src/jsonrpc/codes.js';
import { withDeadline } from '../helpers/deadline.js';
import { assertRefusal, RawSession, type Reply, sleep, toolCall } from '../helpers/http.js';
import { type RedisTarget, startTarget, topologies, topologySkip } from '../helpers/redis-topology.js';
import { type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const LEASE_MS = 1_500;

function via(s: RawSession, url: string): RawSession {
  const v = new RawSession(url);
  v.sid = s.sid;
  v.version = s.version;
  return v;
}

async function member(redisArgs: string[]): Promise<SpawnedServe> {
  return spawnServe(
    [...redisArgs, '--keepalive-ms', '0'],
    { SLUICE_CLUSTER_LEASE_MS: String(LEASE_MS) },
    45_000,
  );
}

function killed(p: SpawnedServe): Promise<void> {
  return new Promise((resolve) => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) return resolve();
    p.child.once('exit', () => resolve());
    p.child.kill('SIGKILL');
  });
}

/**
 * Sends a request every 100 ms (one at a time) until `done` says the answer is the awaited one;
 * returns every answer seen. Rejects at the deadline.
 */
async function poll(
  send: () => Promise<Reply>,
  done: (r: Reply) => boolean,
  ms: number,
  label: string,
): Promise<Reply[]> {
  const seen: Reply[] = [];
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const r = await send();
    seen.push(r);
    if (done(r)) return seen;
    r.destroy();
    await sleep(100);
  }
  throw new Error(`${label}: not within ${ms} ms; statuses ${seen.map((r) => r.status).join(',')}`);
}

const reindex = (id: string, docs: number, delayMs: number) =>
  toolCall('reindex', { corpus: 'c', docs, delayMs }, id, `tok-${id}`);

for (const kind of topologies()) {
  describe(`cluster failures [${kind}]`, { skip: topologySkip(kind) }, () => {
    let target: RedisTarget;
    const procs: SpawnedServe[] = [];
    const proxies: TcpProxy[] = [];

    /** Member A on Redis directly, member B through a TCP proxy the test controls; a session on each. */
    async function behindProxy(): Promise<{
      proxy: TcpProxy;
      b: SpawnedServe;
      onA: RawSession;
      onB: RawSession;
    }> {
      const redis = target.single;
      assert.ok(redis !== undefined);
      const proxy = await startTcpProxy(redis.port);
      proxies.push(proxy);
      const a = await member(['--redis', redis.url]);
      const b = await member(['--redis', `redis://127.0.0.1:${proxy.port}`]);
      procs.push(a, b);
      const onA = new RawSession(a.url);
      await onA.init();
      const onB = new RawSession(b.url);
      await onB.init();
      return { proxy, b, onA, onB };
    }

    before(async () => {
      target = await startTarget(kind);
    });
    after(async () => {
      for (const p of procs) await p.close().catch(() => undefined);
      for (const x of proxies) await x.close().catch(() => undefined);
      await target?.stop();
    });

    async function three(): Promise<[SpawnedServe, SpawnedServe, SpawnedServe]> {
      const args = target.serveArgs;
      const started = [await member(args), await member(args), await member(args)];
      procs.push(...started);
      return started as [SpawnedServe, SpawnedServe, SpawnedServe];
    }

    test('owner killed (SIGKILL): 503 while its lease holds, then 404; finished streams resume from the copy; an in-flight call ends with owner-lost', async () => {
      const [a, b, c] = await three();
      const s = new RawSession(a.url);
      await s.init();
      // A finished stream (its answer is in the Redis copy) and one still running.
      const done = await s.postOpen(reindex('fin', 5, 0));
      await done.finished(3_000, 'finished stream');
      assert.ok(done.isSse);
      const live = await via(s, b.url).postOpen(reindex('live', 100_000, 5));
      await live.waitFor((r) => r.messages().length >= 5, 5_000, 'progress through the relay');
      await sleep(50); // let a tick of frames reach the copy
      const killedAt = Date.now();
      await killed(a);
      await live.finished(3_000, 'the relayed stream is cut when the owner dies');
      // While the lease holds: 503, never 404, with Retry-After the time left on the lease (nothing
      // listens at the owner's address, so nothing settles before it lapses).
      const early = await via(s, c.url).post(toolCall('echo', { text: 'x' }));
      if (Date.now() - killedAt < LEASE_MS - 200) {
        assertRefusal(early, 503, C.ServerError, 'owner-unavailable');
        const wait = Number(early.headers['retry-after']);
        assert.ok(wait >= 1 && wait <= Math.ceil(LEASE_MS / 1000), `Retry-After ${wait}`);
      }
      // A finished stream resumes from the copy on any instance, at once.
      const first = done.events[0]?.id;
      assert.ok(first !== undefined);
      const replay = await via(s, c.url).get({ 'last-event-id': first });
      assert.equal(replay.status, 200);
      await replay.finished(3_000, 'replay from the copy');
      assert.deepEqual(
        replay.events.map((e) => e.id),
        done.events.slice(1).map((e) => e.id),
        'the same frames, after the cursor, no duplicate',
      );
      assert.equal(replay.messages().at(-1)?.id, 'fin');
      // The in-flight call: within lease + 5 s the resume gives a definite error (not a hang).
      const cursor = live.events.at(-1)?.id;
      assert.ok(cursor !== undefined);
      const tries = await poll(
        () => via(s, b.url).get({ 'last-event-id': cursor }),
        (g) => g.status === 200,
        LEASE_MS + 5_000,
        'the resume of the in-flight call is served once the lease lapsed',
      );
      assert.ok(
        tries.slice(0, -1).every((t) => t.status === 503),
        'only 503 before the lease lapsed',
      );
      const end = tries.at(-1) as Reply;
      await end.finished(3_000, 'owner-lost stream ends');
      const msgs = end.messages();
      const last = msgs.at(-1);
      assert.equal(last?.id, 'live');
      assert.equal(last?.error?.code, -32603);
      assert.equal(last?.error?.data?.reason, 'owner-lost');
      // Progress values are contiguous across the relay and the resume: none lost, none repeated.
      const progress = [...live.messages(), ...msgs]
        .filter((m) => m.method === 'notifications/progress')
        .map((m) => m.params.progress);
      assert.deepEqual(
        progress,
        Array.from({ length: progress.length }, (_, i) => i + 1),
      );
      assert.ok(Date.now() - killedAt <= LEASE_MS + 5_000);
      // After the lease lapsed: 404, so the client re-initializes on a live instance.
      const late = await via(s, c.url).post(toolCall('echo', { text: 'x' }));
      assertRefusal(late, 404, C.SessionNotFound, 'session-not-found');
      const fresh = new RawSession(b.url);
      await fresh.init();
    });

    test('SIGTERM: the owner drains, then its sessions answer 404 everywhere (not re-homed)', async () => {
      const [a, b] = await three();
      const s = new RawSession(a.url);
      await s.init();
      const slow = await s.postOpen(toolCall('sleep', { ms: 300 }, 'sl'));
      await a.close(); // SIGTERM: the call in flight finishes within the grace
      await slow.finished(3_000, 'the call in flight completed during the drain');
      assert.ok(slow.text.includes('"id":"sl"'), slow.text);
      const r = await via(s, b.url).post(toolCall('echo', { text: 'x' }));
      assertRefusal(r, 404, C.SessionNotFound, 'session-not-found');
    });

    // A single server's own failures: restarted empty, or unreachable from one instance.
    if (kind !== 'single') return;

    test('Redis restart (data lost): owner-local calls carry on; never a 404; the owner re-registers and forwarding resumes', async () => {
      const redis = target.single;
      assert.ok(redis !== undefined);
      const [a, b] = await three();
      const s = new RawSession(a.url);
      await s.init();
      assert.equal((await via(s, b.url).post(toolCall('echo', { text: 'x' }))).status, 200);
      await redis.restart();
      assert.equal((await s.post(toolCall('echo', { text: 'local' }))).status, 200, 'owner-local, no Redis');
      const statuses = (
        await poll(
          () => via(s, b.url).post(toolCall('echo', { text: 'x' })),
          (r) => r.status === 200,
          LEASE_MS + 5_000,
          'forwarding works again after the owner re-registered',
        )
      ).map((r) => r.status);
      assert.ok(
        statuses.every((st) => st === 200 || st === 503),
        `only 200 or 503 while Redis came back: ${statuses}`,
      );
    });

    test('a cut Redis link: that instance answers initialize and directory misses 503 (never 404); owner-local calls carry on; it recovers', async () => {
      const { proxy, b, onA, onB } = await behindProxy();
      proxy.cut();
      await sleep(100);
      // B's own session keeps working: no Redis on the owner-local path.
      assert.equal((await onB.post(toolCall('echo', { text: 'x' }))).status, 200);
      // A session B has never looked up: 503, not 404.
      assertRefusal(
        await via(onA, b.url).post(toolCall('echo', { text: 'x' })),
        503,
        C.ServerError,
        'cluster-unavailable',
      );
      // A new session on B: 503 with Retry-After.
      const init = new RawSession(b.url);
      await assert.rejects(init.init(), /initialize: 503/);
      proxy.restore();
      const after = await poll(
        () => via(onA, b.url).post(toolCall('echo', { text: 'x' })),
        (r) => r.status === 200,
        5_000,
        'B forwards again once its link is back',
      );
      assert.ok(
        after.every((r) => r.status === 200 || r.status === 503),
        'never 404 meanwhile',
      );
    });

    test('a stalled Redis link (connections open, nothing answered): 503 within the command deadline, never a hang; owner-local calls carry on; it recovers', async () => {
      const { proxy, b, onA, onB } = await behindProxy();
      proxy.stall();
      // The owner-local path needs no Redis (its copy's writes time out behind it).
      assert.equal((await onB.post(toolCall('echo', { text: 'x' }))).status, 200);
      // Requests that wait on Redis are refused once its commands' deadline (1 s by default) has
      // passed: a written command's reply is waited for no longer than that either.
      const t0 = Date.now();
      const miss = await withDeadline(
        via(onA, b.url).post(toolCall('echo', { text: 'x' })),
        8_000,
        'a directory miss over a stalled link',
      );
      assertRefusal(miss, 503, C.ServerError, 'cluster-unavailable');
      await assert.rejects(
        withDeadline(new RawSession(b.url).init(), 8_000, 'initialize over a stalled link'),
        /initialize: 503/,
      );
      assert.ok(Date.now() - t0 < 8_000);
      assert.equal((await onB.post(toolCall('echo', { text: 'y' }))).status, 200);
      proxy.restore();
      const after = await poll(
        () => via(onA, b.url).post(toolCall('echo', { text: 'x' })),
        (r) => r.status === 200,
        10_000,
        'B forwards again once its link answers',
      );
      assert.ok(
        after.every((r) => r.status === 200 || r.status === 503),
        'never 404 meanwhile',
      );
      // New sessions once its lease is refreshed (a third of the lease after the link answers):
      // 503 with Retry-After until then, as a client retries it.
      const fresh = new RawSession(b.url);
      const deadline = Date.now() + 10_000;
      for (;;) {
        try {
          await fresh.init();
          break;
        } catch (error) {
          assert.match(String(error), /initialize: 503/);
          if (Date.now() > deadline) throw error;
          await sleep(100);
        }
      }
      assert.equal((await fresh.post(toolCall('echo', { text: 'z' }))).status, 200);
    });
  });
}
