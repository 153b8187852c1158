// A captured hop between instances cannot be used again. Two in-process members share a real
// redis-server; the owner advertises a recording proxy in front of itself, so every forwarded
// request on its way from the relay to the owner is captured exactly as sent (headers, signature,
// body). Sent again to the owner within the signature's window, the captured request is refused:
// a replayed POST does not run the call again, a replayed GET does not open the session's GET stream.
// The same proxy also stands in for a broken or frozen owner (an impostor answers in its place), to
// check that the relay always gives its client a definite answer or a resumable cut.
import assert from 'node:assert/strict';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { redisCluster } from '../../src/cluster/cluster.js';
import { FORWARD_HEADER } from '../../src/cluster/forward-auth.js';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { JsonRpcCode as C } from '../../src/jsonrpc/codes.js';
import { assertRefusal, open, RawSession, sleep, toolCall, until } from '../helpers/http.js';
import { findRedis, type Redis, startRedis } from '../helpers/redis.js';
import { type Running, startServer } from '../helpers/test-server.js';

const have = findRedis() !== undefined;

interface Captured {
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/**
 * Answers a request in the owner's place when it returns true (what a broken owner, or another
 * program at its address, would send); the request is passed on otherwise.
 */
type Impostor = (req: IncomingMessage, res: ServerResponse) => boolean;

/** An HTTP proxy to 127.0.0.1:`target()` that records each request it passes on. */
function recordingProxy(
  target: () => number,
  seen: Captured[],
  impostor: () => Impostor | undefined,
): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? 'GET', headers: { ...req.headers }, body });
      if (impostor()?.(req, res) === true) return;
      const headers: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
      const up = request(
        { host: '127.0.0.1', port: target(), path: req.url, method: req.method, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      up.end(body.length > 0 ? body : undefined);
    });
  });
}

/**
 * The captured request, sent again as it was (same headers, signature and body) to `url`; resolves
 * at the response head (a replayed GET that opened a stream would never end).
 */
