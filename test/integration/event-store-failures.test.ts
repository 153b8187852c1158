// The async EventStore contract made safe: a networked store (Redis) rejects, throws and is slow.
// Each test drives a real server through a store that fails on command and checks that the
// process survives, the failure is counted, the live stream keeps flowing, and no gap is served.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { EventStore, ReplayResult, StoredEvent } from '../../src/events/event-store.js';
import { MemoryEventStore } from '../../src/events/memory-event-store.js';
import { JsonRpcCode as C } from '../../src/jsonrpc/codes.js';
import { parseEventId } from '../../src/sse/event-id.js';
import { withDeadline } from '../helpers/deadline.js';
import { assertRefusal, RawSession, sleep, toolCall, until } from '../helpers/http.js';
import { startServer } from '../helpers/test-server.js';

type Mode = 'ok' | 'reject' | 'throw';

/** A store in front of the memory store whose every operation can be made to fail or lag. */
class FaultyStore implements EventStore {
  readonly inner = new MemoryEventStore();
  append_: Mode = 'ok';
  replay_: Mode = 'ok';
  end_: Mode = 'ok';
  drop_: Mode = 'ok';
  /** Appends resolve (and only then land in the inner store) this many ms later. */
  appendDelayMs = 0;
  /** Appends of these seqs resolve but are silently not stored (a store that loses writes). */
  readonly lose = new Set<number>();
  /** When set, only appends whose seq passes this test are failed by append_. */
  failSeq: ((seq: number) => boolean) | undefined;

  append(sessionId: string, streamId: number, event: StoredEvent): void | Promise<void> {
    const failing = this.append_ !== 'ok' && (this.failSeq === undefined || this.failSeq(event.seq));
    if (failing && this.append_ === 'throw') throw new Error('append: store down');
    if (failing) return Promise.reject(new Error('append: store down'));
    if (this.lose.has(event.seq)) return Promise.resolve();
    if (this.appendDelayMs === 0) return this.inner.append(sessionId, streamId, event);
    return sleep(this.appendDelayMs).then(() => this.inner.append(sessionId, streamId, event));
  }
  replay(sessionId: string, streamId: number, afterSeq: number, options?: { allowGap?: boolean }) {
    if (this.replay_ === 'throw') throw new Error('replay: store down');
    if (this.replay_ === 'reject') return Promise.reject(new Error('replay: store down'));
    return Promise.resolve<ReplayResult>(this.inner.replay(sessionId, streamId, afterSeq, options));
  }
  endStream(sessionId: string, streamId: number, graceMs: number): void | Promise<void> {
    if (this.end_ === 'throw') throw new Error('endStream: store down');
    if (this.end_ === 'reject') return Promise.reject(new Error('endStream: store down'));
    this.inner.endStream(sessionId, streamId, graceMs);
  }
  dropSession(sessionId: string): void | Promise<void> {
    if (this.drop_ === 'throw') throw new Error('dropSession: store down');
    if (this.drop_ === 'reject') return Promise.reject(new Error('dropSession: store down'));
    this.inner.dropSession(sessionId);
  }
}

function progressValues(messages: readonly { method?: string; params?: { progress?: number } }[]): number[] {
  return messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params?.progress ?? -1);
}

async function setup(store: FaultyStore, logs?: string[]) {
  const srv = await startServer({
    eventStore: store,
    mode: 'sse',
    keepaliveMs: 0,
    ...(logs === undefined
      ? {}
      : {
          logger: {
            info: () => undefined,
            warn: (e: string, f?: Record<string, unknown>) => logs.push(`${e} ${JSON.stringify(f)}`),
            error: (e: string) => logs.push(e),
          },
        }),
  });
  after(() => srv.close());
  const s = new RawSession(srv.url);
  await s.init();
  return { srv, s };
}

