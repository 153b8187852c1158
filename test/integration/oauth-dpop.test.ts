/**
 * DPoP-bound access tokens at Sluice's resource server (RFC 9449 §7), with tokens oidc-provider bound to
 * a key of the test's: the proof is required and checked for this request and this token, a bound token
 * is not a bearer token, an unbound token is not a DPoP one, and every bad proof is a 401 (`token-dpop`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseChallenge } from '../../src/client/auth/challenge.js';
import { oauthResourceServer, type Served, serve } from '../../src/server/index.js';
import { signingKey, TestAuthServer } from '../helpers/auth-server.js';
import {
  type AuthAnswer,
  ath,
  authPost,
  clientToken,
  type DpopKey,
  dpopKey,
  dpopProof,
} from '../helpers/dpop.js';
import { initializeBody } from '../helpers/http.js';
import { createProbe, testServerFactory } from '../helpers/test-server.js';

describe('DPoP-bound tokens at the resource server (oidc-provider)', () => {
  let as: TestAuthServer;
  let served: Served;
  let key: DpopKey;
  let bound: string;

  /** A client-credentials token for the server, bound to `k` when given (RFC 9449 §5). */
  const token = (k?: DpopKey, resource = served.url): Promise<string> => clientToken(as, resource, k);

  async function call(authorization: string, dpop?: string): Promise<{ status: number; reason?: string }> {
    const { status, reason } = await answer(authorization, dpop);
    return reason === undefined ? { status } : { status, reason };
  }

  const answer = (authorization: string, dpop?: string): Promise<AuthAnswer> =>
    authPost(served.url, { authorization, ...(dpop === undefined ? {} : { dpop }) });

  /**
   * RFC 9449 §7.1: the refusal is a DPoP challenge with its error and the accepted algorithms, after a
   * Bearer challenge that keeps `resource_metadata` first (where the SDK's clients read it).
   */
  function assertDpopChallenge(challenge: string | null, error: string, what: string): void {
    assert.ok(challenge?.startsWith('Bearer resource_metadata="'), `${what}: ${challenge}`);
    const parsed = parseChallenge(challenge, 'dpop');
    assert.equal(parsed?.scheme, 'dpop', what);
    assert.equal(parsed?.error, error, what);
    assert.equal(
      parsed?.resourceMetadata,
      new URL('/.well-known/oauth-protected-resource/mcp', served.url).href,
      what,
    );
    assert.match(
      challenge ?? '',
      /, DPoP error="[a-z_]+", error_description="[^"]+", algs="[A-Za-z0-9 ]*ES256[A-Za-z0-9 ]*"$/,
      what,
    );
    assert.equal(
      parseChallenge(challenge, 'bearer')?.error,
      undefined,
      `${what}: the Bearer challenge carries no error`,
    );
  }

  before(async () => {
    as = await TestAuthServer.start({ keys: [await signingKey('dpop-as')], scopes: ['mcp:tools'] });
    served = await serve({
      createServer: testServerFactory(createProbe()),
      port: 0,
      oauth: (endpoint) => oauthResourceServer({ resource: endpoint, authorizationServers: [as.issuer] }),
    });
    key = await dpopKey();
    bound = await token(key);
  });
  after(async () => {
    await served?.close();
    await as?.stop();
  });

  test('the metadata says DPoP proofs are accepted (RFC 9728 §2)', async () => {
    const u = new URL(served.url);
    const prm = (await (
      await fetch(`${u.origin}/.well-known/oauth-protected-resource${u.pathname}`)
    ).json()) as {
      dpop_signing_alg_values_supported?: string[];
    };
    assert.ok(prm.dpop_signing_alg_values_supported?.includes('ES256'));
  });

  test('a bound token with a proof for this request and token is accepted', async () => {
    const p = await dpopProof(key, { htm: 'POST', htu: served.url, ath: ath(bound) });
    assert.deepEqual(await call(`DPoP ${bound}`, p), { status: 200 });
    // The query is not part of htu (RFC 9449 §4.2).
    const q = await dpopProof(key, { htm: 'POST', htu: `${served.url}?x=1`, ath: ath(bound) });
    assert.deepEqual(await call(`DPoP ${bound}`, q), { status: 200 });
  });

  test('every bad presentation is 401 token-dpop', async () => {
    const other = await dpopKey();
    const now = Math.floor(Date.now() / 1000);
    const good = { htm: 'POST', htu: served.url, ath: ath(bound) };
    const replayed = await dpopProof(key, good);
    assert.equal((await call(`DPoP ${bound}`, replayed)).status, 200);
    const cases: [string, string, string | undefined][] = [
      ['a bound token as a bearer token (§7.2)', `Bearer ${bound}`, await dpopProof(key, good)],
      ['no proof', `DPoP ${bound}`, undefined],
      ['a proof signed by another key', `DPoP ${bound}`, await dpopProof(other, good)],
      ['another method', `DPoP ${bound}`, await dpopProof(key, { ...good, htm: 'GET' })],
      ['another URL', `DPoP ${bound}`, await dpopProof(key, { ...good, htu: `${served.url}/x` })],
      ['another token', `DPoP ${bound}`, await dpopProof(key, { ...good, ath: ath('x') })],
      ['no ath', `DPoP ${bound}`, await dpopProof(key, { htm: 'POST', htu: served.url })],
      ['stale', `DPoP ${bound}`, await dpopProof(key, { ...good, iat: now - 3600 })],
      ['from the future', `DPoP ${bound}`, await dpopProof(key, { ...good, iat: now + 3600 })],
      ['wrong typ', `DPoP ${bound}`, await dpopProof(key, good, 'JWT')],
      ['two proofs', `DPoP ${bound}`, `${await dpopProof(key, good)}, ${await dpopProof(key, good)}`],
      ['replayed jti', `DPoP ${bound}`, replayed],
      ['not a JWT', `DPoP ${bound}`, 'nonsense'],
    ];
    for (const [what, authorization, dpop] of cases) {
      const a = await answer(authorization, dpop);
      assert.deepEqual({ status: a.status, reason: a.reason }, { status: 401, reason: 'token-dpop' }, what);
      assertDpopChallenge(a.challenge, what.includes('§7.2') ? 'invalid_token' : 'invalid_dpop_proof', what);
    }
  });

  test('an unbound token is a bearer token: accepted as Bearer, refused as DPoP', async () => {
    const plain = await token();
    assert.deepEqual(await call(`Bearer ${plain}`), { status: 200 });
    const p = await dpopProof(key, { htm: 'POST', htu: served.url, ath: ath(plain) });
    const a = await answer(`DPoP ${plain}`, p);
    assert.deepEqual({ status: a.status, reason: a.reason }, { status: 401, reason: 'token-dpop' });
    assertDpopChallenge(a.challenge, 'invalid_token', 'an unbound token as DPoP');
  });

  test('a DPoP stream re-authenticated every 100 ms (revalidateMs) stays open: its proof is not a replay of itself', async () => {
    const guarded = await serve({
      createServer: testServerFactory(createProbe()),
      port: 0,
      revalidateMs: 100,
      oauth: (endpoint) => oauthResourceServer({ resource: endpoint, authorizationServers: [as.issuer] }),
    });
    const ac = new AbortController();
    try {
      const t = await token(key, guarded.url);
      const base = {
        authorization: `DPoP ${t}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      };
      const post = async (body: unknown, sid?: string): Promise<Response> => {
        const dpop = await dpopProof(key, { htm: 'POST', htu: guarded.url, ath: ath(t) });
        return fetch(guarded.url, {
          method: 'POST',
          headers: { ...base, dpop, ...(sid === undefined ? {} : { 'mcp-session-id': sid }) },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(5000),
        });
      };
      const init = await post(initializeBody('2025-11-25', {}, 1));
      assert.equal(init.status, 200);
      await init.text();
      const sid = init.headers.get('mcp-session-id') ?? '';
      const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sid);
      assert.equal(note.status, 202);
      await note.text();
      const stream = await fetch(guarded.url, {
        headers: {
          ...base,
          accept: 'text/event-stream',
          'mcp-session-id': sid,
          dpop: await dpopProof(key, { htm: 'GET', htu: guarded.url, ath: ath(t) }),
        },
        signal: ac.signal,
      });
      assert.equal(stream.status, 200);
      let ended = false;
      const reader = stream.body?.getReader();
      const reading = (async () => {
        try {
          while (!(await reader?.read())?.done);
        } catch {
          // Aborted below.
        }
        ended = true;
      })();
      // Several revalidations happen meanwhile; each re-checked the same proof.
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal(ended, false, 'the stream was ended by a revalidation');
      ac.abort();
      await reading;
    } finally {
      ac.abort();
      await guarded.close();
    }
  });
});
