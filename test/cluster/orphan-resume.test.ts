// Resumes served from a stream's Redis copy after its owner is gone: a finished stream replays; an
// unfinished one of a dead owner ends with an owner-lost error per unanswered request, also when the
// client holds frames the copy never got; an owner that may be alive is left alone (the caller 503s).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import { resumeFromCopy } from '../../src/cluster/orphan-resume.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { EventReplica } from '../../src/cluster/replica.js';
import { newEventTag } from '../../src/core/era-2025/ids.js';
import type { Headers, ResponseSink } from '../../src/core/pipeline/sink.js';
import { encodeJsonFrame } from '../../src/sse/encode.js';
import { encodeEventId } from '../../src/sse/event-id.js';
import { findRedis, type Redis, startRedis } from '../helpers/redis.js';

class MemorySink implements ResponseSink {
  status = 0;
  headers: Headers = {};
  body = '';
  closed = false;
  respond(status: number, headers: Headers, body: string): void {
    this.status = status;
    this.headers = headers;
    this.body = body;
  }
  head(status: number, headers: Headers): void {
    this.status = status;
    this.headers = headers;
  }
  write(chunk: string): boolean {
    this.body += chunk;
    return true;
  }
  end(last?: string): void {
    this.body += last ?? '';
  }
  destroy(): void {}
  onDrain(): void {}
  onClose(): void {}
  /** The JSON-RPC messages of the SSE body. */
  messages(): { id?: unknown; error?: { code: number; data?: { reason?: string } }; result?: unknown }[] {
    return this.body
      .split('\n')
      .filter((l) => l.startsWith('data: ') && l.length > 6)
      .map((l) => JSON.parse(l.slice(6)));
  }
}

const TAG = newEventTag();
const OTHER = newEventTag();
const frameOf = (seq: number, msg: object) =>
  encodeJsonFrame(encodeEventId(TAG, 1, seq), JSON.stringify(msg));
const progress = (n: number) => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progress: n },
});

describe('resume from the Redis copy', {
  skip: findRedis() ? false : 'SKIPPED: redis-server not installed — .ci/run installs it',
}, () => {
  let redis: Redis;
  let link: RedisLink;
  let replica: EventReplica;
  before(async () => {
    redis = await startRedis();
    link = await connectNodeRedis({ url: redis.url });
    replica = new EventReplica(link, {
      maxCount: 100,
      maxBytes: 1 << 20,
      maxAgeMs: 60_000,
      budgetBytes: 1 << 24,
    });
  });
  after(async () => {
    await link?.close();
    await redis?.stop();
  });

  async function stream(sid: string, frames: string[], requests: (string | number)[], finished: boolean) {
    replica.describe(sid, 1, requests);
    for (const [i, f] of frames.entries()) replica.append(sid, 1, i + 1, f);
    if (finished) replica.endStream(sid, 1, 60_000);
    await replica.flush();
  }

  test('unfinished stream, dead owner: replay after the cursor, then owner-lost for each unanswered request', async () => {
    await stream(
      'S1',
      [frameOf(1, progress(1)), frameOf(2, progress(2)), frameOf(3, { jsonrpc: '2.0', id: 'b', result: {} })],
      ['a', 'b', 7],
      false,
    );
    const sink = new MemorySink();
    const out = await resumeFromCopy(replica, sink, {}, 'S1', TAG, encodeEventId(TAG, 1, 1), false);
    assert.equal(out, 'owner-lost');
    assert.equal(sink.status, 200);
    const m = sink.messages();
    assert.deepEqual(
      m.map((x) => x.id ?? 'progress'),
      ['progress', 'b', 'a', 7],
    );
    assert.equal(m[2]?.error?.code, -32603);
    assert.equal(m[2]?.error?.data?.reason, 'owner-lost');
    // The synthesized frames carry the next event ids of the stream.
    assert.ok(sink.body.includes(`id: ${encodeEventId(TAG, 1, 4)}\n`));
  });

  test('the client is ahead of the copy (frames not yet copied when the owner died): still a definite end', async () => {
    await stream('S2', [frameOf(1, progress(1))], ['x'], false);
    const sink = new MemorySink();
    assert.equal(
      await resumeFromCopy(replica, sink, {}, 'S2', TAG, encodeEventId(TAG, 1, 9), false),
      'owner-lost',
    );
    assert.deepEqual(
      sink.messages().map((x) => [x.id, x.error?.data?.reason]),
      [['x', 'owner-lost']],
    );
  });

  test('unfinished stream, owner maybe alive: nothing written (the caller answers 503)', async () => {
    await stream('S3', [frameOf(1, progress(1))], ['x'], false);
    for (const alive of [true, undefined]) {
      const sink = new MemorySink();
      assert.equal(
        await resumeFromCopy(replica, sink, {}, 'S3', TAG, encodeEventId(TAG, 1, 0), alive),
        'not-here',
      );
      assert.equal(sink.status, 0);
    }
  });

  test('finished stream: replayed whatever the owner state; foreign tag, GET stream, unknown stream: not here', async () => {
    await stream(
      'S4',
      [frameOf(1, progress(1)), frameOf(2, { jsonrpc: '2.0', id: 'r', result: {} })],
      ['r'],
      true,
    );
    const sink = new MemorySink();
    assert.equal(
      await resumeFromCopy(replica, sink, {}, 'S4', TAG, encodeEventId(TAG, 1, 1), true),
      'served',
    );
    assert.deepEqual(
      sink.messages().map((x) => x.id),
      ['r'],
    );
    const no = new MemorySink();
    assert.equal(
      await resumeFromCopy(replica, no, {}, 'S4', TAG, encodeEventId(OTHER, 1, 1), false),
      'not-here',
    );
    assert.equal(
      await resumeFromCopy(replica, no, {}, 'S4', TAG, encodeEventId(TAG, 0, 1), false),
      'not-here',
    );
    assert.equal(
      await resumeFromCopy(replica, no, {}, 'S9', TAG, encodeEventId(TAG, 1, 1), false),
      'not-here',
    );
    assert.equal(no.status, 0);
  });
});
