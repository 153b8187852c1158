// SSE streams on real sockets: headers, priming vs comment by revision, the standalone GET stream and
// its replacement, keepalive, resumption with Last-Event-ID (standalone and POST streams, live and
// finished), every declined cursor with its reason, and SSE polling (closeSSEStream).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import {
  assertRefusal,
  type Loose,
  RawSession,
  type Reply,
  sleep,
  toolCall,
  until,
} from '../helpers/http.js';
import { type Running, startServer } from '../helpers/test-server.js';

function assertSseHeaders(r: Reply): void {
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'text/event-stream');
  assert.equal(r.headers['cache-control'], 'no-cache, no-transform');
  assert.equal(r.headers['x-accel-buffering'], 'no');
}

const idsOf = (r: Reply) => r.events.filter((e) => e.data.length > 0).map((e) => e.id);
const dataOf = (r: Reply) =>
  r.messages().map((m: Loose) => m.params?.data ?? m.params?.uri ?? m.params?.progress ?? m.id);

describe('streams: GET, priming, replacement', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, retryMs: 1234 });
  });
  after(() => srv.close());

  test('GET opens the standalone stream with the SSE headers and a priming event (id, empty data, retry) for 2025-11-25', async () => {
    const s = new RawSession(srv.url);
    await s.init('2025-11-25');
    const g = await s.get();
    assertSseHeaders(g);
    await g.waitFor((r) => r.events.length > 0, 2_000, 'priming');
    assert.equal(g.events[0]?.data, '');
    assert.match(g.events[0]?.id ?? '', /^[0-9A-Za-z]{10}\.0\.1$/);
    assert.deepEqual(g.retries, [1234]);
    assert.deepEqual(srv.stats().streams.open, { post: 0, get: 1 });
    g.destroy();
    await until(() => srv.stats().streams.open.get === 0, 2_000, 'GET detached');
  });

  for (const version of ['2025-06-18', '2025-03-26']) {
    test(`${version}: GET and POST streams start with a comment, never an empty-data event`, async () => {
      const s = new RawSession(srv.url);
      await s.init(version);
      const g = await s.get();
      assertSseHeaders(g);
      await g.waitFor((r) => r.comments.length > 0, 2_000, 'comment');
      const p = await s.postOpen(toolCall('progress', { n: 1, delayMs: 1 }, 'old', 'ot'));
      assertSseHeaders(p);
      await p.finished(3_000, 'POST stream');
      assert.ok(p.comments.length > 0);
      assert.ok(
        p.events.every((e) => e.data.length > 0),
        'no priming event for an old client',
      );
      assert.deepEqual(dataOf(p), [1, 'old']);
      g.destroy();
    });
  }

  test('POST streams of a 2025-11-25 session start with a priming event too', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const p = await s.postOpen(toolCall('progress', { n: 1, delayMs: 1 }, 'pp', 'pt'));
    await p.finished(3_000, 'POST stream');
    assert.equal(p.events[0]?.data, '');
    assert.deepEqual(p.retries[0], 1234);
    // Event ids are unique within the session and name their stream.
    const ids = p.events.map((e) => e.id);
    assert.equal(new Set(ids).size, ids.length);
  });

  test('GET with an Accept that excludes SSE → 406', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const g = await s.get({ accept: 'application/json' });
    await g.finished(2_000, '406');
    assertRefusal(g, 406, -32000, 'not-acceptable');
  });

  test('unrelated notifications (logging, resources/updated) go to the GET stream, not the POST answer', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const g = await s.get();
    await g.waitFor((r) => r.events.length > 0, 2_000, 'priming');
    const r = await s.post(toolCall('notify', { n: 2 }, 'n1'));
    assert.equal(r.headers['content-type'], 'application/json', 'the tool answered without related messages');
    const r2 = await s.post(toolCall('notify', { n: 1, kind: 'resource' }, 'n2'));
    assert.equal(r2.json().id, 'n2');
    await g.waitFor((x) => x.messages().length >= 3, 3_000, 'three unrelated notifications');
    assert.deepEqual(dataOf(g), ['unrelated 1', 'unrelated 2', 'test://r/1']);
    g.destroy();
  });

  test('a second GET replaces the first (the first connection ends); no message is delivered twice', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const g1 = await s.get();
    await g1.waitFor((r) => r.events.length > 0, 2_000, 'priming 1');
    await s.post(toolCall('notify', { n: 2 }));
    await g1.waitFor((r) => r.messages().length >= 2, 2_000, 'g1 messages');
    const g2 = await s.get();
    assertSseHeaders(g2);
    await g1.finished(2_000, 'first GET ended');
    await s.post(toolCall('notify', { n: 2 }));
    await g2.waitFor((r) => r.messages().length >= 2, 2_000, 'g2 messages');
    await sleep(100);
    assert.deepEqual(dataOf(g1), ['unrelated 1', 'unrelated 2']);
    assert.deepEqual(dataOf(g2), ['unrelated 1', 'unrelated 2']);
    const all = [...idsOf(g1), ...idsOf(g2)];
    assert.equal(new Set(all).size, 4, 'four distinct events, each on one connection');
    assert.equal(srv.stats().streams.open.get, 1);
    g2.destroy();
  });

  test('unrelated messages sent while no GET is open reach the next GET exactly once', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    await s.post(toolCall('notify', { n: 3 }));
    const g = await s.get();
    await g.waitFor((r) => r.messages().length >= 3, 2_000, 'stored messages');
    await sleep(50);
    assert.deepEqual(dataOf(g), ['unrelated 1', 'unrelated 2', 'unrelated 3']);
    g.destroy();
    await until(() => srv.stats().streams.open.get === 0, 2_000, 'detached');
    const g2 = await s.get();
    await g2.waitFor((r) => r.events.length > 0 || r.comments.length > 0, 2_000, 'fresh GET');
    await sleep(50);
    assert.deepEqual(g2.messages(), [], 'nothing delivered twice');
    g2.destroy();
  });
});

