// RFC 9449 §11.1 across instances: a DPoP proof is accepted once, by the whole cluster, not once per
// instance. Two in-process members on a real redis-server, both resource servers for one resource
// (what a balancer in front of them makes them), with DPoP-bound tokens from oidc-provider and server
// nonces (§9). Both members make the same nonces (a key drawn from the cluster secret); a proof one
// member accepted is refused by the other; a request forwarded to its session's owner is checked by
// the relaying member only; a made-up hop header does not get a spent proof through; with Redis gone, a
// proof that cannot be checked is refused (503), while an unbound token is still served.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { redisCluster } from '../../src/cluster/cluster.js';
import { FORWARD_HEADER } from '../../src/cluster/forward-auth.js';
import { oauthResourceServer } from '../../src/server/index.js';
import { signingKey, TestAuthServer } from '../helpers/auth-server.js';
import {
  type AuthAnswer,
  ath,
  authPost,
  clientToken,
  type DpopKey,
  dpopKey,
  dpopProof,
} from '../helpers/dpop.js';
import { initializeBody, toolCall } from '../helpers/http.js';
import { findRedis, type Redis, startRedis } from '../helpers/redis.js';
import { clusterOn, type RedisTarget, startTarget, topologySkip } from '../helpers/redis-topology.js';
import { type Running, startServer } from '../helpers/test-server.js';

const have = findRedis() !== undefined;

describe('DPoP proofs are spent once across a cluster (RFC 9449 §11.1)', {
  skip: have ? false : 'SKIPPED: redis-server not installed — .ci/run installs it',
}, () => {
  let redis: Redis;
  let as: TestAuthServer;
  let a: Running;
  let b: Running;
  let key: DpopKey;
  let bound: string;
  /** The resource both members serve: the first member's URL, as a balancer's would be. */
  let resource = '';

  before(async () => {
    redis = await startRedis();
    as = await TestAuthServer.start({ keys: [await signingKey('dpop-cluster')], scopes: ['mcp:tools'] });
    // With server nonces (RFC 9449 §9): the members make them with one key drawn from the cluster secret.
    const rs = (url: string) =>
      oauthResourceServer({ resource: url, authorizationServers: [as.issuer], dpopNonce: {} });
    a = await startServer({
      cluster: redisCluster({ url: redis.url, leaseMs: 1_000 }),
      keepaliveMs: 0,
      oauth: (url) => {
        resource = url;
        return rs(url);
      },
    });
    b = await startServer({
      cluster: redisCluster({ url: redis.url, leaseMs: 1_000 }),
      keepaliveMs: 0,
      oauth: () => rs(resource),
    });
    key = await dpopKey();
    bound = await clientToken(as, resource, key);
  });
  after(async () => {
    for (const n of [b, a]) await n?.close().catch(() => undefined);
    await as?.stop();
    await redis?.stop();
  });

  /** The last nonce a member handed out. */
  let nonce: string | undefined;
  const freshProof = (): Promise<string> =>
    dpopProof(key, {
      htm: 'POST',
      htu: resource,
      ath: ath(bound),
      ...(nonce === undefined ? {} : { nonce }),
    });

  async function post(
    to: Running,
    body: unknown,
    headers: Record<string, string>,
    authorization = `DPoP ${bound}`,
  ): Promise<AuthAnswer> {
    const r = await authPost(to.url, { authorization, ...headers }, body);
    nonce = r.nonce ?? nonce;
    return r;
  }

  /** A session `owner` owns, opened with a proof of its own. */
  async function sessionAt(owner: Running): Promise<string> {
    const r = await post(owner, initializeBody('2025-11-25', {}, 1), { dpop: await freshProof() });
    assert.equal(r.status, 200, JSON.stringify(r));
    assert.ok(r.session !== null);
    return r.session;
  }

  const sessions = (r: Running): number => r.stats().sessions.active;

  test('a nonce one member handed out is good at the other', async () => {
    nonce = undefined;
    const asked = await post(a, initializeBody('2025-11-25', {}, 1), { dpop: await freshProof() });
    assert.equal(asked.status, 401, JSON.stringify(asked));
    assert.equal(asked.reason, 'dpop-nonce');
    assert.ok(nonce !== undefined);
    const fromA = nonce;
    const atB = await post(b, initializeBody('2025-11-25', {}, 1), { dpop: await freshProof() });
    assert.equal(atB.status, 200, JSON.stringify(atB));
    assert.equal(nonce, fromA, 'the same nonce from both members');
  });

  test('a proof one member accepted is refused by the other', async () => {
    const p = await freshProof();
    const first = await post(a, initializeBody('2025-11-25', {}, 1), { dpop: p });
    assert.equal(first.status, 200, JSON.stringify(first));
    const before = sessions(b);
    const again = await post(b, initializeBody('2025-11-25', {}, 1), { dpop: p });
    assert.equal(again.status, 401, JSON.stringify(again));
    assert.equal(again.reason, 'token-dpop');
    assert.match(
      again.challenge ?? '',
      /DPoP error="invalid_dpop_proof", error_description="the DPoP proof was used before"/,
    );
    assert.equal(sessions(b), before, 'no session was opened by the replay');
    // The member itself is fine: a proof of its own is taken.
    assert.equal(
      (await post(b, initializeBody('2025-11-25', {}, 2), { dpop: await freshProof() })).status,
      200,
    );
  });

  test("a forwarded request's proof is checked and spent once, by the relaying member", async () => {
    const sid = await sessionAt(a);
    const q = await freshProof();
    const via = await post(b, toolCall('echo', { text: 'hop' }, 'h1'), { dpop: q, 'mcp-session-id': sid });
    assert.equal(via.status, 200, JSON.stringify(via));
    assert.equal(via.route, 'forwarded');
    // Spent: neither the owner directly nor the relay again takes it.
    for (const to of [a, b]) {
      const r = await post(to, toolCall('echo', { text: 'again' }, 'h2'), { dpop: q, 'mcp-session-id': sid });
      assert.equal(r.status, 401, JSON.stringify(r));
      assert.equal(r.reason, 'token-dpop');
    }
  });

  test('a made-up hop header does not get a spent proof through', async () => {
    const p = await freshProof();
    assert.equal((await post(a, initializeBody('2025-11-25', {}, 1), { dpop: p })).status, 200);
    const before = sessions(b);
    const forged = `v2.x.y.${Date.now()}.bm9uY2Vub25jZQ.${'A'.repeat(43)}`;
    const r = await post(b, initializeBody('2025-11-25', {}, 1), { dpop: p, [FORWARD_HEADER]: forged });
    assert.equal(r.status, 403, JSON.stringify(r));
    assert.equal(r.reason, 'forward-forbidden');
    assert.equal(sessions(b), before);
  });

  test('Redis gone: a proof that cannot be checked is refused (503), an unbound token is still served', async () => {
    const sid = await sessionAt(a);
    const unbound = await clientToken(as, resource);
    const spent = await freshProof();
    assert.equal(
      (await post(a, toolCall('echo', { text: 'x' }, 'r0'), { dpop: spent, 'mcp-session-id': sid })).status,
      200,
    );
    await redis.stop();
    const r = await post(a, toolCall('echo', { text: 'x' }, 'r1'), {
      dpop: await freshProof(),
      'mcp-session-id': sid,
    });
    assert.equal(r.status, 503, JSON.stringify(r));
    assert.equal(r.reason, 'dpop-replay-unavailable');
    assert.match(r.retryAfter ?? '', /^[1-9][0-9]*$/);
    // Refused by this member's own memory, without Redis.
    const replay = await post(a, toolCall('echo', { text: 'x' }, 'r2'), {
      dpop: spent,
      'mcp-session-id': sid,
    });
    assert.equal(replay.status, 401, JSON.stringify(replay));
    const plain = await post(
      a,
      toolCall('echo', { text: 'x' }, 'r3'),
      { 'mcp-session-id': sid },
      `Bearer ${unbound}`,
    );
    assert.equal(plain.status, 200, JSON.stringify(plain));
  });
});

