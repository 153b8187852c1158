// Races between a resume (GET + Last-Event-ID) and the end of the stream or session, with an
// EventStore whose replay answers asynchronously (the EventStore contract allows promises: Redis).
// The store computes its answer at call time and delivers it `delayMs` later, like a network store.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { EventStore, ReplayResult, StoredEvent } from '../../src/events/event-store.js';
import { MemoryEventStore } from '../../src/events/memory-event-store.js';
import { encodeEventId, parseEventId } from '../../src/sse/event-id.js';
import { withDeadline } from '../helpers/deadline.js';
import { RawSession, sleep, toolCall, until } from '../helpers/http.js';
import { startServer } from '../helpers/test-server.js';

class SlowReplayStore implements EventStore {
  readonly inner = new MemoryEventStore();
  delayMs = 0;
  #replayStarted: (() => void) | undefined;

  /** Resolves when the next replay() call begins. */
  nextReplay(): Promise<void> {
    return new Promise((resolve) => {
      this.#replayStarted = resolve;
    });
  }
  append(sessionId: string, streamId: number, event: StoredEvent): void {
    this.inner.append(sessionId, streamId, event);
  }
  async replay(
    sessionId: string,
    streamId: number,
    afterSeq: number,
    options?: { allowGap?: boolean },
  ): Promise<ReplayResult> {
    const r = this.inner.replay(sessionId, streamId, afterSeq, options);
    const started = this.#replayStarted;
    this.#replayStarted = undefined;
    started?.();
    if (this.delayMs > 0) await sleep(this.delayMs);
    return r;
  }
  endStream(sessionId: string, streamId: number, graceMs: number): void {
    this.inner.endStream(sessionId, streamId, graceMs);
  }
  dropSession(sessionId: string): void {
    this.inner.dropSession(sessionId);
  }
}

function openStreams(stats: { streams: { open: { post: number; get: number } } }): number {
  return stats.streams.open.post + stats.streams.open.get;
}

/**
 * A session whose GET stream is being resumed right now: the resume has reached the slow store
 * and waits there for `delayMs`, which leaves room to end the session in between.
 */
async function resumeInFlight(delayMs: number) {
  const store = new SlowReplayStore();
  const srv = await startServer({ eventStore: store, keepaliveMs: 0 });
  after(() => srv.close());
  const s = new RawSession(srv.url);
  await s.init();
  const g1 = await s.get();
  await g1.waitFor((r) => r.events.length >= 1, 2_000, 'priming event on the GET stream');
  const cursor = g1.events[0]?.id;
  assert.ok(cursor !== undefined);
  store.delayMs = delayMs;
  const replayStarted = store.nextReplay();
  const resumed = s.get({ 'last-event-id': cursor });
  await withDeadline(replayStarted, 2_000, 'resume reached the store');
  return { store, srv, s, resumed };
}

describe('session end while a resume is reading the event store', () => {
  test('DELETE during a standalone-stream resume: the resume is refused 404 and nothing stays open', async () => {
    const { srv, s, resumed } = await resumeInFlight(300);
    const del = await s.delete();
    assert.equal(del.status, 204);
    const g2 = await withDeadline(resumed, 3_000, 'resume answered');
    assert.equal(g2.status, 404, 'the session is gone by the time the store answers');
    assert.equal(openStreams(srv.stats()), 0, 'no SSE connection left open after the session ended');
  });

  test('handler.close() during a resume: the resume is refused 404 and no connection survives the close', async () => {
    const { srv, resumed } = await resumeInFlight(300);
    const report = await withDeadline(srv.served.handler.close(), 2_000, 'handler.close()');
    assert.equal(report.sessions, 1);
    const g2 = await withDeadline(resumed, 3_000, 'resume answered');
    assert.equal(g2.status, 404);
    assert.equal(openStreams(srv.stats()), 0, 'no SSE connection left open after close()');
  });

  test('a fresh GET queued behind a resume, session deleted meanwhile: both refused, nothing left in the store', async () => {
    const { store, srv, s, resumed } = await resumeInFlight(300);
    const g3p = s.get(); // fresh GET: queued behind the resume of the same stream
    await sleep(50);
    const del = await s.delete();
    assert.equal(del.status, 204);
    const [g2, g3] = await withDeadline(Promise.all([resumed, g3p]), 3_000, 'both GETs answered');
    assert.deepEqual([g2.status, g3.status], [404, 404]);
    assert.equal(srv.stats().sessions.active, 0);
    assert.deepEqual(
      { streams: store.inner.stats().streams, events: store.inner.stats().events },
      { streams: 0, events: 0 },
      'the ended session left nothing in the event store',
    );
  });
});

describe('a refused resume racing the response of a live POST stream', () => {
  test('the POST stream still ends after its response when a concurrent resume is declined', async () => {
    const store = new SlowReplayStore();
    const srv = await startServer({ eventStore: store, mode: 'sse', keepaliveMs: 0 });
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const post = await s.postOpen(toolCall('slow', { ms: 150 }, 'slow-1'));
    await post.waitFor((r) => r.events.length >= 1, 2_000, 'priming event on the POST stream');
    const primingId = post.events[0]?.id;
    assert.ok(primingId !== undefined);
    // A cursor of this stream that was never issued (seq far beyond the last): declined as unknown.
    const c = parseEventId(primingId);
    assert.ok(c !== undefined);
    store.delayMs = 500;
    const replayStarted = store.nextReplay();
    const gp = s.get({ 'last-event-id': encodeEventId(c.tag, c.stream, 1_000_000) });
    await withDeadline(replayStarted, 2_000, 'resume reached the store');
    const g = await withDeadline(gp, 3_000, 'resume answered');
    assert.equal(g.status, 400, 'the bogus cursor is declined');
    await post.waitMessage((m) => m.id === 'slow-1', 2_000, 'the response on the POST stream');
    await post.finished(1_500, 'the POST stream ends after its response');
    await until(() => openStreams(srv.stats()) === 0, 1_000, 'no SSE connection left open');
  });
});
