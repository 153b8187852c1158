/**
 * The resource server's verifiers against a real authorization server (oidc-provider): an
 * unreachable JWKS or metadata endpoint answers 503 + Retry-After (never 401) and is asked at most
 * once per window; key rotation is followed with one refetch, while unknown `kid`s cannot make it
 * refetch faster than the cooldown; RFC 7662 introspection with its bounded cache and revocation;
 * and a token's `exp` ends the long-lived stream it opened.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import {
  type OAuthResourceServerOptions,
  oauthResourceServer,
  type Served,
  serve,
} from '../../src/server/index.js';
import { RS_CLIENT, type SigningKey, signingKey, TestAuthServer } from '../helpers/auth-server.js';
import {
  ACCEPT_BOTH,
  errorOf,
  initializeBody,
  RawSession,
  type Reply,
  send,
  toolCall,
} from '../helpers/http.js';
import { createProbe, testServerFactory } from '../helpers/test-server.js';

const SCOPES = ['mcp:read'];

/** Resolves once `ms` have passed since `since` (epoch ms). */
function until(since: number, ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, since + ms - Date.now())));
}

/** The real fetch, with every URL it was asked for recorded. */
function countingFetch(): { calls: string[]; fetch: (u: string, i?: RequestInit) => Promise<Response> } {
  const calls: string[] = [];
  return {
    calls,
    fetch: (u, i) => {
      calls.push(u);
      return fetch(u, i);
    },
  };
}

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of closers.reverse()) await c();
});

async function authServer(
  keys: SigningKey[],
  o: { port?: number; opaque?: boolean } = {},
): Promise<TestAuthServer> {
  const as = await TestAuthServer.start({
    keys,
    scopes: SCOPES,
    ...(o.port === undefined ? {} : { port: o.port }),
    ...(o.opaque ? { accessTokenFormat: 'opaque' as const } : {}),
  });
  closers.push(() => as.stop());
  return as;
}

async function mcp(options: (url: string) => OAuthResourceServerOptions): Promise<Served> {
  const served = await serve({
    createServer: testServerFactory(createProbe()),
    port: 0,
    oauth: (url) => oauthResourceServer(options(url)),
  });
  closers.push(async () => {
    await served.close();
  });
  return served;
}

function initialize(url: string, token: string): Promise<Reply> {
  return send(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, authorization: `Bearer ${token}` },
    body: JSON.stringify(initializeBody()),
  });
}

function assertUnavailable(r: Reply, retryAfterS = 5): void {
  assert.equal(r.status, 503, r.text);
  assert.equal(errorOf(r).reason, 'authorization-server-unavailable');
  assert.equal(r.headers['retry-after'], String(retryAfterS));
  assert.equal(r.headers['www-authenticate'], undefined, 'an outage is not a challenge');
}

function signed(
  k: SigningKey,
  kid: string,
  iss: string,
  aud: string,
  exp: number | string = '10m',
): Promise<string> {
  return new SignJWT({ scope: 'mcp:read' })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
    .setIssuer(iss)
    .setAudience(aud)
    .setSubject('someone')
    .setExpirationTime(exp)
    .sign(k.privateKey);
}

