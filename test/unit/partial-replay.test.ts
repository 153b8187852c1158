// Merged frames and the replay store agree: a stream of partial-output deltas written through a
// socket that blocks and drains at random (so queued deltas merge), cut at a random byte of what
// reached the wire; whatever complete event the client saw last, replaying from its id yields
// exactly the rest of the text, with counter progress (which coalesces) interleaved. 300 seeded
// runs; replay one with SLUICE_TRIAL_SEED.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { createParser } from 'eventsource-parser';
import { Counters } from '../../src/core/observe/counters.js';
import type { ResponseSink } from '../../src/core/pipeline/sink.js';
import { EventStream } from '../../src/core/stream/event-stream.js';
import { Pacer } from '../../src/core/stream/pacer.js';
import type { SseWriter } from '../../src/core/stream/sse-writer.js';
import type { StreamContext } from '../../src/core/stream/stream-context.js';
import { prng } from '../../src/demo/generate.js';
import { MemoryEventStore } from '../../src/events/memory-event-store.js';
import { PartialFrame } from '../../src/flow/partial-frame.js';
import { escapeJsonText, PARTIAL_META_KEY, PartialTemplate } from '../../src/jsonrpc/partial.js';
import { parseEventId } from '../../src/sse/event-id.js';

class BlockingSink implements ResponseSink {
  wire = '';
  blocked = false;
  closed = false;
  #drain: (() => void)[] = [];
  respond(): void {}
  head(): void {}
  write(chunk: string): boolean {
    this.wire += chunk;
    return !this.blocked;
  }
  end(last?: string): void {
    if (last !== undefined) this.wire += last;
    this.closed = true;
  }
  destroy(): void {
    this.closed = true;
  }
  onDrain(listener: () => void): void {
    this.#drain.push(listener);
  }
  onClose(): void {}
  drain(): void {
    this.blocked = false;
    for (const l of this.#drain) l();
  }
}

/** Text of the partial frames in `sse`, and the id of the last complete event. */
function read(sse: string): { text: string; lastId: string | undefined } {
  let text = '';
  let lastId: string | undefined;
  const p = createParser({
    onEvent: (e) => {
      if (e.id !== undefined) lastId = e.id;
      if (e.data === '') return;
      const m = JSON.parse(e.data) as { params: Record<string, unknown> };
      if ((m.params['_meta'] as Record<string, unknown>)?.[PARTIAL_META_KEY] !== undefined)
        text += m.params['message'] as string;
    },
  });
  p.feed(sse);
  return { text, lastId };
}

test('a resume from the last complete event of any cut replays exactly the rest (300 seeded runs)', async () => {
  const seed = Number(process.env['SLUICE_TRIAL_SEED'] ?? Date.now() % 1_000_000);
  let merged = 0;
  for (let run = 0; run < 300; run++) {
    const rand = prng(seed * 1000 + run);
    const store = new MemoryEventStore({
      limits: { maxCount: 100_000, maxBytes: 64 * 1024 * 1024, maxAgeMs: 60_000 },
    });
    const counters = new Counters(false);
    const ctx: StreamContext = {
      shared: {
        counters,
        limits: { highWaterMark: 256, maxQueueBytes: 1024 * 1024 },
        now: Date.now,
        live: new Set<SseWriter>(),
        retryMs: 1000,
        probe: undefined,
        pacer: new Pacer(0),
        streamAfterMs: 0,
        streamGraceMs: 0,
        orphanTimeoutMs: 60_000,
      },
      sessionKey: 's',
      tag: 'AbCdEfGhIj',
      store,
      priming: true,
      ended: false,
      sessionHash: 'x',
    };
    const stream = new EventStream(ctx, 1, 'post');
    const sink = new BlockingSink();
    stream.open(sink, {});
    const t = new PartialTemplate('progress', 'tok');
    const owner = {};
    let full = '';
    const n = 20 + Math.floor(rand() * 200);
    for (let i = 0; i < n; i++) {
      const delta = `w${i}${rand() < 0.1 ? '"\n' : ' '}`;
      full += delta;
      void stream.sendPartial(new PartialFrame(t, owner, undefined, i, 1, escapeJsonText(delta)));
      // Counter progress between deltas (coalescible: newest wins), which merges must not jump over.
      if (rand() < 0.15)
        void stream.send(
          `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"c","progress":${i}}}`,
          'sc',
        );
      const r = rand();
      if (r < 0.15) sink.blocked = true;
      else if (r < 0.3) sink.drain();
      else if (r < 0.4) await tick();
    }
    sink.drain();
    await tick();
    sink.drain();
    merged += counters.get('partialMerged');
    const wire = sink.wire;
    const cut = Math.floor(rand() * (wire.length + 1));
    const seen = read(wire.slice(0, cut));
    const after = seen.lastId === undefined ? 0 : (parseEventId(seen.lastId)?.seq ?? -1);
    const r = await store.replay('s', 1, after);
    assert.equal(r.status, 'ok', `run ${run} (seed ${seed})`);
    const replayed = r.status === 'ok' ? read(r.events.map((e) => e.frame).join('')).text : '';
    assert.equal(seen.text + replayed, full, `run ${run} (seed ${seed}): cut at ${cut} of ${wire.length}`);
    assert.equal(read(wire).text, full, `run ${run}: the uncut wire holds the whole text`);
  }
  assert.ok(merged > 0, 'some runs merged queued deltas');
});
