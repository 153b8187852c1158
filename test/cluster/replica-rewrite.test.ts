/**
 * The stream copies written again after a failover (cluster/replica.ts `rewrite`): the promoted
 * replica may lack the last writes of any copy (asynchronous replication), and the copy is what a
 * resume reads after its owner died. Streams are copied through a link that records every command
 * Redis answered; then, for every cut of that record, Redis is emptied and given only the commands
 * before the cut, and the replica writes its copies again from the owner's own buffer (the
 * MemoryEventStore its frames went to). Each cut must end with every copy answering every cursor
 * exactly as the whole run's copy did: the frames, `evicted` below the bounds, the finished flag,
 * the requests. Then the wiring: a cluster on a caller's link that reports a failover writes a
 * server's copy back.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { keys } from '../../src/cluster/keys.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { EventReplica, type ReplicaLimits, type ReplicaReplay } from '../../src/cluster/replica.js';
import { MemoryEventStore } from '../../src/events/memory-event-store.js';
import { TeeEventStore } from '../../src/events/tee-event-store.js';
import { type ProgressEvent, ProgressJson } from '../../src/jsonrpc/progress-json.js';
import { encodeJsonFrame } from '../../src/sse/encode.js';
import { encodeSeq, eventIdPrefix } from '../../src/sse/event-id.js';
import { copyToLose, FailoverLink, failoverServer, redisForDescribe } from '../helpers/failover-link.js';

const LIMITS: ReplicaLimits = { maxCount: 40, maxBytes: 1 << 20, maxAgeMs: 60_000, budgetBytes: 1 << 24 };
const GRACE_MS = 45_000;

/** A stream's frames: progress runs (kept as values in the copy) with a log message every `every`. */
function frames(sid: string, stream: number, from: number, to: number, every: number) {
  const pj = new ProgressJson();
  const prefix = eventIdPrefix(sid.slice(0, 10).padEnd(10, 'x'), stream);
  const out: { seq: number; frame: string; progress: ProgressEvent | undefined }[] = [];
  for (let seq = from; seq <= to; seq++) {
    const id = prefix + encodeSeq(seq);
    if (seq % every === 0) {
      const json = JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { data: `m${seq}` },
      });
      out.push({ seq, frame: encodeJsonFrame(id, json), progress: undefined });
      continue;
    }
    const e = pj.read({
      method: 'notifications/progress',
      params: { progressToken: 't', progress: seq, total: 999 },
    });
    assert.ok(e !== undefined);
    out.push({ seq, frame: encodeJsonFrame(id, e.json), progress: e });
  }
  return out;
}

/** What each stream's copy answers at every cursor, and its TTL class (live or within the grace). */
async function readAll(
  r: EventReplica,
  link: RedisLink,
  streams: readonly (readonly [string, number, number])[],
): Promise<string[]> {
  const out: string[] = [];
  for (const [sid, n, last] of streams) {
    for (let c = 0; c <= last + 1; c++) {
      const got: ReplicaReplay = await r.replay(sid, n, c);
      out.push(`${sid}/${n}@${c} ${JSON.stringify(got)}`);
    }
    const ttl = Number(await link.send(['PTTL', keys.streamMeta(sid, n)]));
    out.push(`${sid}/${n} ttl ${ttl > 0 && ttl <= GRACE_MS ? 'grace' : ttl > GRACE_MS ? 'live' : ttl}`);
  }
  return out;
}