describe('streams: standalone backlog beyond the replay buffer', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, replay: { maxCount: 4 } });
  });
  after(() => srv.close());

  test('a fresh GET after more unrelated messages than the buffer holds gets 200 and the newest ones it kept', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    await s.post(toolCall('notify', { n: 10 }));
    const g = await s.get();
    await g.waitFor((r) => r.messages().length >= 4 || r.ended, 2_000, 'the buffered messages');
    await sleep(50);
    // A fresh GET resumes nothing, so nothing is declined: the 4 messages the buffer (maxCount 4) still
    // holds arrive, oldest first; the 6 evicted before any GET was open are gone.
    assert.equal(g.status, 200);
    assert.equal(g.ended, false, 'the stream stays open');
    assert.deepEqual(dataOf(g), ['unrelated 7', 'unrelated 8', 'unrelated 9', 'unrelated 10']);
    g.destroy();
  });
});

describe('streams: keepalive', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 100 });
  });
  after(() => srv.close());

  test('a silent stream gets a keepalive comment after keepaliveMs; the parser dispatches no event for it', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const g = await s.get();
    await g.waitFor((r) => r.comments.some((c) => c.includes('keepalive')), 2_000, 'keepalive');
    assert.equal(g.events.length, 1, 'only the priming event');
    assert.ok(srv.stats().keepalivesSent > 0);
    g.destroy();
  });

  test('a POST stream waiting on a slow handler gets keepalives too', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const p = await s.postOpen(toolCall('slow', { ms: 600 }, 'ka'), { accept: 'text/event-stream' });
    await p.waitFor((r) => r.comments.some((c) => c.includes('keepalive')), 2_000, 'keepalive on POST');
    await p.finished(3_000, 'slow result');
    assert.deepEqual(dataOf(p), ['ka']);
  });
});