describe('JWT verification: outages and key rotation', () => {
  test('a JWKS outage answers 503 + Retry-After, never 401, and recovers once Retry-After has passed', async () => {
    const k1 = await signingKey('k1');
    let as = await authServer([k1]);
    const port = as.port;
    // A JWKS that is never fresh and no verified-token cache: every verification fetches the
    // key set, so the outage is seen at once.
    const served = await mcp((url) => ({
      resource: url,
      authorizationServers: [as.issuer],
      jwksCacheMaxAgeMs: 0,
      jwtCacheEntries: 0,
      retryAfterS: 1,
    }));
    const token = await as.token(served.url, 'mcp:read');
    assert.equal((await initialize(served.url, token)).status, 200);
    await as.stop();
    assertUnavailable(await initialize(served.url, token), 1);
    const failed = Date.now();
    assert.equal(served.handler.stats().sessions.active, 1);
    as = await authServer([k1], { port });
    // A failed JWKS is not asked again within Retry-After (jwt-verifier.ts, backedOff).
    await until(failed, 1000);
    assert.equal((await initialize(served.url, token)).status, 200);
  });

  test('a verified token is remembered: an outage does not refuse it, a token never seen gets 503', async () => {
    const k1 = await signingKey('k1');
    const as = await authServer([k1]);
    const counted = countingFetch();
    const served = await mcp((url) => ({
      resource: url,
      authorizationServers: [as.issuer],
      jwksCacheMaxAgeMs: 0,
      fetch: counted.fetch,
    }));
    const token = await as.token(served.url, 'mcp:read');
    const fresh = await as.token(served.url, 'mcp:read');
    assert.equal((await initialize(served.url, token)).status, 200);
    const fetched = counted.calls.length;
    await as.stop();
    for (let i = 0; i < 3; i++) assert.equal((await initialize(served.url, token)).status, 200);
    assert.equal(counted.calls.length, fetched, 'no key set fetched for a token verified moments ago');
    assertUnavailable(await initialize(served.url, fresh));
  });

  test('unreachable metadata: 503, and the authorization server is asked once per Retry-After window', async () => {
    const as = await authServer([await signingKey('k1')]);
    const issuer = as.issuer;
    await as.stop();
    const counted = countingFetch();
    const served = await mcp((url) => ({
      resource: url,
      authorizationServers: [issuer],
      fetch: counted.fetch,
    }));
    const token = await signed(await signingKey('k1'), 'k1', issuer, served.url);
    for (let i = 0; i < 5; i++) assertUnavailable(await initialize(served.url, token));
    assert.deepEqual(counted.calls, [`${issuer}/.well-known/oauth-authorization-server`]);
  });

  test('key rotation: a token signed by a new key is accepted after one JWKS refetch', async () => {
    const k1 = await signingKey('k1');
    const k2 = await signingKey('k2');
    let as = await authServer([k1]);
    const counted = countingFetch();
    const served = await mcp((url) => ({
      resource: url,
      authorizationServers: [as.issuer],
      jwksCooldownMs: 0,
      fetch: counted.fetch,
    }));
    const jwksFetches = (): number => counted.calls.filter((u) => u.endsWith('/jwks')).length;
    const old = await as.token(served.url, 'mcp:read');
    assert.equal((await initialize(served.url, old)).status, 200);
    assert.equal(jwksFetches(), 1);
    // The authorization server rotates: k2 signs from now on, k1 is still published.
    await as.stop();
    as = await authServer([k2, k1], { port: as.port });
    const fresh = await as.token(served.url, 'mcp:read');
    assert.match(Buffer.from(fresh.split('.')[0] as string, 'base64url').toString(), /"kid":"k2"/);
    assert.equal((await initialize(served.url, fresh)).status, 200);
    assert.equal(jwksFetches(), 2);
    assert.equal((await initialize(served.url, old)).status, 200);
    assert.equal((await initialize(served.url, fresh)).status, 200);
    assert.equal(jwksFetches(), 2, 'known keys come from the cache');
  });

  test('unknown kids cannot make the JWKS be fetched faster than the cooldown', async () => {
    const k1 = await signingKey('k1');
    const as = await authServer([k1]);
    const counted = countingFetch();
    const served = await mcp((url) => ({
      resource: url,
      authorizationServers: [as.issuer],
      fetch: counted.fetch,
    }));
    assert.equal((await initialize(served.url, await as.token(served.url, 'mcp:read'))).status, 200);
    const stranger = await signingKey('x');
    for (let i = 0; i < 10; i++) {
      const r = await initialize(served.url, await signed(stranger, `forged-${i}`, as.issuer, served.url));
      assert.equal(r.status, 401);
      assert.equal(errorOf(r).reason, 'token-unknown-key');
    }
    assert.equal(counted.calls.filter((u) => u.endsWith('/jwks')).length, 1);
  });

  test("the token's exp ends the GET stream it opened (expiresAt), not exp plus the clock tolerance", async () => {
    const k1 = await signingKey('k1');
    const as = await authServer([k1]);
    // The default tolerance, 30 s: a stream that lasted it out would miss the 15 s deadline below.
    const served = await mcp((url) => ({ resource: url, authorizationServers: [as.issuer] }));
    const exp = Math.floor(Date.now() / 1000) + 3;
    const token = await signed(k1, 'k1', as.issuer, served.url, exp);
    const s = new RawSession(served.url, { authorization: `Bearer ${token}` });
    await s.init();
    const stream = await s.get();
    assert.equal(stream.status, 200);
    await stream.finished(15_000, 'the GET stream ends when the token expires');
    const ended = Date.now();
    assert.ok(ended >= exp * 1000 - 50, `ended ${exp * 1000 - ended} ms before exp`);
  });

  test('a token past its exp but inside the clock tolerance opens a stream that lasts until the tolerance ends', async () => {
    // Accepted because the clocks may differ by clockToleranceS (RFC 7519 §4.1.4): ending its stream
    // at exp, at once, sent the client into a reconnect loop with the token this server still accepts.
    const k1 = await signingKey('k1');
    const as = await authServer([k1]);
    const served = await mcp((url) => ({
      resource: url,
      authorizationServers: [as.issuer],
      clockToleranceS: 3,
    }));
    const exp = Math.floor(Date.now() / 1000) - 1;
    const token = await signed(k1, 'k1', as.issuer, served.url, exp);
    const s = new RawSession(served.url, { authorization: `Bearer ${token}` });
    await s.init();
    const stream = await s.get();
    assert.equal(stream.status, 200);
    await stream.finished(15_000, 'the GET stream ends when the tolerance does');
    const ended = Date.now();
    assert.ok(ended >= (exp + 3) * 1000 - 50, `ended ${(exp + 3) * 1000 - ended} ms before exp + tolerance`);
  });
});