describe('the same on a three-master Redis Cluster: proof keys spread over slots', {
  skip: topologySkip('cluster'),
}, () => {
  let target: RedisTarget;
  let as: TestAuthServer;
  const members: Running[] = [];
  let resource = '';

  before(async () => {
    target = await startTarget('cluster');
    as = await TestAuthServer.start({ keys: [await signingKey('dpop-rc')], scopes: ['mcp:tools'] });
    const rs = (url: string) =>
      oauthResourceServer({ resource: url, authorizationServers: [as.issuer], dpopNonce: {} });
    for (let i = 0; i < 2; i++) {
      members.push(
        await startServer({
          cluster: clusterOn(target, { leaseMs: 1_000 }),
          keepaliveMs: 0,
          oauth: (url) => {
            if (resource === '') resource = url;
            return rs(resource);
          },
        }),
      );
    }
  });
  after(async () => {
    for (const m of members.reverse()) await m.close().catch(() => undefined);
    await as?.stop();
    await target?.stop();
  });

  test('twenty proofs, each taken by one member and refused by the other', async () => {
    const [a, b] = members as [Running, Running];
    const key = await dpopKey();
    const bound = await clientToken(as, resource, key);
    const post = (to: Running, dpop: string) => authPost(to.url, { authorization: `DPoP ${bound}`, dpop });
    const first = await post(a, await dpopProof(key, { htm: 'POST', htu: resource, ath: ath(bound) }));
    assert.equal(first.status, 401);
    const nonce = first.nonce ?? '';
    for (let i = 0; i < 20; i++) {
      const [one, other] = i % 2 === 0 ? [a, b] : [b, a];
      const p = await dpopProof(key, { htm: 'POST', htu: resource, ath: ath(bound), nonce });
      const r = await post(one, p);
      assert.equal(r.status, 200, `proof ${i} at its first member: ${JSON.stringify(r)}`);
      const again = await post(other, p);
      assert.equal(again.status, 401, `proof ${i} at the other member`);
      assert.match(again.challenge ?? '', /used before/);
    }
  });
});
