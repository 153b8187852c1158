// Generated hostile requests against a real server on 127.0.0.1:0, both protocol eras on one
// endpoint. hostile-input.test.ts pins the exact answer to each case of a named catalogue; this file
// draws requests from a grammar instead (test/helpers/hostile-requests.ts, which says what is drawn
// and what every answer must keep). Every answer must keep what any input must keep (the brief: "bad
// input gets a clear error ... and leaves no state behind"):
// - no 5xx: a server error means an input reached a path that threw;
// - a 4xx carries a JSON-RPC error body (`jsonrpc`, `id`, an integer `code`, a `message`), except
//   the statuses whose body the spec leaves empty;
// - a 2xx JSON body is JSON-RPC 2.0; an SSE answer to a POST ends by itself;
// - afterwards, with the sessions the run created deleted, no session, stream, modern request,
//   listen stream or concurrency slot is left, no error escaped the process, and the server serves.
// fast-check prints the seed, path and shrunk request of a failure; FUZZ_SEED and FUZZ_PATH replay
// it, FUZZ_RUNS draws more (test/helpers/fuzz.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { oauthResourceServer, type ServeOptions } from '../../src/server/index.js';
import { signingKey, TestAuthServer } from '../helpers/auth-server.js';
import { withDeadline } from '../helpers/deadline.js';
import { catchEscapes, fuzzParameters } from '../helpers/fuzz.js';
import { draw, exchange, nothingLeft } from '../helpers/hostile-requests.js';
import { RawSession, send, toolCall, until } from '../helpers/http.js';
import { modernBody, modernSend } from '../helpers/modern.js';
import { type Running, startServer } from '../helpers/test-server.js';

/**
 * Runs per server variant, requests sent at once per run, and the time a variant's runs may take in
 * all: fast-check stops drawing at the limit, so a slow machine runs fewer, never hangs
 * (test/helpers/fuzz.ts: FUZZ_RUNS for more).
 */
const RUNS = 100;
const LANES = 4;
const TIME_LIMIT_MS = 6_000;
/** Sessions with nothing running end after this (checked at a quarter of it). */
const IDLE_MS = 2_000;

/**
 * The server variants the same draws run against: as configured by default; with hibernation at
 * 0 ms (each session's server is dropped after every answer, so most requests wake one);
 * stateless (a server per request, no session ever created); and as an OAuth resource server trusting
 * a real authorization server (oidc-provider), with the Authorization header drawn too.
 */
const VARIANTS: readonly { name: string; options: Omit<ServeOptions, 'createServer'>; oauth?: true }[] = [
  { name: 'default', options: {} },
  { name: 'hibernating at once', options: { hibernateAfterMs: 0 } },
  { name: 'stateless', options: { stateless: true } },
  { name: 'OAuth resource server', options: {}, oauth: true },
];

for (const variant of VARIANTS) {
  describe(`generated hostile requests, both eras (${variant.name})`, () => {
    let srv: Running;
    let as: TestAuthServer | undefined;
    /** The valid token's header when the server is a resource server, sent by every request of ours. */
    let auth: Record<string, string> = {};
    let token: string | undefined;
    const escapes = catchEscapes();

    before(async () => {
      escapes.start();
      if (variant.oauth === true)
        as = await TestAuthServer.start({ keys: [await signingKey('fuzz')], scopes: ['mcp'] });
      const issuer = as?.issuer;
      srv = await startServer({
        keepaliveMs: 0,
        // An initialize whose client left after the answer was written leaves a session nobody
        // knows the id of: it ends by the idle timeout, short here so the test sees it happen.
        sessionIdleMs: IDLE_MS,
        // No initialize rate limit: the run may create sessions quickly (each is deleted at the end).
        clientLimits: { initializePerSecond: 1_000_000, initializeBurst: 1_000_000 },
        ...variant.options,
        ...(issuer === undefined
          ? {}
          : {
              oauth: (endpoint: string) =>
                oauthResourceServer({ resource: endpoint, authorizationServers: [issuer], scopes: ['mcp'] }),
            }),
      });
      if (as !== undefined) {
        token = await as.token(srv.url, 'mcp');
        auth = { authorization: `Bearer ${token}` };
      }
    });

    after(async () => {
      await srv.close();
      await as?.stop();
      escapes.stop();
    });

    test('every answer keeps the invariants, and nothing is left behind', async () => {
      const stateless = variant.options.stateless === true;
      const victim = new RawSession(srv.url, auth);
      const created = new Set<string>();
      const openVictim = async (): Promise<void> => {
        // Stateless: initialize is answered, but no session exists to aim requests at.
        if (stateless) return;
        await victim.init();
        created.add(victim.sid ?? '');
      };
      await openVictim();
      await fc.assert(
        fc.asyncProperty(
          // A few requests at once: races between a session's requests, its DELETE and its streams.
          fc.array(
            draw(srv.port, () => victim.sid ?? 'none', token),
            { minLength: 1, maxLength: LANES },
          ),
          async (draws) => {
            const victimBefore = victim.sid;
            await Promise.all(
              draws.map(async (d) => {
                const sid = await exchange(srv.url, d);
                if (sid !== undefined) created.add(sid);
              }),
            );
            // A drawn DELETE may have ended the session the session-era draws use: open another.
            const gone = draws.some(
              (d) => d.method === 'DELETE' && d.headers['mcp-session-id'] === victimBefore,
            );
            // (The old one, if it lives on, is in `created` and is deleted at the end.)
            if (gone) await openVictim();
          },
        ),
        fuzzParameters(RUNS, TIME_LIMIT_MS),
      );

      // What the run created goes away (and what a cut initialize created ends by idling out); then
      // nothing may be left.
      for (const sid of created) {
        const r = await send(srv.url, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': sid } });
        assert.ok(r.status === 200 || r.status === 204 || r.status === 404, `DELETE ${sid}: ${r.status}`);
      }
      await until(
        () => nothingLeft(srv.stats()),
        IDLE_MS * 3,
        'no session, stream, modern request, listen stream or slot left',
      ).catch((e: unknown) => {
        const s = srv.stats();
        throw new Error(
          `${String(e)}: ${JSON.stringify({ sessions: s.sessions.active, streams: s.streams.open, modern: s.modern })}`,
        );
      });
      assert.deepEqual(escapes.escaped, [], 'no error escaped the server');
      // Every handler that began has ended, by finishing or by being cancelled.
      const slow = (l: string): boolean => l.startsWith('slow:');
      const ended = srv.probe.finished.filter(slow).length + srv.probe.aborted.filter(slow).length;
      assert.equal(ended, srv.probe.started.get('slow') ?? 0, 'every slow call that began has ended');

      // And it still serves both eras.
      const modern = await withDeadline(
        modernSend(srv.url, modernBody('tools/call', { name: 'echo', arguments: { text: 'modern' } }), auth),
        5_000,
        'modern echo',
      );
      assert.equal(modern.status, 200);
      assert.match(modern.text, /modern/);
      if (stateless) return;
      const fresh = new RawSession(srv.url, auth);
      await fresh.init();
      const echo = await fresh.post(toolCall('echo', { text: 'after' }));
      assert.equal(echo.status, 200);
      assert.match(echo.text, /after/);
      await fresh.delete();
    });
  });
}
