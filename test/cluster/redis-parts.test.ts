// The cluster's Redis parts against a real redis-server: the node-redis link (fails fast while Redis
// is down, recovers after a restart), the session directory, the instance lease (re-registers after
// a Redis restart), the event replica (batched per tick, idempotent, order-checked, bounded, freed),
// the shared secret, and the HMAC of forwarded requests.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Directory, principalHash } from '../../src/cluster/directory.js';
import { bodyDigest, FORWARD_WINDOW_MS, signForward, verifyForward } from '../../src/cluster/forward-auth.js';
import { keys } from '../../src/cluster/keys.js';
import { Lease } from '../../src/cluster/lease.js';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import { MeasuredLink, type RedisLink, type RedisReply } from '../../src/cluster/redis-link.js';
import { ReplayGuard } from '../../src/cluster/replay-guard.js';
import { EventReplica, type ReplicaLimits } from '../../src/cluster/replica.js';
import { evictedAtOnce } from '../../src/cluster/replica-batch.js';
import { checkGivenSecret, provisionSecret } from '../../src/cluster/secret.js';
import { withDeadline } from '../helpers/deadline.js';
import { sleep, until } from '../helpers/http.js';
import { findRedis, type Redis, startRedis } from '../helpers/redis.js';

const have = findRedis() !== undefined;
let redis: Redis;
let link: RedisLink;