describe('revalidation of long-lived streams (revalidateMs)', () => {
  /** An endpoint that introspects its tokens at `as` (opaque ones), closed after the file. */
  async function introspecting(
    as: TestAuthServer,
    cacheTtlMs: number,
    revalidateMs?: number,
  ): Promise<Served> {
    const served = await serve({
      createServer: testServerFactory(createProbe()),
      port: 0,
      ...(revalidateMs === undefined ? {} : { revalidateMs }),
      oauth: (url) =>
        oauthResourceServer({
          resource: url,
          authorizationServers: [as.issuer],
          verify: 'introspection',
          introspection: { clientId: RS_CLIENT.client_id, clientSecret: RS_CLIENT.client_secret, cacheTtlMs },
        }),
    });
    closers.push(async () => {
      await served.close();
    });
    return served;
  }

  /**
   * Opens a GET stream with a fresh token, runs `meanwhile`, revokes the token: the stream must end,
   * and the session's next POST gets 401 token-inactive.
   */
  async function revokedEndsStream(
    as: TestAuthServer,
    served: Served,
    meanwhile: (stream: Reply) => Promise<void> = async () => undefined,
  ): Promise<void> {
    const token = await as.token(served.url, 'mcp:read');
    const s = new RawSession(served.url, { authorization: `Bearer ${token}` });
    await s.init();
    const stream = await s.get();
    assert.equal(stream.status, 200);
    await meanwhile(stream);
    await as.revoke(token);
    await stream.finished(10_000, 'the GET stream ends once a re-check finds the token revoked');
    const r = await s.post(toolCall('echo', { text: 'after' }));
    assert.equal(r.status, 401);
    assert.equal(errorOf(r).reason, 'token-inactive');
  }

  test('a revoked token ends the GET stream it opened; its next POST gets 401', async () => {
    const as = await authServer([await signingKey('k1')], { opaque: true });
    await revokedEndsStream(as, await introspecting(as, 0, 200));
  });

  test('introspected tokens: a revoked one ends its stream within the cache TTL, with no revalidateMs set', async () => {
    // RFC 7662 §4: an introspected token can be revoked before it expires; its streams are re-checked
    // as often as its answer is cached (here 300 ms), not only at exp (an hour away) or never.
    const as = await authServer([await signingKey('k1')], { opaque: true });
    await revokedEndsStream(as, await introspecting(as, 300), async (stream) => {
      // Still active: re-checked, and kept.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(stream.ended, false, 'an active token keeps its stream through re-checks');
    });
  });

  test('an authorization server outage during revalidation leaves the stream open', async () => {
    const k1 = await signingKey('k1');
    let as = await authServer([k1]);
    const port = as.port;
    const served = await serve({
      createServer: testServerFactory(createProbe()),
      port: 0,
      revalidateMs: 100,
      oauth: (url) =>
        oauthResourceServer({
          resource: url,
          authorizationServers: [as.issuer],
          jwksCacheMaxAgeMs: 0,
          jwtCacheEntries: 0,
          retryAfterS: 1,
        }),
    });
    closers.push(async () => {
      await served.close();
    });
    const token = await as.token(served.url, 'mcp:read');
    const s = new RawSession(served.url, { authorization: `Bearer ${token}` });
    await s.init();
    const stream = await s.get();
    assert.equal(stream.status, 200);
    await as.stop();
    // Revalidation runs every 100 ms and meets a 503 each time; a POST in the meantime proves the
    // outage is seen (503, not 401) while the stream stays.
    assertUnavailable(await s.post(toolCall('echo', { text: 'during' })), 1);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(stream.ended, false, 'an outage is no verdict on the token');
    as = await authServer([k1], { port });
    // The last failed JWKS fetch was at most Retry-After (1 s) ago; after that it is asked again.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal((await s.post(toolCall('echo', { text: 'after' }))).status, 200);
    stream.destroy();
  });
});