describe('stream copies: written again after a failover, at every cut of what Redis had', () => {
  const { available, connect } = redisForDescribe();
  if (!available) return;

  /** Four streams written over several ticks: finished, past the bounds, short, described only. */
  async function setUp() {
    const admin = await connect();
    await admin.send(['FLUSHALL']);
    const log: string[][] = [];
    const link = new FailoverLink(await connect(), log);
    const replica = new EventReplica(link, LIMITS, { chunkFrames: 8, progressDelayMs: 1 });
    const store = new MemoryEventStore({ limits: LIMITS });
    const tee = new TeeEventStore(store, {
      replicate: (sid, n, seq, frame, progress) => replica.append(sid, n, seq, frame, progress),
      streamEnded: (sid, n, graceMs) => replica.endStream(sid, n, graceMs),
    });
    const write = async (sid: string, n: number, from: number, to: number, every: number) => {
      for (const e of frames(sid, n, from, to, every)) await tee.append(sid, n, e);
      await replica.flush();
    };
    replica.describe('S1', 1, [7]);
    await write('S1', 1, 1, 12, 5);
    replica.describe('S1', 2, ['a', 'b']);
    await write('S1', 2, 1, 30, 7);
    await write('S2', 1, 1, 4, 2);
    await write('S1', 1, 13, 26, 5);
    await tee.endStream('S1', 1, GRACE_MS);
    await replica.flush();
    const beforeTail = log.length;
    await write('S1', 2, 31, 70, 9);
    replica.describe('S2', 3, [3]);
    await replica.flush();
    await write('S2', 1, 5, 6, 2);
    link.stopRecording();
    const streams = [
      ['S1', 1, 26],
      ['S1', 2, 70],
      ['S2', 1, 6],
      ['S2', 3, 0],
    ] as const;
    const whole = await readAll(replica, admin, streams);
    return { admin, log, replica, store, tee, streams, whole, beforeTail };
  }

  async function cutAt(s: Awaited<ReturnType<typeof setUp>>, k: number, rewrite: boolean): Promise<string[]> {
    await s.admin.send(['FLUSHALL']);
    for (const c of s.log.slice(0, k)) await s.admin.send(c);
    if (rewrite) await s.replica.rewrite((sid, n) => s.store.replay(sid, n, 0, { allowGap: true }));
    return readAll(s.replica, s.admin, s.streams);
  }

  test('every cut ends with each copy answering as the whole run did', async () => {
    const s = await setUp();
    assert.ok(s.log.length >= 8, `the run wrote in several steps (${s.log.length} commands)`);
    assert.ok(
      s.whole.some((l) => l.includes('"evicted"')),
      'the long stream went past the bounds',
    );
    for (let k = 0; k <= s.log.length; k++) {
      const got = await cutAt(s, k, true);
      assert.deepEqual(
        got,
        s.whole,
        `cut ${k} of ${s.log.length}: ${JSON.stringify(s.log[k])?.slice(0, 120)}`,
      );
    }
    assert.equal(s.replica.stats.rewritten, 4 * (s.log.length + 1), 'each copy written again at each cut');
    // The copies of a session that ended are not written again.
    s.store.dropSession('S2');
    s.replica.dropSession('S2');
    const before = s.replica.stats.rewritten;
    await s.replica.rewrite((sid, n) => s.store.replay(sid, n, 0, { allowGap: true }));
    assert.equal(s.replica.stats.rewritten - before, 2, 'only the two streams of S1');
  });

  test('a live batch that reached the promoted replica before the rewrite: the copy is the owner buffer still', async () => {
    const s = await setUp();
    // The replica lost S1/2's frames 31..70; the next live frames arrive first (a client library's
    // queue sent on reconnect), so the copy restarts at them, and only then is it written again.
    await s.admin.send(['FLUSHALL']);
    for (const c of s.log.slice(0, s.beforeTail)) await s.admin.send(c);
    for (const e of frames('S1', 2, 71, 75, 9)) await s.tee.append('S1', 2, e);
    await s.replica.flush();
    assert.equal(s.replica.stats.restarts, 1, 'the live batch found the copy behind');
    assert.deepEqual(await s.replica.replay('S1', 2, 60), { status: 'evicted' }, 'a hole before the rewrite');
    await s.replica.rewrite((sid, n) => s.store.replay(sid, n, 0, { allowGap: true }));
    const own = s.store.replay('S1', 2, 35);
    assert.equal(own.status, 'ok');
    const got = await s.replica.replay('S1', 2, 35);
    assert.equal(got.status, 'ok');
    if (got.status !== 'ok' || own.status !== 'ok') return;
    assert.deepEqual(
      got.events.map((e) => e.seq),
      Array.from({ length: 40 }, (_, i) => 36 + i),
    );
    assert.deepEqual(
      got.events.map((e) => e.frame),
      own.events.map((e) => e.frame),
    );
    assert.equal(got.requests, '["a","b"]');
    assert.deepEqual(
      await s.replica.replay('S1', 2, 34),
      { status: 'evicted' },
      'below the bounds, as before',
    );
  });

  test('a session that ends while its copies are read for the rewrite is not written back', async () => {
    const s = await setUp();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // A store that answers later (an application's networked store): S1, whose copies come first,
    // ends before it does.
    const rewrite = s.replica.rewrite(async (sid, n) => {
      await gate;
      return s.store.replay(sid, n, 0, { allowGap: true });
    });
    s.replica.dropSession('S1');
    await s.replica.flush();
    release();
    await rewrite;
    assert.deepEqual(await s.admin.send(['KEYS', 'sl:{S1}*']), [], 'the ended session has no copy');
    const left = ((await s.admin.send(['KEYS', 'sl:{S2}:m3:*'])) as string[]).sort();
    assert.deepEqual(left, [keys.streamMeta('S2', 1), keys.streamMeta('S2', 3)], "S2's copies are there");
  });

  test('without the rewrite, a cut loses what Redis acknowledged (what the test above would catch)', async () => {
    const s = await setUp();
    const got = await cutAt(s, Math.floor(s.log.length / 2), false);
    assert.notDeepEqual(got, s.whole);
  });

  test("a caller's link that reports a failover: the cluster writes a server's stream copy back", async () => {
    const { admin, own, cluster, node } = await failoverServer(connect);
    try {
      const copy = await copyToLose(node.url, admin);
      // What a promoted replica may lack: the whole copy.
      assert.equal(await admin.send(['DEL', ...copy.names]), 2);
      own.failOver();
      await copy.check();
      assert.equal(cluster.stats().replica.rewritten, 1);
    } finally {
      await node.close();
    }
  });
});