/** Counts commands by name (to assert on batching). */
class CountingLink implements RedisLink {
  readonly inner: RedisLink;
  readonly counts = new Map<string, number>();
  /** Arguments sent, over every command. */
  args = 0;
  /** Send every command twice (a client library re-sending after a reconnect). */
  duplicate = false;
  constructor(inner: RedisLink) {
    this.inner = inner;
  }
  async send(args: readonly string[]): Promise<RedisReply> {
    const name = args[0] ?? '';
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
    this.args += args.length;
    const r = await this.inner.send(args);
    if (this.duplicate) await this.inner.send(args);
    return r;
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const LIMITS: ReplicaLimits = { maxCount: 1000, maxBytes: 1 << 20, maxAgeMs: 60_000, budgetBytes: 1 << 24 };

function frame(seq: number, pad = 0): string {
  return `id: t_1_${seq}\ndata: {"n":${seq}${' '.repeat(pad)}}\n\n`;
}

/** Frames a stream's copy holds: the counts in its packs' headers (replica-packs.ts), one element per batch. */
async function framesHeld(sid: string, n: number): Promise<number> {
  const packs = await link.send(['LRANGE', keys.streamList(sid, n), '0', '-1']);
  assert.ok(Array.isArray(packs));
  return packs.reduce<number>((sum, p) => sum + Number(/^\d+ (\d+)[ \n]/.exec(String(p))?.[1] ?? NaN), 0);
}

describe('cluster Redis parts', {
  skip: have ? false : 'SKIPPED: redis-server not installed — .ci/run installs it',
}, () => {
  before(async () => {
    redis = await startRedis();
    link = await connectNodeRedis({ url: redis.url, commandTimeoutMs: 500, connectTimeoutMs: 500 });
  });
  after(async () => {
    await link?.close();
    await redis?.stop();
  });

  test('node-redis link: commands, fast failure while Redis is down, recovery after it restarts', async () => {
    const m = new MeasuredLink(link);
    assert.equal(await m.send(['SET', 'x', '1']), 'OK');
    assert.equal(await m.send(['GET', 'x']), '1');
    assert.deepEqual(await m.send(['MGET', 'x', 'nope']), ['1', null]);
    assert.equal(await m.send(['INCR', 'n']), 1);
    await assert.rejects(m.send(['HGET', 'x', 'f']), /WRONGTYPE/);
    assert.equal(m.healthy, true, 'an error reply does not mark the link unhealthy');
    await redis.restart();
    // While the link is down a command rejects at once (no offline queue): never a hang.
    await withDeadline(
      until(
        () => {
          void m.send(['PING']).then(
            () => undefined,
            () => undefined,
          );
          return m.errors > 0 || m.healthy;
        },
        3_000,
        'first command after the restart settles',
      ),
      4_000,
      'settle',
    );
    await until(
      () => {
        void m.send(['PING']).then(
          () => undefined,
          () => undefined,
        );
        return m.healthy && m.commands > 2;
      },
      5_000,
      'the link reconnects by itself',
    );
    assert.equal(await m.send(['GET', 'x']), null, 'the restarted Redis is empty');
    assert.ok(m.rtt.count > 0);
  });

  test('directory: register with TTL, lookup, touch, remove; principals stored hashed', async () => {
    const d = new Directory(link, 5_000);
    const entry = {
      owner: 'incA',
      address: 'http://10.0.0.1:3000/mcp',
      epoch: 1,
      principal: principalHash('alice'),
      tag: 'tg',
      version: '2025-11-25',
      init: JSON.stringify({ protocolVersion: '2025-11-25', clientInfo: { name: 'c', version: '1' } }),
    };
    await d.register('S1', entry);
    assert.deepEqual(await d.lookup('S1'), entry);
    const ttl = await link.send(['PTTL', keys.session('S1')]);
    assert.ok(typeof ttl === 'number' && ttl > 4_000 && ttl <= 5_000, `TTL ${ttl}`);
    assert.notEqual(entry.principal, 'alice');
    assert.equal(principalHash(undefined), '');
    assert.equal(await d.lookup('nope'), undefined);
    await link.send(['PEXPIRE', keys.session('S1'), '100']);
    assert.deepEqual(await d.touch(['S1', 'gone']), ['gone'], 'touch reports entries that vanished');
    const ttl2 = await link.send(['PTTL', keys.session('S1')]);
    assert.ok(typeof ttl2 === 'number' && ttl2 > 4_000);
    // Oversized initialize params are not kept (bounded memory per session).
    await d.register('S2', { ...entry, init: 'x'.repeat(5_000) });
    assert.equal((await d.lookup('S2'))?.init, '');
    await d.remove('S1');
    assert.equal(await d.lookup('S1'), undefined);
  });

  test('lease: held, seen alive by peers, re-registered after a Redis restart, released on stop', async () => {
    let reRegistered = 0;
    const lease = new Lease(link, {
      incarnation: 'incL',
      address: 'http://a',
      leaseMs: 600,
      onReRegister: () => reRegistered++,
    });
    await lease.start();
    try {
      assert.equal(lease.state, 'held');
      assert.equal(await lease.isAlive('incL'), true);
      assert.equal(await lease.isAlive('someone-else'), false);
      const slept = Date.now();
      await sleep(700);
      // What a failure here needs to be read: the lease's own view, and how late the sleep woke (a
      // stall of the process longer than a third of the lease skips refreshes).
      assert.equal(
        await lease.isAlive('incL'),
        true,
        `refreshed before it lapsed (state ${lease.state}, ${lease.validUntil - Date.now()} ms left by its clock, re-registered ${reRegistered}x, slept ${Date.now() - slept} ms)`,
      );
      await redis.restart();
      await until(() => reRegistered === 1, 5_000, 're-registration after the restart');
      assert.equal(await lease.isAlive('incL'), true);
      assert.equal(lease.state, 'held');
      await lease.stop();
      assert.equal(await lease.isAlive('incL'), false, 'stop() gives the lease up at once');
    } finally {
      // Whatever failed above, this lease must not go on refreshing into the next test's count.
      await lease.stop();
    }
  });

  test('lease: others() counts the peers whose lease holds, not itself, not a stopped or lapsed one', async () => {
    const mk = (inc: string, leaseMs: number): Lease =>
      new Lease(link, { incarnation: inc, address: `http://${inc}`, leaseMs, onReRegister: () => undefined });
    const a = mk('cntA', 60_000);
    const b = mk('cntB', 60_000);
    const short = mk('cntC', 300);
    await a.start();
    assert.equal(await a.others(), 0, 'alone');
    await b.start();
    await short.start();
    assert.equal(await a.others(), 2);
    assert.equal(await b.others(), 2);
    await b.stop();
    assert.equal(await a.others(), 1, 'a stopped peer leaves at once');
    // A peer that dies without stop(): its lease ends and it is no longer counted.
    await short.stop();
    await link.send(['ZADD', keys.members, String(Date.now() + 300), 'cntC']);
    assert.equal(await a.others(), 1);
    await sleep(400);
    assert.equal(await a.others(), 0, 'a lapsed peer is not counted');
    await a.stop();
    assert.equal(await link.send(['ZSCORE', keys.members, 'cntA']), null, 'stop() leaves the set');
    // A member that ended a lease ago or more is removed by the next count.
    const c = mk('cntD', 60_000);
    await link.send(['ZADD', keys.members, String(Date.now() - 60_001), 'cntC']);
    await c.start();
    assert.equal(await c.others(), 0);
    assert.equal(await link.send(['ZSCORE', keys.members, 'cntC']), null, 'the dead member is swept');
    await c.stop();
  });

  test('lease: a refresh that cannot reach Redis reports refresh-failing, then lapsed', async () => {
    let failing = true;
    const flaky: RedisLink = {
      send: (a) =>
        failing && a[0] === 'SET' && a.includes('XX') ? Promise.reject(new Error('down')) : link.send(a),
      close: async () => undefined,
    };
    let now = 1_000_000;
    const lease = new Lease(flaky, {
      incarnation: 'incF',
      address: 'http://f',
      leaseMs: 60_000,
      onReRegister: () => undefined,
      now: () => now,
    });
    await lease.start();
    await lease.refresh();
    assert.equal(lease.state, 'refresh-failing');
    now += 61_000;
    await lease.refresh();
    assert.equal(lease.state, 'lapsed');
    failing = false;
    await lease.refresh();
    assert.equal(lease.state, 'held');
    await lease.stop();
  });

  test('replica: one script call per stream per tick, replay after a cursor, GET stream never copied', async () => {
    const counting = new CountingLink(link);
    const r = new EventReplica(counting, LIMITS);
    for (let s = 1; s <= 200; s++) r.append('R1', 1, s, frame(s));
    for (let s = 1; s <= 50; s++) r.append('R1', 0, s, frame(s));
    r.append('R1', 2, 1, frame(1));
    await r.flush();
    const evals = (counting.counts.get('EVALSHA') ?? 0) + (counting.counts.get('EVAL') ?? 0);
    assert.ok(evals <= 4, `200 + 1 frames on two streams in one tick: ${evals} script calls`);
    const got = await r.replay('R1', 1, 150);
    assert.equal(got.status, 'ok');
    if (got.status !== 'ok') return;
    assert.deepEqual(
      got.events.map((e) => e.seq),
      Array.from({ length: 50 }, (_, i) => 151 + i),
    );
    assert.equal(got.events[0]?.frame, frame(151));
    assert.equal(got.finished, false);
    assert.deepEqual(await r.replay('R1', 0, 0), { status: 'unknown' }, 'stream 0 is not copied');
    assert.deepEqual(
      await r.replay('R1', 1, 201),
      { status: 'ahead', finished: false, requests: '' },
      'a cursor past the copy',
    );
    assert.deepEqual(await r.replay('R1', 9, 0), { status: 'unknown' });
    r.dropSession('R1');
    await r.flush();
    await until(() => r.stats.bytes === 0, 1_000, 'bytes released');
    assert.deepEqual(
      await link.send(['KEYS', 'sl:{R1}*']),
      [],
      'dropSession deletes every key of the session',
    );
  });

  test('replica: a re-sent append is a no-op; a batch after a lost one restarts the copy (gap → evicted)', async () => {
    const counting = new CountingLink(link);
    const r = new EventReplica(counting, LIMITS);
    counting.duplicate = true;
    for (let s = 1; s <= 5; s++) r.append('R2', 1, s, frame(s));
    await r.flush();
    counting.duplicate = false;
    assert.equal(await framesHeld('R2', 1), 5, 'the duplicate call stored nothing');
    // Frames 6..8 are lost (Redis failed that tick); 9.. arrive next.
    const lossy: RedisLink = { send: () => Promise.reject(new Error('down')), close: async () => undefined };
    const r2 = new EventReplica(lossy, LIMITS);
    for (let s = 6; s <= 8; s++) r2.append('R2', 1, s, frame(s));
    await r2.flush();
    assert.equal(r2.stats.framesLost, 3);
    for (let s = 9; s <= 10; s++) r.append('R2', 1, s, frame(s));
    await r.flush();
    assert.equal(r.stats.restarts, 1);
    assert.deepEqual(
      await r.replay('R2', 1, 3),
      { status: 'evicted' },
      'a replay across the hole is refused',
    );
    const ok = await r.replay('R2', 1, 8);
    assert.equal(ok.status, 'ok');
    if (ok.status === 'ok')
      assert.deepEqual(
        ok.events.map((e) => e.seq),
        [9, 10],
      );
    r.dropSession('R2');
    await r.flush();
  });

  test('replica: count and byte bounds trim the oldest frames; endStream keeps the copy for the grace only', async () => {
    const r = new EventReplica(link, { ...LIMITS, maxCount: 10, maxBytes: 10 * 1024 });
    for (let s = 1; s <= 25; s++) r.append('R3', 1, s, frame(s));
    await r.flush();
    assert.equal(await framesHeld('R3', 1), 10);
    assert.deepEqual(await r.replay('R3', 1, 10), { status: 'evicted' });
    const tail = await r.replay('R3', 1, 15);
    assert.equal(tail.status, 'ok');
    if (tail.status === 'ok') assert.equal(tail.events.length, 10);
    // Bytes: 2 KiB frames, 10 KiB per stream → at most 5 kept.
    for (let s = 1; s <= 8; s++) r.append('R3', 2, s, frame(s, 2048));
    await r.flush();
    assert.ok((await framesHeld('R3', 2)) <= 5);
    r.describe('R3', 1, ['a', 7]);
    r.endStream('R3', 1, 300);
    await r.flush();
    const fin = await r.replay('R3', 1, 24);
    assert.equal(fin.status, 'ok');
    if (fin.status === 'ok') {
      assert.equal(fin.finished, true);
      assert.equal(fin.requests, '["a",7]');
    }
    const pttl = await link.send(['PTTL', keys.streamList('R3', 1)]);
    assert.ok(typeof pttl === 'number' && pttl > 0 && pttl <= 300, `grace TTL ${pttl}`);
    await sleep(400);
    assert.deepEqual(await r.replay('R3', 1, 24), { status: 'unknown' }, 'gone after the grace period');
    r.dropSession('R3');
    await r.flush();
  });

  test('replica: a burst past the bounds in one tick sends only the window it keeps, and is no restart', async () => {
    const counting = new CountingLink(link);
    const r = new EventReplica(counting, { ...LIMITS, maxCount: 50 });
    for (let s = 1; s <= 10; s++) r.append('R5', 1, s, frame(s));
    await r.flush();
    const before = counting.args;
    // 10 stored; 11..3010 arrive in one tick: only the last 50 can be kept.
    for (let s = 11; s <= 3_010; s++) r.append('R5', 1, s, frame(s));
    await r.flush();
    assert.ok(counting.args - before < 100, `arguments sent for the burst: ${counting.args - before}`);
    assert.equal(r.stats.restarts, 0, 'frames skipped by the sender are not a lost batch');
    assert.equal(await framesHeld('R5', 1), 50);
    assert.deepEqual(await r.replay('R5', 1, 2_959), { status: 'evicted' });
    const tail = await r.replay('R5', 1, 2_960);
    assert.equal(tail.status, 'ok');
    if (tail.status === 'ok') {
      assert.deepEqual(
        tail.events.map((e) => e.seq),
        Array.from({ length: 50 }, (_, i) => 2_961 + i),
      );
      assert.equal(tail.events[49]?.frame, frame(3_010));
    }
    // The copy goes on from there frame by frame, trimmed by count.
    for (let s = 3_011; s <= 3_020; s++) r.append('R5', 1, s, frame(s));
    await r.flush();
    assert.equal(await framesHeld('R5', 1), 50);
    const next = await r.replay('R5', 1, 3_000);
    assert.equal(next.status, 'ok');
    if (next.status === 'ok') assert.equal(next.events.length, 20);
    assert.deepEqual(await r.replay('R5', 1, 2_969), { status: 'evicted' });
    r.dropSession('R5');
    await r.flush();
  });

  test('replica: the budget frees the oldest finished streams first, never live ones', async () => {
    const r = new EventReplica(link, { ...LIMITS, budgetBytes: 20_000 });
    for (let n = 1; n <= 3; n++) {
      for (let s = 1; s <= 8; s++) r.append('R4', n, s, frame(s, 1000));
      r.endStream('R4', n, 60_000);
    }
    await r.flush();
    for (let s = 1; s <= 8; s++) r.append('R4', 4, s, frame(s, 1000)); // live
    await r.flush();
    await until(() => r.stats.budgetFreed >= 1, 1_000, 'budget enforcement');
    await sleep(50);
    assert.deepEqual(
      await r.replay('R4', 1, 0),
      { status: 'unknown' },
      'the oldest finished stream was freed',
    );
    assert.equal((await r.replay('R4', 4, 0)).status, 'ok', 'the live stream is kept');
    assert.ok(r.stats.bytes <= 20_000, `within budget: ${r.stats.bytes}`);
    r.dropSession('R4');
    await r.flush();
  });

  test('secret: the first instance provisions it with SET NX, others read the same; given secrets are checked', async () => {
    await link.send(['DEL', keys.secret]);
    const a = await provisionSecret(link);
    const b = await provisionSecret(link);
    assert.equal(a, b);
    assert.ok(a.length >= 32);
    assert.equal(await provisionSecret(link, 'an offer that loses'), a, 'SET NX keeps the first key');
    assert.throws(() => checkGivenSecret('short'), /at least 16 bytes/);
    assert.equal(checkGivenSecret('0123456789abcdef'), '0123456789abcdef');
  });
});

describe('replica bounds on the sending side', () => {
  test('evictedAtOnce keeps the newest frames within count and bytes, always at least one', () => {
    const f = (n: number): string => 'x'.repeat(n);
    assert.equal(evictedAtOnce([], { maxCount: 3, maxBytes: 100 }), 0);
    assert.equal(evictedAtOnce([f(1), f(1), f(1)], { maxCount: 3, maxBytes: 100 }), 0);
    assert.equal(evictedAtOnce([f(1), f(1), f(1), f(1), f(1)], { maxCount: 3, maxBytes: 100 }), 2);
    assert.equal(evictedAtOnce([f(40), f(40), f(40)], { maxCount: 10, maxBytes: 100 }), 1);
    assert.equal(evictedAtOnce([f(40), f(500)], { maxCount: 10, maxBytes: 100 }), 1, 'the newest stays');
  });
});

describe('HMAC of forwarded requests', () => {
  const secret = 'k'.repeat(32);
  const req = { method: 'POST', sessionId: 'S', lastEventId: undefined, body: '{"jsonrpc":"2.0"}' };
  const now = 1_700_000_000_000;
  const h = signForward(secret, { ...req, from: 'B', to: 'A' }, now);

  test('a signed request verifies and names both ends, its time and its nonce', () => {
    const nonce = h.split('.')[4];
    assert.match(nonce ?? '', /^[\w-]{16}$/);
    assert.deepEqual(verifyForward(secret, h, req, now + 10), {
      ok: true,
      from: 'B',
      to: 'A',
      ts: now,
      nonce,
    });
    const again = signForward(secret, { ...req, from: 'B', to: 'A' }, now);
    assert.notEqual(again, h, 'the same request signed in the same millisecond gets another nonce');
  });
  test('any change to method, session, body, cursor, ends, time or key is refused', () => {
    const bad = (v: ReturnType<typeof verifyForward>) => assert.equal(v.ok, false);
    bad(verifyForward(secret, h, { ...req, method: 'GET' }, now));
    bad(verifyForward(secret, h, { ...req, sessionId: 'T' }, now));
    bad(verifyForward(secret, h, { ...req, body: '{}' }, now));
    bad(verifyForward(secret, h, { ...req, lastEventId: 'x' }, now));
    bad(verifyForward(secret, h.replace('.A.', '.C.'), req, now));
    bad(verifyForward(secret, h.replace('.B.', '.C.'), req, now));
    bad(verifyForward('z'.repeat(32), h, req, now));
    const parts = h.split('.');
    bad(verifyForward(secret, [...parts.slice(0, 4), 'AAAAAAAAAAAAAAAA', parts[5]].join('.'), req, now));
    assert.deepEqual(verifyForward(secret, h, req, now + FORWARD_WINDOW_MS + 1), {
      ok: false,
      reason: 'expired',
    });
    assert.deepEqual(verifyForward(secret, 'v1.a.b', req, now), { ok: false, reason: 'malformed' });
    // The nonce-less v1 form cannot be told from its replay: refused.
    const v1 = `v1.B.A.${now}.${parts[5]}`;
    assert.deepEqual(verifyForward(secret, v1, req, now), { ok: false, reason: 'malformed' });
    assert.deepEqual(verifyForward(secret, `${h}x`, req, now), { ok: false, reason: 'bad-signature' });
  });
  test('a body-less request (GET, DELETE) is bound to its empty body like any other', () => {
    // The empty body's digest is a precomputed constant: it must still be the SHA-256 of '' and
    // still be covered, so a body slipped into a signed GET is refused.
    assert.equal(bodyDigest(''), createHash('sha256').update('').digest('base64url'));
    const get = { method: 'GET', sessionId: 'S', lastEventId: 'c1', body: '' };
    const g = signForward(secret, { ...get, from: 'B', to: 'A' }, now);
    assert.equal(verifyForward(secret, g, get, now).ok, true);
    assert.equal(verifyForward(secret, g, { ...get, body: '{}' }, now).ok, false);
    assert.equal(verifyForward(secret, g, { ...get, method: 'DELETE' }, now).ok, false);
    assert.equal(verifyForward(secret, h, { ...req, body: '' }, now).ok, false);
  });
  test('the header is byte for byte the v2 form members of earlier releases sign and check', () => {
    // A rolling upgrade runs both releases side by side: a change to how forward-auth.ts computes
    // the signature (a cached key object, a one-shot digest, tried 2026-12-08) must not change a
    // byte. Computed here the plain way, from the string key.
    const nonce = 'n0nce-n0nce-1234';
    const plain = (key: string, method: string, body: string, cursor: string) =>
      createHmac('sha256', key)
        .update(
          `v2\n${method}\nS\nB\nA\n${now}\n${nonce}\n${cursor}\n${createHash('sha256').update(body).digest('base64url')}`,
        )
        .digest('base64url');
    const other = 'é'.repeat(20); // a key outside ASCII: UTF-8 both ways
    for (const [key, method, body, cursor] of [
      [secret, 'POST', req.body, ''],
      [other, 'POST', '{"text":"ünïcode ✓"}', ''],
      [secret, 'GET', '', 'c1'],
      [other, 'DELETE', '', ''],
      [secret, 'POST', 'x'.repeat(100_000), ''],
    ] as const) {
      const signed = signForward(
        key,
        { method, sessionId: 'S', from: 'B', to: 'A', lastEventId: cursor || undefined, body },
        now,
        nonce,
      );
      const theirs = `v2.B.A.${now}.${nonce}.${plain(key, method, body, cursor)}`;
      assert.equal(signed, theirs);
      // And a header signed the plain way verifies with its key only (the keys alternate).
      const want = { method, sessionId: 'S', lastEventId: cursor || undefined, body };
      assert.equal(verifyForward(key, theirs, want, now).ok, true);
      assert.equal(verifyForward(key === secret ? other : secret, theirs, want, now).ok, false);
    }
  });
});

describe('replay guard of the hop', () => {
  const W = FORWARD_WINDOW_MS;
  const t0 = 1_700_000_000_000;
  /** A nonce as signForward makes them: 16 base64url characters. */
  const N = (name: string): string => name.padStart(16, 'A');

  test('a signature is fresh once, replayed after, until its window ends', () => {
    const g = new ReplayGuard(10);
    assert.equal(g.admit('B', t0, N('n1'), t0), 'fresh');
    assert.equal(g.admit('B', t0, N('n1'), t0 + 5), 'replayed');
    assert.equal(g.admit('C', t0, N('n2'), t0 + 5), 'fresh', 'another nonce');
    assert.equal(g.admit('B', t0, N('n1'), t0 + W), 'replayed', 'still inside the window');
    assert.equal(g.replayed, 2);
    // Past the window the entries are dropped (verifyForward refuses such a signature as expired).
    assert.equal(g.admit('B', t0 + W + 1, N('n3'), t0 + W + 1), 'fresh');
    assert.equal(g.size, 1);
  });

  test("bounded: beyond capacity the oldest goes, and its peer's older signatures are crowded, never fresh", () => {
    const g = new ReplayGuard(3);
    for (let i = 0; i < 3; i++) assert.equal(g.admit('B', t0 + i, N(`b${i}`), t0 + i), 'fresh');
    assert.equal(g.admit('B', t0 + 3, N('b3'), t0 + 3), 'fresh');
    assert.equal(g.size, 3);
    // b0 was dropped: its replay cannot be recognised by its nonce any more; the floor refuses it.
    assert.equal(g.admit('B', t0, N('b0'), t0 + 4), 'crowded');
    // Another peer's clock is its own: its signatures are not held to B's floor.
    assert.equal(g.admit('C', t0 - 5_000, N('c0'), t0 + 4), 'fresh');
    assert.equal(g.admit('B', t0 + 4, N('b4'), t0 + 4), 'fresh', 'newer than the floor');
    assert.equal(g.crowded, 1);
    assert.ok(g.size <= 3);
  });
});
