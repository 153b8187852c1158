// When the Redis copy is written (cluster/replica.ts): a batch of progress notifications only
// waits up to PROGRESS_COPY_DELAY_MS for more (5 ms; 400 here, so that ticks and the delay never
// overlap on a loaded machine), so a flood costs one write per few milliseconds, not one per tick;
// any other frame, a stream's request ids and its end go at the next tick, with what the stream had
// queued. Against a link that records what it is sent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTick, setTimeout as sleep } from 'node:timers/promises';
import type { RedisLink, RedisReply } from '../../src/cluster/redis-link.js';
import { EventReplica } from '../../src/cluster/replica.js';
import { ProgressJson } from '../../src/jsonrpc/progress-json.js';
import { encodeJsonFrame } from '../../src/sse/encode.js';
import { encodeSeq, eventIdPrefix } from '../../src/sse/event-id.js';

/** Records each EVALSHA's first seq and frame count; answers as the APPEND script would. */
function recordingLink(): { link: RedisLink; writes: { seq: number; count: number; at: number }[] } {
  const writes: { seq: number; count: number; at: number }[] = [];
  const link: RedisLink = {
    async send(args: readonly string[]): Promise<RedisReply> {
      if (args[0] !== 'EVALSHA') return 'OK';
      // EVALSHA sha 2 meta list seq maxCount maxBytes ttl fin reqs trimmed count packs...
      const seq = Number(args[5]);
      const count = Number(args[12]);
      writes.push({ seq, count, at: performance.now() });
      return [0, seq + count - 1, 0];
    },
    async close() {},
  };
  return { link, writes };
}

const PREFIX = eventIdPrefix('AbCdEfGhIj', 1);
const pj = new ProgressJson();
function progress(seq: number): [string, ReturnType<ProgressJson['read']>] {
  const e = pj.read({ method: 'notifications/progress', params: { progressToken: 't', progress: seq } });
  assert.ok(e !== undefined);
  return [encodeJsonFrame(PREFIX + encodeSeq(seq), e.json), e];
}
const other = (seq: number): string =>
  encodeJsonFrame(PREFIX + encodeSeq(seq), '{"jsonrpc":"2.0","method":"x"}');
const limits = { maxCount: 100, maxBytes: 1 << 20, maxAgeMs: 60_000, budgetBytes: 1 << 30 };

test('progress only: written once, within the delay, not at the next tick', async () => {
  const { link, writes } = recordingLink();
  // A delay no pair of ticks takes even on a loaded machine, so the two cases stay apart.
  const progressDelayMs = 400;
  const r = new EventReplica(link, limits, { progressDelayMs });
  const t0 = performance.now();
  for (let seq = 1; seq <= 3; seq++) r.append('S', 1, seq, ...progress(seq));
  await nextTick();
  await nextTick();
  for (let seq = 4; seq <= 6; seq++) r.append('S', 1, seq, ...progress(seq));
  assert.equal(writes.length, 0, 'nothing at the next ticks');
  const deadline = performance.now() + 10_000;
  while (writes.length === 0 && performance.now() < deadline) await sleep(20);
  assert.deepEqual(
    writes.map((w) => [w.seq, w.count]),
    [[1, 6]],
    'one write for both ticks',
  );
  assert.ok((writes[0]?.at ?? 0) - t0 >= progressDelayMs - 1, 'not before the delay');
});

test('any other frame, the request ids or the end of a stream go at the next tick, with what was queued', async () => {
  const { link, writes } = recordingLink();
  // Progress alone would wait this long (400 ms here, PROGRESS_COPY_DELAY_MS in service).
  const r = new EventReplica(link, limits, { progressDelayMs: 400 });
  r.append('S', 1, 1, ...progress(1));
  r.append('S', 1, 2, other(2));
  await nextTick();
  await nextTick();
  assert.deepEqual(
    writes.map((w) => [w.seq, w.count]),
    [[1, 2]],
  );
  r.append('S', 1, 3, ...progress(3));
  r.endStream('S', 1, 1_000);
  await nextTick();
  await nextTick();
  assert.deepEqual(
    writes.map((w) => [w.seq, w.count]),
    [
      [1, 2],
      [3, 1],
    ],
  );
  r.append('S', 2, 1, ...progress(1));
  r.describe('S', 2, [7]);
  await nextTick();
  await nextTick();
  assert.equal(writes.length, 3);
  // flush() writes a waiting progress batch at once.
  r.append('S', 3, 1, ...progress(1));
  await r.flush();
  assert.equal(writes.length, 4);
});