function replay(c: Captured, url: string) {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(c.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
  return open(url, { method: c.method, headers, ...(c.body.length > 0 ? { body: c.body } : {}) });
}

describe('cluster hop: a captured forwarded request is good once', {
  skip: have ? false : 'SKIPPED: redis-server not installed — .ci/run installs it',
}, () => {
  let redis: Redis;
  let owner: Running;
  let relay: Running;
  let proxy: Server;
  const captured: Captured[] = [];
  let impostor: Impostor | undefined;
  let link: RedisLink;
  let proxyUrl = '';

  before(async () => {
    redis = await startRedis();
    let ownerPort = 0;
    proxy = recordingProxy(
      () => ownerPort,
      captured,
      () => impostor,
    );
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyPort = (proxy.address() as AddressInfo).port;
    proxyUrl = `http://127.0.0.1:${proxyPort}/mcp`;
    owner = await startServer({
      cluster: redisCluster({
        url: redis.url,
        leaseMs: 1_000,
        advertise: `http://127.0.0.1:${proxyPort}/mcp`,
      }),
      keepaliveMs: 0,
    });
    ownerPort = owner.port;
    relay = await startServer({ cluster: redisCluster({ url: redis.url, leaseMs: 1_000 }), keepaliveMs: 0 });
    link = await connectNodeRedis({ url: redis.url });
  });

  /**
   * A session the directory says `ownerId` owns at `address` (written straight into Redis, standing
   * in for a broken or frozen owner), and a client of it that talks to the relay.
   */
  async function ghostSession(
    sid: string,
    ownerId: string,
    address: string,
    more: string[] = [],
  ): Promise<RawSession> {
    await link.send([
      'HSET',
      `sl:{${sid}}`,
      'o',
      ownerId,
      'a',
      address,
      'e',
      '1',
      'p',
      '',
      't',
      'x',
      ...more,
    ]);
    await link.send(['PEXPIRE', `sl:{${sid}}`, '60000']);
    const ghost = new RawSession(relay.url);
    ghost.sid = sid;
    ghost.version = '2025-11-25';
    return ghost;
  }
  after(async () => {
    await link?.close();
    for (const n of [relay, owner]) await n?.close().catch(() => undefined);
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    await redis?.stop();
  });

  function via(s: RawSession, url: string): RawSession {
    const v = new RawSession(url);
    v.sid = s.sid;
    v.version = s.version;
    return v;
  }

  const hop = (method: string): Captured => {
    const c = captured.filter((x) => x.method === method && x.headers[FORWARD_HEADER] !== undefined).at(-1);
    assert.ok(c !== undefined, `a forwarded ${method} was captured`);
    return c;
  };

  test('a replayed POST is refused and does not run the call again', async () => {
    const s = new RawSession(owner.url);
    await s.init();
    const r = await via(s, relay.url).post(toolCall('echo', { text: 'once' }, 'e1'));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers['sluice-route'], 'forwarded');
    const ran = owner.probe.started.get('echo') ?? 0;
    const post = hop('POST');
    assert.match(post.body, /"once"/);
    for (let i = 0; i < 2; i++) {
      const r = await replay(post, owner.url);
      await r.finished(3_000, 'the replay is answered');
      assertRefusal(r, 403, C.ServerError, 'forward-forbidden');
    }
    await sleep(50);
    assert.equal(owner.probe.started.get('echo') ?? 0, ran, 'the call did not run again');
    const st = owner.stats().cluster;
    assert.ok(st !== undefined && st.forwarded.replayed >= 2, JSON.stringify(st?.forwarded));
    // The session itself is untouched: the next real call through the relay runs.
    const next = await via(s, relay.url).post(toolCall('echo', { text: 'twice' }, 'e2'));
    assert.equal(next.status, 200, next.text);
    assert.equal(owner.probe.started.get('echo') ?? 0, ran + 1);
  });

  test("a replayed GET does not open the session's GET stream", async () => {
    const s = new RawSession(owner.url);
    await s.init();
    const g = await via(s, relay.url).get();
    assert.equal(g.status, 200);
    assert.ok(g.isSse);
    const get = hop('GET');
    g.destroy();
    // The owner has seen the relayed stream go: a replay would otherwise meet a live connection.
    await until(() => owner.stats().sessions.active >= 1, 2_000, 'the owner holds the session');
    await sleep(100);
    const r = await replay(get, owner.url);
    assert.ok(!r.isSse, 'no stream was opened');
    await r.finished(3_000, 'the replay is answered');
    assertRefusal(r, 403, C.ServerError, 'forward-forbidden');
    // The client's own GET through the relay (freshly signed) still opens it.
    const again = await via(s, relay.url).get();
    assert.equal(again.status, 200);
    again.destroy();
  });

  test("an answer at the owner's address that is not HTTP the relay can pass on: 503, the relay lives", async () => {
    const s = new RawSession(owner.url);
    await s.init();
    for (const status of ['099', '000', '101']) {
      impostor = (req) => {
        // A final status Node parses but cannot write again (below 100), or a 1xx as final answer.
        req.socket.end(`HTTP/1.1 ${status} Odd\r\ncontent-length: 0\r\n\r\n`);
        return true;
      };
      const r = await via(s, relay.url).post(toolCall('echo', { text: status }, `odd-${status}`));
      impostor = undefined;
      assertRefusal(r, 503, C.ServerError, 'owner-unavailable');
    }
    const next = await via(s, relay.url).post(toolCall('echo', { text: 'after' }, 'after'));
    assert.equal(next.status, 200, next.text);
  });

  test('a directory entry whose owner address cannot be dialled: 404 (no lease), never a 500', async () => {
    const s = new RawSession(owner.url);
    await s.init();
    for (const [i, address] of [
      '',
      'not a url',
      'http://127.0.0.1:99999/mcp',
      'https://127.0.0.1:1/mcp',
      'ftp://x/',
    ].entries()) {
      // What an entry of another release, or one cut short, may hold: the owner named has no lease.
      const sid = `odd-entry-${i}`;
      const ghost = await ghostSession(sid, 'gone-owner', address, ['v', '2025-11-25']);
      const r = await ghost.post(toolCall('echo', { text: 'x' }, `odd-${i}`));
      assertRefusal(r, 404, C.SessionNotFound, 'session-not-found');
    }
  });

  test('a hop whose owner froze before answering ends when its lease lapses (404), not when TCP gives up', async () => {
    // A frozen owner (SIGSTOP, a host gone without a RST) holds the request and never answers.
    const sid = 'frozen-owner-session';
    const held: IncomingMessage[] = [];
    impostor = (req) => {
      // Frozen: nothing is answered, the relay's liveness probe (OPTIONS) included.
      if (req.method !== 'OPTIONS' && req.headers['mcp-session-id'] !== sid) return false;
      held.push(req);
      return true;
    };
    await link.send(['SET', 'sl:inst:frozen-owner', proxyUrl, 'PX', '1200']);
    const ghost = await ghostSession(sid, 'frozen-owner', proxyUrl);
    try {
      const r = await ghost.post(toolCall('echo', { text: 'x' }, 'frozen'));
      assert.equal(held.filter((q) => q.method === 'POST').length, 1, 'the request reached the frozen owner');
      assert.ok(
        held.some((q) => q.method === 'OPTIONS'),
        'the relay probed the owner before giving up on it',
      );
      assertRefusal(r, 404, C.SessionNotFound, 'session-not-found');
    } finally {
      impostor = undefined;
      for (const req of held) req.socket.destroy();
    }
  });

  test("a member on a link of the user's own: a stalled Redis answers 503 within the deadline, no hang", async () => {
    const inner = await connectNodeRedis({ url: redis.url });
    let stalled = false;
    // What the seam's example (node-redis with its own `timeout`) does when Redis stops answering:
    // the command was written, and its promise never settles.
    const own: RedisLink = {
      send: (args) => (stalled ? new Promise(() => undefined) : inner.send(args)),
      close: () => inner.close(),
    };
    const member = await startServer({
      cluster: redisCluster({ link: own, leaseMs: 1_000 }),
      keepaliveMs: 0,
    });
    try {
      const ghost = new RawSession(member.url);
      ghost.sid = 'behind-a-stalled-redis';
      ghost.version = '2025-11-25';
      stalled = true;
      const r = await ghost.post(toolCall('echo', { text: 'x' }, 'stalled'));
      assertRefusal(r, 503, C.ServerError, 'cluster-unavailable');
    } finally {
      stalled = false;
      await member.close();
    }
  });

  test('a member whose hop key differs gets its hops refused: its client sees 503, not a 403 of its own', async () => {
    // A member that keyed an emptied Redis before the others re-offered theirs (docs/scale-out.md,
    // "The hop"), here a member given another key.
    const odd = await startServer({
      cluster: redisCluster({ url: redis.url, leaseMs: 1_000, secret: 'another-key-of-the-cluster-32-by' }),
      keepaliveMs: 0,
    });
    try {
      const s = new RawSession(owner.url);
      await s.init();
      const r = await via(s, odd.url).post(toolCall('echo', { text: 'x' }, 'odd-key'));
      assertRefusal(r, 503, C.ServerError, 'owner-unavailable');
      assert.equal(r.headers['retry-after'], '1');
    } finally {
      await odd.close();
    }
  });

  test('a relayed stream whose owner froze mid-answer is cut once the lease lapses (the client resumes)', async () => {
    const sid = 'frozen-mid-stream';
    const held: IncomingMessage[] = [];
    impostor = (req) => {
      if (req.method !== 'OPTIONS' && req.headers['mcp-session-id'] !== sid) return false;
      held.push(req);
      // The head and a first event, then nothing: the owner froze while answering.
      if (req.method === 'OPTIONS') return true;
      req.socket.write(
        'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n' +
          '10\r\nid: x\ndata: {}\n\n\r\n',
      );
      return true;
    };
    await link.send(['SET', 'sl:inst:frozen-owner-2', proxyUrl, 'PX', '1200']);
    const ghost = await ghostSession(sid, 'frozen-owner-2', proxyUrl);
    try {
      const r = await ghost.postOpen(toolCall('echo', { text: 'x' }, 'frozen-mid'));
      assert.equal(r.status, 200);
      await r.waitFor((x) => x.events.length === 1, 2_000, 'the first event, relayed');
      await r.finished(5_000, 'the relayed stream is cut');
      assert.equal(r.res.complete, false, 'cut, not ended: the client resumes');
    } finally {
      impostor = undefined;
      for (const req of held) req.socket.destroy();
    }
  });

  test('a relayed stream whose owner lost its lease but still answers is left alone', async () => {
    // The owner's own link to Redis is down (its lease lapses) while it serves on: its streams stay.
    const sid = 'alive-without-lease';
    const held: IncomingMessage[] = [];
    impostor = (req) => {
      if (req.headers['mcp-session-id'] !== sid) return false; // the probe reaches the live owner
      held.push(req);
      req.socket.write(
        'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n' +
          '10\r\nid: x\ndata: {}\n\n\r\n',
      );
      return true;
    };
    const ghost = await ghostSession(sid, 'lease-lost-owner', proxyUrl);
    try {
      const r = await ghost.postOpen(toolCall('echo', { text: 'x' }, 'alive-no-lease'));
      assert.equal(r.status, 200);
      await r.waitFor((x) => x.events.length === 1, 2_000, 'the first event, relayed');
      await sleep(1_200); // several lease checks (every third of the relay's 1 s lease)
      assert.equal(r.ended, false, 'the stream is still open');
      r.destroy();
    } finally {
      impostor = undefined;
      for (const req of held) req.socket.destroy();
    }
  });
});