describe('streams: resumption', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, mode: 'sse', streamGraceMs: 30_000 });
  });
  after(() => srv.close());

  test('standalone: GET + Last-Event-ID replays exactly the events after that id, then continues live', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const g1 = await s.get();
    await s.post(toolCall('notify', { n: 3 }));
    await g1.waitFor((r) => r.messages().length >= 3, 2_000, 'three on g1');
    const cursor = idsOf(g1)[0] ?? '';
    const g2 = await s.get({ 'last-event-id': cursor });
    assertSseHeaders(g2);
    await g1.finished(2_000, 'g1 replaced');
    await g2.waitFor((r) => r.messages().length >= 2, 2_000, 'replay');
    assert.deepEqual(dataOf(g2), ['unrelated 2', 'unrelated 3']);
    assert.deepEqual(idsOf(g2), idsOf(g1).slice(1));
    await s.post(toolCall('notify', { n: 1 }));
    await g2.waitFor((r) => r.messages().length >= 3, 2_000, 'live after replay');
    assert.deepEqual(dataOf(g2), ['unrelated 2', 'unrelated 3', 'unrelated 1']);
    assert.ok(srv.stats().replays.served >= 1);
    g2.destroy();
  });

  test('a live POST stream resumed on GET: the rest of its events and its result, no duplicates, then the end', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const p = await s.postOpen(toolCall('progress', { n: 6, delayMs: 80 }, 'rp', 'rt'));
    await p.waitFor((r) => r.messages().length >= 2, 3_000, 'two progress');
    p.destroy();
    const seen = p.messages().length;
    const cursor = idsOf(p)[seen - 1] ?? '';
    await sleep(30);
    const g = await s.get({ 'last-event-id': cursor });
    assertSseHeaders(g);
    await g.finished(5_000, 'resumed POST stream ends after the result');
    const got = [...dataOf(p), ...dataOf(g)];
    assert.deepEqual(got, [1, 2, 3, 4, 5, 6, 'rp']);
    assert.equal(g.messages().at(-1).result.content[0].text, 'done 6');
    assert.deepEqual(srv.probe.aborted, [], 'the disconnect did not cancel the request');
  });

  test('a finished POST stream resumed within streamGraceMs gets its result', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const p = await s.postOpen(toolCall('progress', { n: 3, delayMs: 5 }, 'fp', 'ft'));
    await p.finished(3_000, 'POST stream');
    const priming = p.events[0]?.id ?? '';
    const g = await s.get({ 'last-event-id': priming });
    assertSseHeaders(g);
    await g.finished(3_000, 'replay of a finished stream');
    assert.deepEqual(dataOf(g), [1, 2, 3, 'fp']);
    const g2 = await s.get({ 'last-event-id': idsOf(p)[2] ?? '' });
    await g2.finished(3_000, 'replay from the last progress');
    assert.deepEqual(dataOf(g2), ['fp']);
  });

  test('malformed, foreign and unknown cursors → 400 with their reasons; counters move', async () => {
    const a = new RawSession(srv.url);
    const b = new RawSession(srv.url);
    await a.init();
    await b.init();
    const pb = await b.postOpen(toolCall('echo', { text: 'b' }, 'be'));
    await pb.finished(2_000, 'b stream');
    const foreign = pb.events[0]?.id ?? '';
    const pa = await a.postOpen(toolCall('echo', { text: 'a' }, 'ae'));
    await pa.finished(2_000, 'a stream');
    const mine = pa.events[0]?.id ?? '';
    const [tag, stream] = mine.split('.');
    const before = srv.stats().replays.declined;
    const cases: [string, string][] = [
      ['not-an-id', 'resume-malformed'],
      ['', 'resume-malformed'],
      [`${'x'.repeat(5_000)}`, 'resume-malformed'],
      [foreign, 'resume-foreign'],
      [`${tag}.${stream}.zz`, 'resume-unknown'],
      [`${tag}.zzz.1`, 'resume-unknown'],
    ];
    for (const [id, reason] of cases) {
      const g = await a.get({ 'last-event-id': id });
      await g.finished(2_000, reason);
      assertRefusal(g, 400, -32000, reason);
    }
    const after = srv.stats().replays.declined;
    assert.equal(after.malformed - before.malformed, 3);
    assert.equal(after.foreign - before.foreign, 1);
    assert.equal(after.unknown - before.unknown, 2);
    assert.deepEqual(srv.stats().streams.open, { post: 0, get: 0 });
  });

  test('a declined cursor for a live POST stream leaves that stream connected', {}, async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const p = await s.postOpen(toolCall('slow', { ms: 600 }, 'live'));
    await p.waitFor((r) => r.events.length > 0, 2_000, 'priming');
    const [tag, stream] = (p.events[0]?.id ?? '').split('.');
    const g = await s.get({ 'last-event-id': `${tag}.${stream}.zz` });
    await g.finished(2_000, 'refusal');
    assertRefusal(g, 400, -32000, 'resume-unknown');
    await p.finished(3_000, 'POST stream');
    assert.deepEqual(dataOf(p), ['live'], 'the result still arrived on the original connection');
  });
});

describe('streams: stale cursor', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, mode: 'sse', replay: { maxCount: 3 } });
  });
  after(() => srv.close());

  test('a cursor whose successors were evicted → 410 resume-evicted', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const p = await s.postOpen(toolCall('progress', { n: 10, delayMs: 1 }, 'ev', 'et'));
    await p.finished(3_000, 'POST stream');
    const g = await s.get({ 'last-event-id': p.events[0]?.id ?? '' });
    await g.finished(2_000, '410');
    assertRefusal(g, 410, -32000, 'resume-evicted');
    assert.ok(srv.stats().replays.declined.evicted >= 1);
    // The newest cursor is still fine.
    const ok = await s.get({ 'last-event-id': p.events.at(-2)?.id ?? '' });
    await ok.finished(2_000, 'replay of the tail');
    assert.deepEqual(dataOf(ok), ['ev']);
  });
});

describe('streams: SSE polling (closeSSEStream)', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, retryMs: 321 });
  });
  after(() => srv.close());

  test('2025-11-25: the POST stream closes early after priming + retry; the result arrives on the resumed GET', async () => {
    const s = new RawSession(srv.url);
    await s.init('2025-11-25');
    const p = await s.postOpen(toolCall('poll', {}, 'poll1'));
    assertSseHeaders(p);
    await p.finished(2_000, 'early close');
    assert.deepEqual(p.messages(), [], 'no response before the close');
    assert.equal(p.events[0]?.data, '');
    assert.match(p.text, /retry: 321\n\n$/);
    const g = await s.get({ 'last-event-id': p.events[0]?.id ?? '' });
    assertSseHeaders(g);
    await g.finished(3_000, 'resumed poll stream');
    assert.deepEqual(dataOf(g), ['poll1']);
    assert.equal(g.messages()[0].result.content[0].text, 'polled');
  });

  test('2025-03-26: no event id was sent, so the stream must not close early; the result arrives on it', async () => {
    const s = new RawSession(srv.url);
    await s.init('2025-03-26');
    const p = await s.postOpen(toolCall('poll', {}, 'poll2'), { accept: 'text/event-stream' });
    await p.finished(3_000, 'poll stream');
    assert.deepEqual(dataOf(p), ['poll2']);
  });

  test('stats: a resumed poll leaves nothing open', async () => {
    await withDeadline(
      until(() => srv.stats().streams.open.post === 0 && srv.stats().streams.open.get === 0, 2_000, 'closed'),
      3_000,
      'streams closed',
    );
  });
});
