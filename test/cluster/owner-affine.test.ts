// docs/scale-out.md, "Owner-affine routing": three `sluice serve --redis` instances started with
// `--session-prefix a`, `b` and `c` behind nginx running the document's block as written (only the
// addresses replaced by the test's ports). Every request of every session reaches its owner (no
// response says `sluice-route: forwarded`), while the document's round-robin block in front of the
// same instances forwards (the control: without the map, the hop is back). With an owner killed, its
// sessions' requests go to the backups, which answer as Sluice answers for a dead owner, and new
// sessions still open. The same three checks run against the document's HAProxy
// and Caddy blocks ("HAProxy, owner-affine", "Caddy, owner-affine"), in front of the same instances
// (Caddy also gets a global options block turning off its admin endpoint and automatic HTTPS); a hop
// header sent from outside is removed on the way. A request written on a connection the dead owner left
// in the balancer's pool may have reached it, so no balancer sends it again: its 502 is allowed once
// per session, and a scripted owner that dies between two requests makes that moment certain for each
// block (one 502, the owner not sent the request twice, then an instance's answer).
import assert from 'node:assert/strict';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { docClusterSkip, startDocNginx } from '../helpers/doc-nginx.js';
import { RawSession, rpc, send } from '../helpers/http.js';
import type { Nginx } from '../helpers/nginx.js';
import {
  CADDY_MISSING,
  CADDY_TEST_GLOBALS,
  docBlock,
  findCaddy,
  findHaproxy,
  HAPROXY_MISSING,
  type ProxyKind,
  pointBlock,
  type RunningProxy,
  startProxy,
} from '../helpers/proxies.js';
import { type Redis, startRedis } from '../helpers/redis.js';
import { type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

const missing = docClusterSkip();

const HEADING = '### Owner-affine routing (optional): no hop for session requests';

/**
 * An owner that dies between two requests: it answers the first request on a kept-alive connection,
 * then reads the next one, drops the connection and stops listening.
 */
async function dyingUpstream(): Promise<{ port: number; requests(): number; close(): void }> {
  let requests = 0;
  const server = createNetServer((sock) => {
    sock.on('error', () => undefined);
    sock.on('data', () => {
      requests++;
      if (requests === 1)
        sock.write(
          'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nkeep-alive: timeout=60\r\n\r\n{}',
        );
      else {
        sock.destroy();
        server.close();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    requests: () => requests,
    close: () => server.close(),
  };
}
const PREFIXES = ['a', 'b', 'c'] as const;
/** Defaults only: an inherited SLUICE_CLUSTER_LEASE_MS must not shorten the lease under test. */
const DEFAULT_ENV = { SLUICE_CLUSTER_LEASE_MS: '', SLUICE_CLUSTER_SECRET: '' };

const BLOCKS: Record<ProxyKind, { heading: string; lang: string; roundRobin: (b: string) => string }> = {
  haproxy: {
    heading: '#### HAProxy, owner-affine',
    lang: 'haproxy',
    roundRobin: (b) => b.replace(/^\s*use-server .*\n/gm, ''),
  },
  caddy: {
    heading: '#### Caddy, owner-affine',
    lang: 'caddy',
    // Only the last `handle` (round robin) and no matchers.
    roundRobin: (b) =>
      b
        .replace(/^\s*@[abc] header_regexp.*\n/gm, '')
        .replace(/^ {2}handle @[abc] \{\n[\s\S]*?\n {2}\}\n/gm, ''),
  },
};

/** Opens `n` sessions through `url`, then sends each `calls` echoes: [session, forwarded answers]. */
async function load(
  url: string,
  n: number,
  calls: number,
): Promise<{ sessions: RawSession[]; forwarded: number }> {
  const sessions: RawSession[] = [];
  let forwarded = 0;
  for (let i = 0; i < n; i++) {
    const s = new RawSession(url);
    await s.init();
    sessions.push(s);
  }
  for (const s of sessions) {
    for (let i = 0; i < calls; i++) {
      const r = await s.post(rpc('tools/call', { name: 'echo', arguments: { text: `t${i}` } }));
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json().result.content[0].text, `t${i}`);
      if (r.headers['sluice-route'] === 'forwarded') forwarded++;
    }
  }
  return { sessions, forwarded };
}

describe('docs/scale-out.md owner-affine routing: sessions reach their owner through nginx, HAProxy and Caddy', {
  skip: missing,
}, () => {
  let redis: Redis;
  let link: RedisLink;
  const members: SpawnedServe[] = [];
  let ports: number[] = [];
  let nginx: Nginx;

  const member = (p: string, port = 0) =>
    spawnServe(['--redis', redis.url, '--session-prefix', p, '--port', String(port)], DEFAULT_ENV, 45_000);

  before(async () => {
    redis = await startRedis();
    link = await connectNodeRedis({ url: redis.url });
    for (const p of PREFIXES) members.push(await member(p));
    ports = members.map((m) => Number(new URL(m.url).port));
    nginx = await startDocNginx(ports, (b) => b, HEADING);
  });
  after(async () => {
    await nginx?.stop();
    for (const m of members) await m.close().catch(() => undefined);
    await link?.close();
    await redis?.stop();
  });

  test('every session is minted by one of the three, and each of its requests is answered by its owner', async () => {
    const { sessions, forwarded } = await load(nginx.url, 9, 6);
    const seen = new Set(sessions.map((s) => (s.sid ?? '').split('.')[0]));
    assert.ok(seen.size >= 2, `initialize is round robin: prefixes ${[...seen].join(',')}`);
    for (const s of sessions) {
      const sid = s.sid ?? '';
      const prefix = sid.slice(0, sid.indexOf('.'));
      const owner = members[PREFIXES.indexOf(prefix as (typeof PREFIXES)[number])];
      // The directory agrees: the instance with that prefix owns the session.
      assert.equal(String(await link.send(['HGET', `sl:{${sid}}`, 'a'])), owner?.url, sid);
    }
    assert.equal(forwarded, 0, 'no request crossed the hop');
  });

  test('the control: the round-robin block in front of the same instances forwards', async () => {
    const rr = await startDocNginx(ports);
    try {
      const { forwarded } = await load(rr.url, 9, 6);
      // Two in three on average; far above zero whatever the rotation.
      assert.ok(forwarded >= 9, `forwarded ${forwarded} of 54`);
    } finally {
      await rr.stop();
    }
  });

  /**
   * Through `url`: nine sessions, then the owner of the `b.` ones killed. Its sessions get Sluice's
   * answer for a dead owner from another instance (never the proxy's own error page), the others
   * are served by their owners, and new sessions open on the living. Member b is then started again
   * on its port, which the documented blocks name.
   */
  async function ownerKilled(url: string, proxyLog: () => string = () => ''): Promise<void> {
    const { sessions } = await load(url, 9, 1);
    try {
      const dead = members[1] as SpawnedServe;
      await new Promise<void>((resolve) => {
        dead.child.once('exit', () => resolve());
        dead.child.kill('SIGKILL');
      });
      const orphans = sessions.filter((s) => (s.sid ?? '').startsWith('b.'));
      const others = sessions.filter((s) => !(s.sid ?? '').startsWith('b.'));
      assert.ok(orphans.length > 0 && others.length > 0, 'sessions on the killed instance and on the others');
      for (const s of orphans) {
        let r = await s.post(rpc('tools/call', { name: 'echo', arguments: { text: 'x' } }));
        if (r.status === 502) {
          // Written on a connection the dead owner left in the balancer's pool, before the balancer
          // read its close: it may have reached the owner, so no balancer sends it again (docs/scale-out.md,
          // "When an owner dies"; the test below makes the moment certain). Once per session: the
          // failure marks the owner down, so the session's next request must reach an instance.
          r = await s.post(rpc('tools/call', { name: 'echo', arguments: { text: 'x' } }));
        }
        // A dead owner's session: 503 while its lease holds, 404 once it lapsed (docs/scale-out.md
        // "Failure semantics"); from an instance, with a JSON-RPC error.
        assert.ok(
          r.status === 503 || r.status === 404,
          `${r.status} ${r.text}\n--- proxy log ---\n${proxyLog()}`,
        );
        assert.equal(typeof r.json().error?.code, 'number', r.text);
      }
      for (const s of others) {
        const r = await s.post(rpc('tools/call', { name: 'echo', arguments: { text: 'y' } }));
        assert.equal(r.status, 200, r.text);
        assert.notEqual(r.headers['sluice-route'], 'forwarded');
      }
      for (let i = 0; i < 4; i++) {
        // An initialize has no session, so no retry after a write (docs/scale-out.md): one sent on a
        // connection the dead instance left in the balancer's pool gets 502, and the client starts over.
        let s = new RawSession(url);
        await s.init().catch((error: unknown) => {
          if (!/^initialize: 502 /.test(String((error as Error).message))) throw error;
          s = new RawSession(url);
          return s.init();
        });
        assert.ok(!(s.sid ?? '').startsWith('b.'), s.sid);
      }
    } finally {
      members[1] = await member('b', ports[1]);
    }
  }

  test("an owner killed: its sessions go to the backups and get Sluice's answer, new sessions still open", async () => {
    await ownerKilled(nginx.url);
  });

  async function proxy(kind: ProxyKind, edit: (b: string) => string = (b) => b): Promise<RunningProxy> {
    const { heading, lang } = BLOCKS[kind];
    const block = edit(docBlock('scale-out.md', heading, lang));
    return startProxy(kind, (port) => {
      const pointed = pointBlock(block, ports, port);
      return kind === 'caddy' ? `${CADDY_TEST_GLOBALS}${pointed}` : pointed;
    });
  }

  for (const kind of ['haproxy', 'caddy'] as const) {
    const skip = {
      skip:
        (kind === 'haproxy' ? findHaproxy() : findCaddy()) === undefined
          ? kind === 'haproxy'
            ? HAPROXY_MISSING
            : CADDY_MISSING
          : false,
    };
    test(
      `${kind}: each request of each session is answered by its owner; a hop header from outside is removed`,
      skip,
      async () => {
        const p = await proxy(kind);
        try {
          const { sessions, forwarded } = await load(p.url, 9, 6);
          const seen = new Set(sessions.map((s) => (s.sid ?? '').split('.')[0]));
          assert.ok(seen.size >= 2, `initialize is round robin: prefixes ${[...seen].join(',')}`);
          for (const s of sessions) {
            const sid = s.sid ?? '';
            const owner =
              members[PREFIXES.indexOf(sid.slice(0, sid.indexOf('.')) as (typeof PREFIXES)[number])];
            assert.equal(String(await link.send(['HGET', `sl:{${sid}}`, 'a'])), owner?.url, sid);
          }
          assert.equal(forwarded, 0, 'no request crossed the hop');
          // An instance refuses an unsigned hop header with 403 (sent to it directly); through the
          // proxy the header is removed and the call is served.
          const s = sessions[0] as RawSession;
          const forged = { 'x-sluice-forward': 'v2.forged.header' };
          const direct = new RawSession(members[0]?.url ?? '');
          direct.sid = s.sid;
          direct.version = s.version;
          const refused = await direct.post(
            rpc('tools/call', { name: 'echo', arguments: { text: 'h' } }),
            forged,
          );
          assert.equal(
            refused.status,
            403,
            `an instance refuses the header: ${refused.status} ${refused.text}`,
          );
          const r = await s.post(rpc('tools/call', { name: 'echo', arguments: { text: 'h' } }), forged);
          assert.equal(r.status, 200, `the hop header did not reach the instance: ${r.status} ${r.text}`);
        } finally {
          await p.stop();
        }
      },
    );

    test(`${kind}: the control, the same block without the prefix routing, forwards`, skip, async () => {
      const p = await proxy(kind, BLOCKS[kind].roundRobin);
      try {
        assert.doesNotMatch(p.config, /use-server|header_regexp/);
        const { forwarded } = await load(p.url, 9, 6);
        assert.ok(forwarded >= 9, `forwarded ${forwarded} of 54`);
      } finally {
        await p.stop();
      }
    });

    test(
      `${kind}: an owner killed: its sessions get Sluice's answer from another instance, new sessions open`,
      skip,
      async () => {
        const p = await proxy(kind);
        try {
          await ownerKilled(p.url, () => p.log());
        } finally {
          await p.stop();
        }
      },
    );
  }

  /**
   * The moment ownerKilled can only meet on a loaded machine, made certain: the `b.` sessions' owner is
   * a scripted upstream that answers one request on a kept-alive connection, then reads the next, drops
   * the connection and stops listening, as an instance killed while its connection sat in the
   * balancer's pool. The cut request may have reached the owner, so no balancer sends it again; what
   * each document's block does is then one 502 of the balancer's own (docs/scale-out.md), after which
   * the owner is marked down and the session's next request reaches an instance, which answers as
   * Sluice answers for an unknown session. A block whose retries mark the living instances down
   * fails here (Caddy's, with POST in `lb_retry_match`).
   */
  for (const kind of ['nginx', 'haproxy', 'caddy'] as const) {
    const missingProxy =
      kind === 'nginx'
        ? missing
        : kind === 'haproxy'
          ? findHaproxy() === undefined && HAPROXY_MISSING
          : findCaddy() === undefined && CADDY_MISSING;
    test(`${kind}: a POST on a connection its dead owner left behind: one 502, then an instance answers`, {
      skip: missingProxy === false || missingProxy === undefined ? false : missingProxy,
    }, async () => {
      const dying = await dyingUpstream();
      const upstreams = [ports[0] as number, dying.port, ports[2] as number];
      const p =
        kind === 'nginx'
          ? await startDocNginx(upstreams, (b) => b, HEADING)
          : await startProxy(kind, (port) => {
              const pointed = pointBlock(
                docBlock('scale-out.md', BLOCKS[kind].heading, BLOCKS[kind].lang),
                upstreams,
                port,
              );
              return kind === 'caddy' ? `${CADDY_TEST_GLOBALS}${pointed}` : pointed;
            });
      try {
        const post = () =>
          send(p.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'mcp-protocol-version': '2025-11-25',
              'mcp-session-id': 'b.owner-gone',
            },
            body: JSON.stringify(rpc('tools/call', { name: 'echo', arguments: { text: 'x' } })),
          });
        const first = await post();
        assert.equal(first.status, 200, `the owner answers while it lives: ${first.status} ${first.text}`);
        const cut = await post();
        const next = await post();
        const log = 'log' in p ? (p as { log(): string }).log() : '';
        /** An instance's answer for a session it does not own (503, then 404), with a JSON-RPC error. */
        const fromInstance = (r: typeof cut): boolean => {
          if (r.status !== 404 && r.status !== 503) return false;
          try {
            return typeof r.json().error?.code === 'number';
          } catch {
            return false; // the balancer's own 503 page
          }
        };
        // The balancer's own 502; or, as Caddy's HTTP client did in some runs, the request sent on to a
        // backup, which answered as for a dead owner (harmless: only the owner runs a session's
        // requests). Never the owner twice.
        assert.ok(
          cut.status === 502 || fromInstance(cut),
          `the cut request: ${cut.status} ${cut.text}\n${log}`,
        );
        assert.equal(dying.requests(), 2, 'the cut request was not sent to the owner again');
        assert.ok(fromInstance(next), `the session's next request: ${next.status} ${next.text}\n${log}`);
      } finally {
        await p.stop();
        dying.close();
      }
    });
  }
});
