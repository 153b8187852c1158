/**
 * oauthResourceServer's option validation (once, with InvalidOptionError), its metadata paths, and
 * the Authorization header reader and challenge writer it answers with; then `authenticate` without
 * any network: token bindings and types, DPoP proofs on re-authentication and the replay cache's
 * bound, and the caches that keep an authorization server's outage or a flood of bad tokens cheap.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { bearerChallenge, readBearer, tokenInQuery } from '../../src/auth/challenge.js';
import { metadataUrls } from '../../src/auth/discovery.js';
import { DpopProofChecker } from '../../src/auth/dpop-proof.js';
import { AuthServerUnavailableError, InvalidTokenError } from '../../src/auth/errors.js';
import type { AuthRequest } from '../../src/auth/resource-server.js';
import { createFetchHandler } from '../../src/fetch/index.js';
import {
  createMcpHandler,
  InvalidOptionError,
  OAUTH_DEFAULTS,
  oauthResourceServer,
  SluiceError,
  serve,
} from '../../src/server/index.js';

const AS = 'https://as.example.com';

describe('oauthResourceServer options', () => {
  test('impossible options throw InvalidOptionError when it is built', () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ authorizationServers: [AS] }, /resource must be an absolute URL/],
      [{ resource: '/mcp', authorizationServers: [AS] }, /resource must be an absolute URL/],
      [{ resource: 'https://m.example/mcp#x', authorizationServers: [AS] }, /fragment/],
      [{ resource: 'ftp://m.example/mcp', authorizationServers: [AS] }, /http\(s\) URL/],
      [{ resource: 'https://m.example/mcp', authorizationServers: [] }, /at least one issuer/],
      [
        { resource: 'https://m.example/mcp', authorizationServers: ['http://as.example.com'] },
        /must be https/,
      ],
      [{ resource: 'https://m.example/mcp', authorizationServers: [AS], verify: 'magic' }, /verify must be/],
      [
        { resource: 'https://m.example/mcp', authorizationServers: [AS], verify: 'introspection' },
        /needs introspection/,
      ],
      [
        {
          resource: 'https://m.example/mcp',
          authorizationServers: [AS, 'https://as2.example.com'],
          verify: 'introspection',
          introspection: { clientId: 'a', clientSecret: 'b' },
        },
        /exactly one/,
      ],
      [
        { resource: 'https://m.example/mcp', authorizationServers: [AS], algorithms: ['HS256'] },
        /not an asymmetric/,
      ],
      [
        { resource: 'https://m.example/mcp', authorizationServers: [AS], algorithms: ['none'] },
        /not an asymmetric/,
      ],
      [
        { resource: 'https://m.example/mcp', authorizationServers: [AS], scopes: ['a b'] },
        /not a scope token/,
      ],
      [
        { resource: 'https://m.example/mcp', authorizationServers: [AS], clockToleranceS: -1 },
        /clockToleranceS/,
      ],
      [{ resource: 'https://m.example/mcp', authorizationServers: [AS], maxTokenBytes: 10 }, /maxTokenBytes/],
      [
        { resource: 'https://m.example/mcp', authorizationServers: [AS], toolScopes: { x: 'a' } },
        /toolScopes\.x/,
      ],
    ];
    for (const [options, message] of bad) {
      assert.throws(
        () => oauthResourceServer(options as never),
        (e: unknown) =>
          e instanceof InvalidOptionError && e.code === 'SLUICE_INVALID_OPTION' && message.test(e.message),
        JSON.stringify(options),
      );
    }
    // http is fine on a loopback host (development, tests).
    oauthResourceServer({
      resource: 'http://127.0.0.1:3000/mcp',
      authorizationServers: ['http://localhost:8080'],
    });
  });

  test('the bindings take oauth or authenticate, not both', async () => {
    const oauth = oauthResourceServer({ resource: 'https://m.example/mcp', authorizationServers: [AS] });
    const both = { createServer: () => undefined as never, oauth, authenticate: () => null };
    assert.throws(() => createMcpHandler(both), /pass oauth or authenticate, not both/);
    assert.throws(() => createFetchHandler(both), /pass oauth or authenticate, not both/);
    await assert.rejects(serve({ ...both, port: 0 }), /pass oauth or authenticate, not both/);
  });

  test('the metadata: paths, URL, document; the resource kept byte for byte', () => {
    const rs = oauthResourceServer({
      resource: 'https://m.example/tenant/mcp',
      authorizationServers: [AS],
      scopes: ['read'],
      toolScopes: { deploy: ['write', 'read'] },
      resourceName: 'Example',
    });
    assert.equal(rs.metadataUrl, 'https://m.example/.well-known/oauth-protected-resource/tenant/mcp');
    assert.deepEqual(rs.metadataPaths, [
      '/.well-known/oauth-protected-resource/tenant/mcp',
      '/.well-known/oauth-protected-resource',
    ]);
    assert.deepEqual(rs.metadata(), {
      resource: 'https://m.example/tenant/mcp',
      authorization_servers: [AS],
      bearer_methods_supported: ['header'],
      dpop_signing_alg_values_supported: OAUTH_DEFAULTS.algorithms,
      scopes_supported: ['read', 'write'],
      resource_name: 'Example',
    });
    assert.equal(rs.metadataAnswer('GET', '/mcp'), undefined);
    assert.equal(rs.metadataAnswer('HEAD', '/.well-known/oauth-protected-resource')?.body, '');
    const root = oauthResourceServer({ resource: 'https://m.example', authorizationServers: [AS] });
    assert.equal(root.resource, 'https://m.example', 'no slash added');
    assert.deepEqual(root.metadataPaths, ['/.well-known/oauth-protected-resource']);
  });

  test('authorization server metadata URLs in RFC 8414 then OpenID order', () => {
    assert.deepEqual(metadataUrls('https://as.example.com'), [
      'https://as.example.com/.well-known/oauth-authorization-server',
      'https://as.example.com/.well-known/openid-configuration',
    ]);
    assert.deepEqual(metadataUrls('https://as.example.com/realms/mcp'), [
      'https://as.example.com/.well-known/oauth-authorization-server/realms/mcp',
      'https://as.example.com/.well-known/openid-configuration/realms/mcp',
      'https://as.example.com/realms/mcp/.well-known/openid-configuration',
    ]);
  });
});

describe('Authorization header and challenges', () => {
  test('readBearer', () => {
    assert.deepEqual(readBearer(undefined), { kind: 'missing' });
    assert.deepEqual(readBearer('  '), { kind: 'missing' });
    assert.deepEqual(readBearer('Bearer abc.def-ghi_~+/='), {
      kind: 'token',
      token: 'abc.def-ghi_~+/=',
      scheme: 'bearer',
    });
    assert.deepEqual(readBearer('bearer abc'), { kind: 'token', token: 'abc', scheme: 'bearer' });
    // RFC 9449 §7.1: a DPoP-bound token comes with its own scheme.
    assert.deepEqual(readBearer('DPoP abc'), { kind: 'token', token: 'abc', scheme: 'dpop' });
    assert.equal(readBearer('DPoP a b').kind, 'malformed');
    assert.deepEqual(readBearer('Basic dXNlcg=='), { kind: 'other-scheme' });
    assert.equal(readBearer('Bearer a b').kind, 'malformed');
    assert.equal(readBearer('Bearer a, Bearer b').kind, 'malformed');
    assert.equal(readBearer('Bearer').kind, 'malformed');
    assert.equal(readBearer('Bearer "quoted"').kind, 'malformed');
    assert.equal(readBearer('(nonsense)').kind, 'malformed');
  });

  test('tokenInQuery', () => {
    assert.equal(tokenInQuery('/mcp'), false);
    assert.equal(tokenInQuery('/mcp?x=1'), false);
    assert.equal(tokenInQuery('/mcp?x=1&access_token=t'), true);
  });

  test('bearerChallenge quotes values and drops what RFC 6750 forbids in them', () => {
    assert.equal(
      bearerChallenge({
        resourceMetadata: 'https://m.example/.well-known/oauth-protected-resource/mcp',
        scopes: ['a', 'b'],
        error: 'invalid_token',
        description: 'bad "token"\\\n',
      }),
      'Bearer resource_metadata="https://m.example/.well-known/oauth-protected-resource/mcp", scope="a b", error="invalid_token", error_description="bad token"',
    );
  });

  test('the two token errors tell each other apart (instanceof and code)', () => {
    const invalid = new InvalidTokenError('expired', 'x');
    const down = new AuthServerUnavailableError('y', 5);
    assert.ok(invalid instanceof SluiceError && down instanceof SluiceError);
    assert.ok(invalid instanceof InvalidTokenError && !(invalid instanceof AuthServerUnavailableError));
    assert.ok(down instanceof AuthServerUnavailableError && !(down instanceof InvalidTokenError));
    assert.equal(invalid.code, 'SLUICE_INVALID_TOKEN');
    assert.equal(down.code, 'SLUICE_AUTH_SERVER_UNAVAILABLE');
  });
});

describe('authenticate: bindings, proofs and outages (no network)', () => {
  const RESOURCE = 'https://m.example/mcp';

  function request(headers: Record<string, string>, method = 'POST'): AuthRequest {
    return { method, url: '/mcp', header: (n) => headers[n] };
  }

  /** A resource server whose verifier accepts any token and answers these claims. */
  function withClaims(claims: Record<string, unknown>, now: () => number = Date.now) {
    return oauthResourceServer({
      resource: RESOURCE,
      authorizationServers: [AS],
      now,
      verify: async () => ({
        issuer: AS,
        audience: [RESOURCE],
        subject: 'alice',
        scopes: [],
        expiresAt: undefined,
        claims,
      }),
    });
  }

  test('a token bound to a confirmation method this server cannot check is refused (RFC 8705 §3, RFC 7800 §3)', async () => {
    const rs = withClaims({ cnf: { 'x5t#S256': 'bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2' } });
    const r = await rs.authenticate(request({ authorization: 'Bearer abc' }));
    assert.equal((r as { status?: number }).status, 401);
    assert.equal((r as { reason?: string }).reason, 'token-binding');
    assert.match(
      (r as { headers: Record<string, string> }).headers['www-authenticate'] ?? '',
      /invalid_token/,
    );
  });

  test('a DPoP request re-authenticated while it lasts (revalidateMs) keeps its proof; a replay of it is still refused (RFC 9449 §11.1)', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    let clock = Date.now();
    const rs = withClaims({ cnf: { jkt: await calculateJwkThumbprint(jwk, 'sha256') } }, () => clock);
    const ath = createHash('sha256').update('abc').digest('base64url');
    const proof = await new SignJWT({ htm: 'GET', htu: RESOURCE, ath, jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .setIssuedAt(Math.floor(clock / 1000))
      .sign(privateKey);
    const headers = { authorization: 'DPoP abc', dpop: proof };
    const stream = request(headers, 'GET');
    assert.equal(((await rs.authenticate(stream)) as { principal?: string }).principal, 'alice');
    // The core re-runs authenticate with the same request while its stream lasts, long after the
    // proof's freshness window: the proof was checked when the request arrived.
    clock += 3_600_000;
    assert.equal(((await rs.authenticate(stream)) as { principal?: string }).principal, 'alice');
    // Another request carrying the same proof is a replay.
    const replay = await rs.authenticate(request(headers, 'GET'));
    assert.equal((replay as { reason?: string }).reason, 'token-dpop');
  });

  test('the DPoP replay cache never forgets a live proof id: when full, new proofs wait, replays stay refused (RFC 9449 §11.1)', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const jkt = await calculateJwkThumbprint(jwk, 'sha256');
    let clock = Date.now();
    const checker = new DpopProofChecker({
      resource: RESOURCE,
      algorithms: ['ES256'],
      now: () => clock,
      maxRemembered: 3,
    });
    const ath = createHash('sha256').update('abc').digest('base64url');
    const proof = (): Promise<string> =>
      new SignJWT({ htm: 'POST', htu: RESOURCE, ath, jti: randomUUID() })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .setIssuedAt(Math.floor(clock / 1000))
        .sign(privateKey);
    const first = await proof();
    assert.equal(await checker.check(first, 'POST', 'abc', jkt), undefined);
    for (let i = 0; i < 2; i++)
      assert.equal(await checker.check(await proof(), 'POST', 'abc', jkt), undefined);
    // Full of live ids: the next proof is declined for now, not admitted by forgetting `first`.
    assert.deepEqual(await checker.check(await proof(), 'POST', 'abc', jkt), {
      crowded: true,
      retryAfterS: 300,
    });
    assert.equal(await checker.check(first, 'POST', 'abc', jkt), 'the DPoP proof was used before');
    // Once the window has passed, the ids are forgotten and new proofs are taken again.
    clock += 301_000;
    assert.equal(await checker.check(await proof(), 'POST', 'abc', jkt), undefined);
  });

  test('introspection: a stream of refused tokens does not push accepted ones out of the cache', async () => {
    const asked: string[] = [];
    const rs = oauthResourceServer({
      resource: RESOURCE,
      authorizationServers: [AS],
      verify: 'introspection',
      introspection: { clientId: 'rs', clientSecret: 's', maxCacheEntries: 2 },
      fetch: async (u, init) => {
        if (u === `${AS}/.well-known/oauth-authorization-server`) {
          return Response.json({ issuer: AS, introspection_endpoint: `${AS}/introspect` });
        }
        const token = new URLSearchParams(String(init?.body)).get('token') ?? '';
        asked.push(token);
        return Response.json(
          token === 'good'
            ? { active: true, iss: AS, aud: RESOURCE, sub: 'alice', exp: Math.floor(Date.now() / 1000) + 600 }
            : { active: false },
        );
      },
    });
    const as = (t: string) => rs.authenticate(request({ authorization: `Bearer ${t}` }));
    assert.equal(((await as('good')) as { principal?: string }).principal, 'alice');
    for (const bad of ['bad1', 'bad2', 'bad3'])
      assert.equal(((await as(bad)) as { status?: number }).status, 401);
    assert.equal(((await as('good')) as { principal?: string }).principal, 'alice');
    assert.deepEqual(
      asked,
      ['good', 'bad1', 'bad2', 'bad3'],
      'the accepted token was answered from the cache',
    );
  });

  test('a JWT that declares another type is not an access token (RFC 8725 §3.11, RFC 9068 §4)', async () => {
    const rs = oauthResourceServer({
      resource: RESOURCE,
      authorizationServers: [AS],
      fetch: async () => new Response('', { status: 404 }),
    });
    const { privateKey } = await generateKeyPair('RS256');
    const signed = (typ: string): Promise<string> =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ })
        .setIssuer(AS)
        .setAudience(RESOURCE)
        .setSubject('alice')
        .setExpirationTime('10m')
        .sign(privateKey);
    for (const typ of ['dpop+jwt', 'logout+jwt', 'token-introspection+jwt']) {
      const r = await rs.authenticate(request({ authorization: `Bearer ${await signed(typ)}` }));
      assert.equal((r as { reason?: string }).reason, 'token-type', typ);
    }
    // Access token types go on to the key lookup (no authorization server here: 503).
    for (const typ of ['at+jwt', 'application/at+jwt', 'JWT']) {
      const r = await rs.authenticate(request({ authorization: `Bearer ${await signed(typ)}` }));
      assert.equal((r as { status?: number }).status, 503, typ);
    }
  });

  test('introspection: requests arriving together with one token ask the authorization server once', async () => {
    let asked = 0;
    const rs = oauthResourceServer({
      resource: RESOURCE,
      authorizationServers: [AS],
      verify: 'introspection',
      introspection: { clientId: 'rs', clientSecret: 's' },
      fetch: async (u) => {
        if (u === `${AS}/.well-known/oauth-authorization-server`) {
          return Response.json({ issuer: AS, introspection_endpoint: `${AS}/introspect` });
        }
        asked++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        return Response.json({ active: true, iss: AS, aud: RESOURCE, sub: 'alice' });
      },
    });
    const all = await Promise.all(
      Array.from({ length: 5 }, () => rs.authenticate(request({ authorization: 'Bearer burst' }))),
    );
    for (const r of all) assert.equal((r as { principal?: string }).principal, 'alice');
    assert.equal(asked, 1);
  });

  test('a failing JWKS endpoint is asked at most once per retryAfterS, however many tokens arrive', async () => {
    let clock = Date.now();
    const jwks: string[] = [];
    const rs = oauthResourceServer({
      resource: RESOURCE,
      authorizationServers: [AS],
      now: () => clock,
      jwtCacheEntries: 0,
      fetch: async (u) => {
        if (u === `${AS}/.well-known/oauth-authorization-server`) {
          return Response.json({ issuer: AS, jwks_uri: `${AS}/jwks` });
        }
        if (u === `${AS}/jwks`) {
          jwks.push(u);
          return new Response('down', { status: 500 });
        }
        return new Response('', { status: 404 });
      },
    });
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
      .setIssuer(AS)
      .setAudience(RESOURCE)
      .setSubject('alice')
      .setExpirationTime('10m')
      .sign(privateKey);
    for (let i = 0; i < 5; i++) {
      const r = await rs.authenticate(request({ authorization: `Bearer ${token}` }));
      assert.equal((r as { status?: number }).status, 503, `request ${i}`);
    }
    assert.equal(jwks.length, 1, 'one JWKS fetch per window');
    clock += 5_001;
    await rs.authenticate(request({ authorization: `Bearer ${token}` }));
    assert.equal(jwks.length, 2, 'asked again once the window has passed');
  });
});
