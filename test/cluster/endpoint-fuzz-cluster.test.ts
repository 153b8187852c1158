// Generated hostile requests against a cluster: two in-process members on a real redis-server, each
// request sent to one of them at random (the grammar and the judge of test/helpers/hostile-requests.ts,
// as in test/integration/endpoint-fuzz). A request for a session the other member owns is forwarded,
// so the hop carries every drawn fault too: the relay must answer a bad request as the owner would
// (a clear 4xx with a JSON-RPC error, never a 5xx), and a cut client must leave nothing on either
// side. Now and then a request also carries the hop's own header (x-sluice-forward), garbage, forged or
// correctly signed by a peer: a member must refuse what no peer signed, and a peer's signature must not
// make a bad request good (the owner checks a forwarded request as it checks its own).
// Afterwards, with every session the run created deleted:
// - neither member holds a session, stream, modern request, listen stream or slot;
// - Redis holds no key of any session (directory entry, stream copies), and the replica tracks no byte;
// - no error escaped the process, and both members still serve, directly and forwarded.
// fast-check prints the seed, path and shrunk request of a failure; FUZZ_SEED and FUZZ_PATH replay
// it, FUZZ_RUNS draws more (test/helpers/fuzz.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { FORWARD_HEADER, signForward } from '../../src/cluster/forward-auth.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { catchEscapes, fuzzParameters } from '../helpers/fuzz.js';
import { type Draw, draw, exchange, nothingLeft } from '../helpers/hostile-requests.js';
import { ACCEPT_BOTH, RawSession, send, sleep, toolCall, until } from '../helpers/http.js';
import { clusterOn, type RedisTarget, startTarget, topologySkip } from '../helpers/redis-topology.js';
import { type Running, startServer } from '../helpers/test-server.js';

/** As in endpoint-fuzz: runs, requests at once per run, and the time all runs may take. */
const RUNS = 300;
const LANES = 4;
const TIME_LIMIT_MS = 8_000;
/** Sessions with nothing running end after this. */
const IDLE_MS = 2_000;

/** Resolves once `url` answers a request for an unknown session 404 (within 10 s). */
async function untilNotFound(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await send(url, {
      method: 'POST',
      headers: { accept: ACCEPT_BOTH, 'content-type': 'application/json', 'mcp-session-id': 'never-was' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    if (r.status === 404) return;
    if (r.status !== 503 || Date.now() > deadline)
      throw new Error(`an unknown session: ${r.status} ${r.text}`);
    await sleep(50);
  }
}

/** How a drawn request meets the hop header. */
type Hop = 'none' | 'garbage' | 'forged' | 'signed';

interface Aimed {
  member: 0 | 1;
  hop: Hop;
  d: Draw;
}

const hopText = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,80}$/);