describe('RFC 7662 introspection (opaque tokens)', () => {
  test('active tokens accepted, revoked ones refused, foreign audiences refused', async () => {
    const as = await authServer([await signingKey('k1')], { opaque: true });
    const served = await mcp((url) => ({
      resource: url,
      authorizationServers: [as.issuer],
      verify: 'introspection',
      introspection: { clientId: RS_CLIENT.client_id, clientSecret: RS_CLIENT.client_secret, cacheTtlMs: 0 },
    }));
    const token = await as.token(served.url, 'mcp:read');
    assert.doesNotMatch(token, /\./, 'an opaque token');
    const s = new RawSession(served.url, { authorization: `Bearer ${token}` });
    await s.init();
    assert.equal((await s.post(toolCall('echo', { text: 'a' }))).status, 200);
    await as.revoke(token);
    const r = await s.post(toolCall('echo', { text: 'b' }));
    assert.equal(r.status, 401);
    assert.equal(errorOf(r).reason, 'token-inactive');
    const foreign = await initialize(served.url, await as.token('https://other.example/mcp', 'mcp:read'));
    assert.equal(foreign.status, 401);
    assert.equal(errorOf(foreign).reason, 'token-audience');
    assert.equal((await initialize(served.url, 'never-issued-token')).status, 401);
  });

  test('answers are cached (bounded, never past the TTL); an outage is 503', async () => {
    const as = await authServer([await signingKey('k1')], { opaque: true });
    const counted = countingFetch();
    const served = await mcp((url) => ({
      resource: url,
      authorizationServers: [as.issuer],
      verify: 'introspection',
      fetch: counted.fetch,
      introspection: {
        clientId: RS_CLIENT.client_id,
        clientSecret: RS_CLIENT.client_secret,
        cacheTtlMs: 60_000,
        maxCacheEntries: 2,
      },
    }));
    const asked = (): number => counted.calls.filter((u) => u.endsWith('/token/introspection')).length;
    const [a, b, c] = [
      await as.token(served.url, 'mcp:read'),
      await as.token(served.url, 'mcp:read'),
      await as.token(served.url, 'mcp:read'),
    ] as [string, string, string];
    for (let i = 0; i < 3; i++) assert.equal((await initialize(served.url, a)).status, 200);
    assert.equal(asked(), 1);
    assert.equal((await initialize(served.url, b)).status, 200);
    assert.equal((await initialize(served.url, c)).status, 200);
    assert.equal(asked(), 3);
    // Two entries at most: a was the oldest and was dropped.
    assert.equal((await initialize(served.url, a)).status, 200);
    assert.equal(asked(), 4);
    await as.stop();
    // Cached answers still hold; a token never seen cannot be judged.
    assert.equal((await initialize(served.url, a)).status, 200);
    assertUnavailable(await initialize(served.url, 'unseen-token'));
  });
});