describe('EventStore failures: replay', () => {
  for (const mode of ['reject', 'throw'] as const) {
    test(`a replay that ${mode}s answers the resume 503 and the live POST stream keeps flowing`, async () => {
      const store = new FaultyStore();
      const { srv, s } = await setup(store);
      const post = await s.postOpen(toolCall('progress', { n: 20, delayMs: 15 }, 'p1', 'tok'));
      await post.waitFor((r) => progressValues(r.messages()).length >= 2, 3_000, 'first progress events');
      const cursor = post.events[0]?.id; // behind the live position: the resume must read the store
      assert.ok(cursor !== undefined);
      store.replay_ = mode;
      const g = await s.get({ 'last-event-id': cursor });
      assertRefusal(g, 503, C.ServerError, 'store-unavailable');
      assert.equal(g.headers['retry-after'], '1');
      // The live stream must not be stalled by the failed read: every event and the result arrive.
      await post.waitMessage((m) => m.id === 'p1', 5_000, 'the result on the live stream');
      assert.deepEqual(
        progressValues(post.messages()),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      await post.finished(2_000, 'the POST stream ends after its result');
      assert.equal(srv.stats().eventStore.errors.replay, 1);
    });
  }

  test('a replay that rejects for a finished stream answers 503, not 500', async () => {
    const store = new FaultyStore();
    const { srv, s } = await setup(store);
    const post = await s.postOpen(toolCall('progress', { n: 3, delayMs: 0 }, 'p2', 'tok'));
    await post.finished(3_000, 'POST stream');
    const cursor = post.events[0]?.id;
    assert.ok(cursor !== undefined);
    store.replay_ = 'reject';
    assertRefusal(await s.get({ 'last-event-id': cursor }), 503, C.ServerError, 'store-unavailable');
    store.replay_ = 'ok';
    const g = await s.get({ 'last-event-id': cursor });
    assert.equal(g.status, 200, 'the same resume succeeds once the store answers again');
    await g.finished(2_000, 'replay');
    assert.equal(g.messages().at(-1)?.id, 'p2');
    assert.equal(srv.stats().eventStore.errors.replay, 1);
  });

  test('a GET stream stays live while a resume of it is refused 503', async () => {
    const store = new FaultyStore();
    const { s } = await setup(store);
    const g1 = await s.get();
    await g1.waitFor((r) => r.events.length >= 1, 2_000, 'priming');
    const cursor = g1.events[0]?.id;
    assert.ok(cursor !== undefined);
    await s.post(toolCall('notify', { n: 1 }, 'n0')); // the cursor is now behind: the store is read
    await g1.waitFor((r) => r.messages().length >= 1, 2_000, 'first notification');
    store.replay_ = 'reject';
    assertRefusal(await s.get({ 'last-event-id': cursor }), 503, C.ServerError, 'store-unavailable');
    await s.post(toolCall('notify', { n: 3 }, 'n1'));
    await g1.waitFor((r) => r.messages().length >= 4, 2_000, 'notifications on the still-attached GET');
    assert.equal(g1.ended, false);
  });
});

describe('EventStore failures: append, endStream, dropSession', () => {
  for (const mode of ['reject', 'throw'] as const) {
    test(`an append that ${mode}s is counted, logged, and ends the connection with a retry hint`, async () => {
      const store = new FaultyStore();
      const logs: string[] = [];
      const { srv, s } = await setup(store, logs);
      store.append_ = mode;
      store.failSeq = (seq) => seq === 4;
      const post = await s.postOpen(toolCall('progress', { n: 10, delayMs: 10 }, 'a1', 'tok'));
      await post.finished(3_000, 'the connection is ended after the lost append');
      assert.ok(post.retries.length >= 1, 'a retry hint precedes the close');
      assert.equal(srv.stats().eventStore.errors.append, 1);
      assert.ok(
        logs.some((l) => l.startsWith('event_store.error') && l.includes('"op":"append"')),
        logs.join(),
      );
      // The client resumes from its last id. It received seq 4 live, so nothing is missing: the
      // rest of the stream, then the result, arrives with no duplicate.
      const seen = progressValues(post.messages());
      const last = post.events.at(-1)?.id;
      assert.ok(last !== undefined);
      const g = await s.get({ 'last-event-id': last });
      assert.equal(g.status, 200);
      await g.waitMessage((m) => m.id === 'a1', 3_000, 'the result after the resume');
      assert.deepEqual(
        [...seen, ...progressValues(g.messages())],
        Array.from({ length: 10 }, (_, i) => i + 1),
      );
    });
  }

  test('a resume whose cursor precedes a lost append is declined 410, never served with a hole', async () => {
    const store = new FaultyStore();
    const { srv, s } = await setup(store);
    const post = await s.postOpen(toolCall('progress', { n: 6, delayMs: 0 }, 'g1', 'tok'));
    await post.finished(3_000, 'POST stream');
    const ids = post.events.map((e) => e.id);
    const c2 = ids[1] !== undefined ? parseEventId(ids[1]) : undefined;
    assert.ok(c2 !== undefined);
    // Same stream again, but with seq 4 silently lost by the store (resolved, never stored).
    store.lose.add(4);
    const post2 = await s.postOpen(toolCall('progress', { n: 6, delayMs: 0 }, 'g2', 'tok2'));
    await post2.finished(3_000, 'POST stream 2');
    const first = post2.events[0]?.id;
    assert.ok(first !== undefined);
    assertRefusal(await s.get({ 'last-event-id': first }), 410, C.ServerError, 'resume-evicted');
    assert.equal(srv.stats().eventStore.gaps, 1);
  });

  test('a live stream whose last append was lost: the resume is declined 410 (tail check)', async () => {
    const store = new FaultyStore();
    const { srv, s } = await setup(store);
    const g1 = await s.get();
    await g1.waitFor((r) => r.events.length >= 1, 2_000, 'priming');
    const cursor = g1.events[0]?.id;
    assert.ok(cursor !== undefined);
    store.lose.add(3); // the 2nd notification on the GET stream (seq 1 is the priming event)
    await s.post(toolCall('notify', { n: 2 }, 'n2'));
    await g1.waitFor((r) => r.messages().length >= 2, 2_000, 'both notifications live');
    assertRefusal(await s.get({ 'last-event-id': cursor }), 410, C.ServerError, 'resume-evicted');
    assert.equal(srv.stats().eventStore.gaps, 1);
  });

  test('slow appends: a resume right after the events waits for them instead of missing them', async () => {
    const store = new FaultyStore();
    const { srv, s } = await setup(store);
    const g1 = await s.get();
    await g1.waitFor((r) => r.events.length >= 1, 2_000, 'priming');
    const cursor = g1.events[0]?.id;
    assert.ok(cursor !== undefined);
    store.appendDelayMs = 200;
    await s.post(toolCall('notify', { n: 5 }, 'n3'));
    await g1.waitFor((r) => r.messages().length >= 5, 2_000, 'notifications live');
    // The appends are still on their way to the store: the replay must be ordered after them.
    assert.ok(store.inner.stats().events < 6, 'the appends have not landed yet');
    const g2 = await s.get({ 'last-event-id': cursor });
    assert.equal(g2.status, 200);
    await g2.waitFor((r) => r.messages().length >= 5, 2_000, 'all five replayed');
    assert.deepEqual(
      g2.messages().map((m) => m.params?.data),
      [1, 2, 3, 4, 5].map((i) => `unrelated ${i}`),
    );
    assert.equal(srv.stats().eventStore.gaps, 0);
  });

  for (const mode of ['reject', 'throw'] as const) {
    test(`endStream and dropSession that ${mode} are counted and change nothing for the client`, async () => {
      const store = new FaultyStore();
      const { srv, s } = await setup(store);
      store.end_ = mode;
      store.drop_ = mode;
      const r = await s.post(toolCall('echo', { text: 'x' }, 'e1'));
      assert.equal(r.status, 200);
      await r.finished(2_000, 'POST');
      assert.equal(r.messages().at(-1)?.id, 'e1');
      const del = await s.delete();
      assert.equal(del.status, 204);
      await until(
        () => srv.stats().eventStore.errors.endStream >= 1 && srv.stats().eventStore.errors.dropSession === 1,
        2_000,
        'both failures counted',
      );
      // The server still serves new sessions.
      const s2 = new RawSession(srv.url);
      assert.equal((await withDeadline(s2.init(), 2_000, 'init')).status, 200);
    });
  }
});