describe('generated hostile requests, both eras, on a two-member cluster', {
  skip: topologySkip('single'),
}, () => {
  let target: RedisTarget;
  let link: RedisLink;
  const members: Running[] = [];
  const escapes = catchEscapes();
  let secret = '';

  before(async () => {
    escapes.start();
    target = await startTarget('single');
    link = await target.connect();
    for (let i = 0; i < 2; i++) {
      members.push(
        await startServer({
          cluster: clusterOn(target, { leaseMs: 1_000 }),
          keepaliveMs: 0,
          sessionIdleMs: IDLE_MS,
          clientLimits: { initializePerSecond: 1_000_000, initializeBurst: 1_000_000 },
        }),
      );
    }
    secret = String(await link.send(['GET', 'sl:secret']));
    // For half a lease after a Redis's data began, a directory miss cannot tell a session that never
    // was from one whose owner has not re-registered after Redis lost its data, and is answered 503
    // by design (cluster/forward-path.ts; test/cluster/failures covers that window). The draws are
    // for the steady state after it: wait until an unknown session is a 404 on both members.
    for (const m of members) await untilNotFound(m.url);
  });

  after(async () => {
    for (const m of members) await m.close().catch(() => undefined);
    await link?.close();
    await target?.stop();
    escapes.stop();
  });

  const memberAt = (i: 0 | 1): Running => members[i] as Running;
  const incarnationOf = (r: Running): string => r.stats().cluster?.incarnation ?? '';

  /** The hop header a drawn request carries, if any. */
  function hopHeader(a: Aimed, salt: string): string | undefined {
    const to = incarnationOf(memberAt(a.member));
    const sessionId = a.d.headers['mcp-session-id'] ?? '';
    const body = typeof a.d.body === 'string' ? a.d.body : (a.d.body?.toString('latin1') ?? '');
    switch (a.hop) {
      case 'none':
        return undefined;
      case 'garbage':
        return salt;
      case 'forged':
        // The right shape, the right incarnation and time, a signature nobody made.
        return `v2.x.${to}.${Date.now()}.AAAAAAAAAAAAAAAA.${Buffer.from(salt).toString('base64url')}`;
      case 'signed':
        // As a peer signs it: the owner then checks the request itself as if its client had sent it.
        return signForward(secret, {
          method: a.d.method,
          sessionId,
          from: 'fuzz-peer',
          to,
          lastEventId: a.d.headers['last-event-id'],
          body,
        });
    }
  }

  test('every answer keeps the invariants, through either member, and nothing is left anywhere', async (t) => {
    // One session owned by each member; a draw aims at one of them through either member, so half
    // the session-era draws go through the hop, both ways.
    const victims = [new RawSession(memberAt(0).url), new RawSession(memberAt(1).url)] as const;
    const created = new Set<string>();
    const open = async (v: RawSession): Promise<void> => {
      await v.init();
      created.add(v.sid ?? '');
    };
    for (const v of victims) await open(v);
    const aimed: fc.Arbitrary<Aimed> = fc
      .tuple(
        fc.constantFrom<0 | 1>(0, 1),
        fc.constantFrom<0 | 1>(0, 1),
        fc.constantFrom<Hop>(
          'none',
          'none',
          'none',
          'none',
          'none',
          'none',
          'none',
          'garbage',
          'forged',
          'signed',
        ),
      )
      .chain(([member, whose, hop]) =>
        draw(memberAt(member).port, () => victims[whose].sid ?? 'none').map((d) => ({ member, hop, d })),
      );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(aimed, hopText), { minLength: 1, maxLength: LANES }),
        async (runs) => {
          const before = victims.map((v) => v.sid);
          await Promise.all(
            runs.map(async ([a, salt]) => {
              const hop = hopHeader(a, salt);
              const d: Draw =
                hop === undefined ? a.d : { ...a.d, headers: { ...a.d.headers, [FORWARD_HEADER]: hop } };
              const sid = await exchange(memberAt(a.member).url, d);
              if (sid !== undefined) created.add(sid);
            }),
          );
          // A drawn DELETE may have ended a victim: open another on the same member.
          for (const [k, v] of victims.entries()) {
            if (runs.some(([a]) => a.d.method === 'DELETE' && a.d.headers['mcp-session-id'] === before[k]))
              await open(v);
          }
        },
      ),
      fuzzParameters(RUNS, TIME_LIMIT_MS),
    );

    // What the hop saw, for the reader of the log: a run that forwarded nothing would test little.
    const hops = members.map((m) => m.stats().cluster?.forwarded);
    t.diagnostic(`sessions created ${created.size}; forwarded (member 0, member 1): ${JSON.stringify(hops)}`);
    assert.ok(
      hops.every((h) => (h?.out ?? 0) > 0 && (h?.in ?? 0) > 0 && (h?.refused ?? 0) > 0),
      'each member forwarded, accepted and refused hops',
    );

    // Every session the run created is deleted, each through the member that does not own it half the
    // time (the DELETE is then forwarded).
    let i = 0;
    for (const sid of created) {
      const via = memberAt((i++ % 2) as 0 | 1);
      const r = await send(via.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
      assert.ok(r.status === 200 || r.status === 204 || r.status === 404, `DELETE ${sid}: ${r.status}`);
    }
    await until(
      () => members.every((m) => nothingLeft(m.stats())),
      IDLE_MS * 3,
      'nothing left on either member',
    ).catch((e: unknown) => {
      const left = members.map((m) => {
        const s = m.stats();
        return {
          sessions: s.sessions.active,
          streams: s.streams.open,
          modern: s.modern,
          replica: s.cluster?.replica,
        };
      });
      throw new Error(`${String(e)}: ${JSON.stringify(left)}`);
    });
    // Redis: no key of any session is left (session ends delete their entry and copies; nothing is
    // left for a TTL to clean up). The members' own keys stay: their leases, the member set, the secret.
    const sessionKeys = async (): Promise<string[]> => (await link.send(['KEYS', 'sl:{*'])) as string[];
    // The deletes are sent without waiting for Redis (owned-sessions.ts): give them a moment.
    const deadline = Date.now() + 3_000;
    let left = await sessionKeys();
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      left = await sessionKeys();
    }
    assert.deepEqual(left, [], 'no session key left in Redis');
    assert.deepEqual(escapes.escaped, [], 'no error escaped either member');

    // Both still serve: a session on member 0, used through member 1, and the reverse.
    for (const [own, other] of [
      [memberAt(0), memberAt(1)],
      [memberAt(1), memberAt(0)],
    ] as const) {
      const s = new RawSession(own.url);
      await s.init();
      const through = new RawSession(other.url);
      through.sid = s.sid;
      through.version = s.version;
      const echo = await through.post(toolCall('echo', { text: 'after' }));
      assert.equal(echo.status, 200);
      assert.match(echo.text, /after/);
      await through.delete();
    }
  });
});
