// Owner routing across real instances sharing a real redis-server: three in-process servers, each a
// cluster member. A session lives on the instance that answered its initialize; every request for
// it that lands elsewhere (POST, GET, DELETE, resume, reply to an elicitation, cancellation) is
// forwarded to that owner and its answer relayed as it streams.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FORWARD_HEADER, signForward } from '../../src/cluster/forward-auth.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { JsonRpcCode as C } from '../../src/jsonrpc/codes.js';
import { withDeadline } from '../helpers/deadline.js';
import { assertRefusal, notification, RawSession, send, sleep, toolCall, until } from '../helpers/http.js';
import {
  clusterOn,
  type RedisTarget,
  startTarget,
  topologies,
  topologySkip,
} from '../helpers/redis-topology.js';
import { type Running, startServer } from '../helpers/test-server.js';

/** The same session, addressed through another instance. */
function via(s: RawSession, url: string): RawSession {
  const v = new RawSession(url, s.extra);
  v.sid = s.sid;
  v.version = s.version;
  return v;
}

// One body for every Redis topology (single server, Sentinel, Cluster: redis-topology.ts).
for (const kind of topologies()) {
  describe(`cluster: owner routing [${kind}]`, { skip: topologySkip(kind) }, () => {
    let target: RedisTarget;
    let link: RedisLink;
    const nodes: Running[] = [];
    let a: Running;
    let b: Running;
    let c: Running;

    before(async () => {
      target = await startTarget(kind);
      link = await target.connect();
      for (let i = 0; i < 3; i++) {
        nodes.push(await startServer({ cluster: clusterOn(target, { leaseMs: 1_000 }), keepaliveMs: 0 }));
      }
      [a, b, c] = nodes as [Running, Running, Running];
    });
    after(async () => {
      for (const n of nodes) await n.close().catch(() => undefined);
      await link?.close();
      await target?.stop();
    });

    const clusterOf = (r: Running) => {
      const st = r.stats().cluster;
      assert.ok(st !== undefined);
      return st;
    };

    test('a call POSTed to a non-owner is forwarded; its answer relayed; the owner ran it', async () => {
      const s = new RawSession(a.url);
      await s.init();
      const outB = clusterOf(b).forwarded.out;
      const inA = clusterOf(a).forwarded.in;
      const r = await via(s, b.url).post(toolCall('echo', { text: 'hi' }, 'e1'));
      assert.equal(r.status, 200);
      const msg = r.isSse ? r.messages().at(-1) : r.json();
      assert.equal(msg.id, 'e1');
      assert.equal(msg.result.content[0].text, 'hi');
      assert.equal(clusterOf(b).forwarded.out, outB + 1);
      assert.equal(clusterOf(a).forwarded.in, inA + 1);
      assert.equal(b.stats().sessions.active, 0, 'the non-owner holds no copy of the session');
    });

    test('a progress stream through a non-owner: every event, in order, then the result', async () => {
      const s = new RawSession(a.url);
      await s.init();
      const r = await via(s, c.url).postOpen(toolCall('progress', { n: 50, delayMs: 1 }, 'p1', 'tok'));
      assert.equal(r.status, 200);
      assert.ok(r.isSse);
      await r.waitMessage((m) => m.id === 'p1', 5_000, 'result');
      const values = r
        .messages()
        .filter((m) => m.method === 'notifications/progress')
        .map((m) => m.params.progress);
      assert.deepEqual(
        values,
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
    });

    test('GET stream held through one non-owner gets messages caused through another', async () => {
      const s = new RawSession(a.url);
      await s.init();
      const g = await via(s, b.url).get();
      assert.equal(g.status, 200);
      await g.waitFor((r) => r.events.length >= 1, 2_000, 'priming through the relay');
      const r = await via(s, c.url).post(toolCall('notify', { n: 3 }, 'n1'));
      assert.equal(r.status, 200);
      await g.waitFor((x) => x.messages().length >= 3, 3_000, 'three notifications on the relayed GET');
      assert.deepEqual(
        g.messages().map((m) => m.params.data),
        ['unrelated 1', 'unrelated 2', 'unrelated 3'],
      );
      g.destroy();
    });

    test('an elicitation reply POSTed to a non-owner reaches the waiting handler on the owner', async () => {
      const s = new RawSession(a.url);
      await s.init(undefined, { elicitation: {} });
      const call = await s.postOpen(toolCall('ask', { kind: 'elicitation' }, 'ask1'));
      const req = await call.waitMessage(
        (m) => m.method === 'elicitation/create',
        3_000,
        'elicitation request',
      );
      const reply = await via(s, c.url).post({
        jsonrpc: '2.0',
        id: req.id,
        result: { action: 'accept', content: { name: 'Ada' } },
      });
      assert.equal(reply.status, 202);
      const res = await call.waitMessage((m) => m.id === 'ask1', 3_000, 'tool result');
      assert.match(res.result.content[0].text, /elicited accept .*Ada/);
    });

    test('notifications/cancelled sent to a non-owner aborts the handler on the owner', async () => {
      const s = new RawSession(a.url);
      await s.init();
      const started = a.probe.onStart('slow');
      const call = await s.postOpen(toolCall('slow', { ms: 5_000 }, 'slow1'));
      await withDeadline(started, 2_000, 'slow started');
      const n = await via(s, b.url).post(notification('notifications/cancelled', { requestId: 'slow1' }));
      assert.equal(n.status, 202);
      await until(() => a.probe.aborted.includes('slow:5000'), 2_000, 'handler signal aborted on the owner');
      call.destroy();
    });

    test('a Last-Event-ID resume through a non-owner replays after the cursor with no gap or duplicate', async () => {
      const s = new RawSession(a.url);
      await s.init();
      const post = await s.postOpen(toolCall('progress', { n: 10, delayMs: 0 }, 'p2', 'tok'));
      await post.finished(3_000, 'POST stream');
      const cursor = post.events[3]?.id;
      assert.ok(cursor !== undefined);
      const g = await via(s, b.url).get({ 'last-event-id': cursor });
      assert.equal(g.status, 200);
      await g.finished(3_000, 'replay');
      const all = post.events.map((e) => e.id);
      // The replay opens with the cursor's own id and empty data (the resume primer, sse/encode.ts),
      // then exactly the events after it.
      assert.equal(g.events[0]?.data, '');
      assert.deepEqual(
        g.events.map((e) => e.id),
        [cursor, ...all.slice(4)],
      );
    });

    test('DELETE through a non-owner ends the session everywhere: then 404 from any instance', async () => {
      const s = new RawSession(a.url);
      await s.init();
      const deletedBefore = a.stats().sessions.ended.delete;
      const del = await via(s, c.url).delete();
      assert.equal(del.status, 204);
      assert.equal(a.stats().sessions.ended.delete, deletedBefore + 1, 'the owner ended the session');
      const entry = await link.send(['EXISTS', `sl:{${s.sid}}`]);
      assert.equal(entry, 0, 'its directory entry is gone');
      for (const n of nodes) {
        const r = await via(s, n.url).post(toolCall('echo', { text: 'x' }));
        assert.equal(r.status, 404, `404 from ${n.url}`);
      }
    });

    test('unknown session ids answer 404 from a non-owner (directory miss), another principal is never forwarded', async () => {
      const ghost = new RawSession(b.url);
      ghost.sid = 'not-a-session';
      ghost.version = '2025-11-25';
      assertRefusal(
        await ghost.post(toolCall('echo', { text: 'x' })),
        404,
        C.SessionNotFound,
        'session-not-found',
      );
      assert.ok(clusterOf(b).directory.misses >= 1);
    });

    test('a forged forward header is refused 403; a signed one for another incarnation 421; never forwarded twice', async () => {
      const s = new RawSession(a.url);
      await s.init();
      const body = JSON.stringify(toolCall('echo', { text: 'x' }, 'f1'));
      const forged = await send(a.url, {
        method: 'POST',
        headers: {
          ...s.headers(),
          [FORWARD_HEADER]: `v2.x.${clusterOf(a).incarnation}.${Date.now()}.AAAAAAAAAAAAAAAA.AAAA`,
        },
        body,
      });
      assertRefusal(forged, 403, C.ServerError, 'forward-forbidden');
      const secret = await link.send(['GET', 'sl:secret']);
      assert.equal(typeof secret, 'string');
      const sig = signForward(String(secret), {
        method: 'POST',
        sessionId: s.sid ?? '',
        from: 'peer',
        to: 'some-other-incarnation',
        lastEventId: undefined,
        body,
      });
      const wrong = await send(b.url, {
        method: 'POST',
        headers: { ...s.headers(), [FORWARD_HEADER]: sig },
        body,
      });
      assertRefusal(wrong, 421, C.ServerError, 'misdirected');
      assert.equal(b.stats().sessions.active >= 0, true);
      // A correctly signed request for the owner is served there (it is the owner).
      const good = signForward(String(secret), {
        method: 'POST',
        sessionId: s.sid ?? '',
        from: 'peer',
        to: clusterOf(a).incarnation,
        lastEventId: undefined,
        body,
      });
      const ok = await send(a.url, {
        method: 'POST',
        headers: { ...s.headers(), [FORWARD_HEADER]: good },
        body,
      });
      assert.equal(ok.status, 200);
    });

    test('a slow client reading through a relay slows the owner: the relay does not buffer the stream', async () => {
      const s = new RawSession(a.url);
      await s.init();
      const r = await via(s, b.url).postOpen(toolCall('chatter', { n: 2_000, pad: 16_000 }, 'ch1'));
      assert.equal(r.status, 200);
      r.res.pause(); // the client stops reading: 32 MB are on their way, far beyond socket buffers
      // What the client has not read waits on the owner (queued, or its connection closed for
      // overflow so the client resumes), not in the relaying instance's memory.
      await until(
        () => a.stats().queue.bytes > 0 || a.stats().overflowCloses > 0,
        5_000,
        'backpressure reaches the owner through the relay',
      );
      assert.ok(r.text.length < 2_000 * 16_000, 'the client received far less than was produced');
      r.destroy();
    });

    test('a call that was in progress when the relay was dropped is resumed on another non-owner', async () => {
      const s = new RawSession(a.url);
      await s.init();
      const r = await via(s, b.url).postOpen(toolCall('progress', { n: 20, delayMs: 10 }, 'p3', 'tok'));
      await r.waitFor((x) => x.messages().length >= 3, 3_000, 'three progress events');
      r.destroy();
      const last = r.events.at(-1)?.id;
      assert.ok(last !== undefined);
      await sleep(50);
      const g = await via(s, c.url).get({ 'last-event-id': last });
      assert.equal(g.status, 200);
      await g.waitMessage((m) => m.id === 'p3', 3_000, 'result after the resume');
      const seen = [...r.messages(), ...g.messages()]
        .filter((m) => m.method === 'notifications/progress')
        .map((m) => m.params.progress);
      assert.deepEqual(
        seen,
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
    });

    test('metrics expose forwarding, directory, lease and Redis figures', () => {
      const text = b.served.handler.metrics();
      for (const name of [
        'sluice_cluster_forwarded_total',
        'sluice_cluster_forward_seconds_bucket',
        'sluice_cluster_directory_misses_total',
        'sluice_cluster_lease_state{state="held"} 1',
        'sluice_cluster_redis_seconds_count',
        'sluice_cluster_redis_errors_total',
      ]) {
        assert.ok(text.includes(name), `${name} in the exposition`);
      }
    });
  });
}
