// The pure parts of the client's OAuth (src/client/auth/): challenge parsing, the discovery URL orders, the
// resource match, scope selection, PKCE and the token endpoint authentication choice.
import assert from 'node:assert/strict';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { describe, test } from 'node:test';
import { answerChallenge } from '../../src/client/auth/answer.js';
import { parseChallenge } from '../../src/client/auth/challenge.js';
import { DpopProver } from '../../src/client/auth/dpop.js';
import { resourceMatches, resourceMetadataUrls, serverMetadataUrls } from '../../src/client/auth/metadata.js';
import { randomToken, s256 } from '../../src/client/auth/pkce.js';
import { finalScope, initialScope, stepUpScope } from '../../src/client/auth/scopes.js';
import { chooseAuthMethod } from '../../src/client/auth/token.js';
import type { TransportContext } from '../../src/client/context.js';
import type { HttpResponse } from '../../src/client/http-client.js';

describe('WWW-Authenticate', () => {
  test('reads resource_metadata, scope and error of the Bearer challenge', () => {
    const c = parseChallenge(
      'Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://rs.example/.well-known/oauth-protected-resource/mcp"',
    );
    assert.deepEqual(c, {
      scheme: 'bearer',
      error: 'insufficient_scope',
      scope: 'files:read files:write',
      resourceMetadata: 'https://rs.example/.well-known/oauth-protected-resource/mcp',
      offersDpop: false,
    });
  });

  test('picks Bearer among several challenges; quoted escapes and token values', () => {
    const c = parseChallenge('Basic realm="x, y", DPoP algs="ES256", Bearer realm=mcp, scope="a\\"b"');
    assert.equal(c?.scheme, 'bearer');
    assert.equal(c?.scope, 'a"b');
    assert.equal(c?.offersDpop, true, 'the DPoP challenge is seen although Bearer is picked');
    assert.equal(parseChallenge('DPoP error=use_dpop_nonce')?.error, 'use_dpop_nonce');
    const both = parseChallenge(
      'Bearer resource_metadata="https://rs.example/prm", DPoP error=invalid_token',
      'dpop',
    );
    assert.equal(both?.error, 'invalid_token');
    assert.equal(both?.resourceMetadata, 'https://rs.example/prm', 'named in the other challenge only');
  });

  test('absent, oversized or garbage headers give no challenge, never a throw', () => {
    assert.equal(parseChallenge(null), undefined);
    assert.equal(parseChallenge(`Bearer scope="${'a'.repeat(9000)}"`), undefined);
    assert.equal(parseChallenge('Bearer scope="unterminated')?.scope, undefined);
    assert.equal(parseChallenge('===')?.scheme, undefined);
  });
});

describe('discovery order', () => {
  test('resource metadata: the challenge URL, then path-inserted, then root', () => {
    assert.deepEqual(resourceMetadataUrls(new URL('https://rs.example/a/mcp'), 'https://rs.example/prm'), [
      'https://rs.example/prm',
      'https://rs.example/.well-known/oauth-protected-resource/a/mcp',
      'https://rs.example/.well-known/oauth-protected-resource',
    ]);
    assert.deepEqual(resourceMetadataUrls(new URL('https://rs.example/'), 'javascript:alert(1)'), [
      'https://rs.example/.well-known/oauth-protected-resource',
    ]);
  });

  test('authorization server metadata: RFC 8414 then OIDC, path-inserted before path-appended', () => {
    assert.deepEqual(serverMetadataUrls(new URL('https://as.example/tenant1')), [
      'https://as.example/.well-known/oauth-authorization-server/tenant1',
      'https://as.example/.well-known/openid-configuration/tenant1',
      'https://as.example/tenant1/.well-known/openid-configuration',
    ]);
    assert.deepEqual(serverMetadataUrls(new URL('https://as.example')), [
      'https://as.example/.well-known/oauth-authorization-server',
      'https://as.example/.well-known/openid-configuration',
    ]);
  });

  test('a resource matches its own server and the paths below it, nothing else', () => {
    const server = new URL('https://rs.example/mcp');
    assert.ok(resourceMatches('https://rs.example/mcp', server));
    assert.ok(resourceMatches('https://rs.example', server));
    assert.ok(resourceMatches('https://RS.example:443/', server));
    assert.ok(!resourceMatches('https://rs.example/mc', server));
    assert.ok(!resourceMatches('https://rs.example/mcp/other', server));
    assert.ok(!resourceMatches('https://evil.example/mcp', server));
    assert.ok(!resourceMatches('http://rs.example/mcp', server));
    assert.ok(!resourceMatches('not a url', server));
  });
});

describe('scopes', () => {
  test('the challenge, else scopes_supported, else none', () => {
    assert.deepEqual(initialScope('a b', ['c']), ['a', 'b']);
    assert.deepEqual(initialScope(undefined, ['c']), ['c']);
    assert.deepEqual(initialScope('  ', undefined), []);
  });

  test('step-up asks for the union, previous first', () => {
    assert.deepEqual(stepUpScope('read', 'write read'), ['read', 'write']);
  });

  test('offline_access only when the authorization server lists it', () => {
    assert.equal(finalScope(['a'], ['a', 'offline_access'], true), 'a offline_access');
    assert.equal(finalScope(['a'], ['a', 'offline_access'], false), 'a');
    assert.equal(finalScope(['a', 'offline_access'], ['a'], true), 'a');
    assert.equal(finalScope([], ['offline_access'], true), undefined);
  });
});

describe('PKCE and client authentication', () => {
  test('S256 is BASE64URL(SHA-256(verifier)) without padding (RFC 7636 §4.2), checked against node:crypto', async () => {
    for (const verifier of [randomToken(32), randomToken(64), 'a'.repeat(43)]) {
      assert.match(verifier, /^[A-Za-z0-9_-]{43,}$/);
      assert.equal(await s256(verifier), createHash('sha256').update(verifier).digest('base64url'));
    }
  });

  test('the registered method, else what the server supports, else none for a public client', () => {
    const server = { issuer: 'x', authorization_endpoint: 'x', token_endpoint: 'x' };
    assert.equal(chooseAuthMethod({ client_id: 'c', client_secret: 's' }, server), 'client_secret_basic');
    assert.equal(
      chooseAuthMethod(
        { client_id: 'c', client_secret: 's' },
        { ...server, token_endpoint_auth_methods_supported: ['client_secret_post'] },
      ),
      'client_secret_post',
    );
    assert.equal(
      chooseAuthMethod(
        { client_id: 'c', client_secret: 's', token_endpoint_auth_method: 'client_secret_post' } as never,
        server,
      ),
      'client_secret_post',
    );
    assert.equal(chooseAuthMethod({ client_id: 'c' }, server), 'none');
  });
});

describe('DPoP proofs (RFC 9449 §4)', () => {
  const decode = (part: string | undefined): Record<string, unknown> =>
    JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

  test('signed with the key in the header, fresh jti, htu without query, ath, and the nonce once learned', async () => {
    const prover = await DpopProver.create(() => 1_700_000_000_000);
    const first = await prover.proof('POST', 'https://rs.example/mcp?x=1#f', 'token-123');
    const [h, p, sig] = first.split('.');
    const header = decode(h);
    const payload = decode(p);
    assert.equal(header['typ'], 'dpop+jwt');
    assert.equal(header['alg'], 'ES256');
    const jwk = header['jwk'] as Record<string, string>;
    assert.equal(jwk['d'], undefined, 'no private key in the header');
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    assert.ok(
      verify(
        'sha256',
        Buffer.from(`${h}.${p}`),
        { key, dsaEncoding: 'ieee-p1363' },
        Buffer.from(sig ?? '', 'base64url'),
      ),
    );
    assert.equal(payload['htm'], 'POST');
    assert.equal(payload['htu'], 'https://rs.example/mcp');
    assert.equal(payload['iat'], 1_700_000_000);
    assert.equal(payload['ath'], createHash('sha256').update('token-123').digest('base64url'));
    assert.equal(payload['nonce'], undefined);
    assert.ok(prover.rememberNonce('https://rs.example/other', 'n-1'));
    assert.ok(
      !prover.rememberNonce('https://rs.example/mcp', 'n-1'),
      'same nonce: nothing new to retry with',
    );
    const second = decode((await prover.proof('GET', 'https://rs.example/mcp')).split('.')[1]);
    assert.equal(second['nonce'], 'n-1');
    assert.equal(second['ath'], undefined);
    assert.notEqual(second['jti'], payload['jti']);
    const elsewhere = decode((await prover.proof('POST', 'https://as.example/token')).split('.')[1]);
    assert.equal(elsewhere['nonce'], undefined, 'nonces are per origin');
    // The token's hash is remembered for the next proof, and follows a new token (a refresh).
    for (const t of ['token-123', 'token-456', 'token-456', 'token-123']) {
      const next = decode((await prover.proof('POST', 'https://rs.example/mcp', t)).split('.')[1]);
      assert.equal(next['ath'], createHash('sha256').update(t).digest('base64url'), t);
    }
  });
});

describe('which challenge answers a request (RFC 9449 §7.1)', () => {
  /** answerChallenge's view of a transport: records what it asks of its auth half. */
  function fakeTransport(): { t: TransportContext; calls: string[] } {
    const calls: string[] = [];
    const auth = {
      rememberNonce: (_url: URL, nonce: string | null) => {
        calls.push(`nonce ${nonce}`);
        return true;
      },
      challenged: async (
        _m: string,
        status: number,
        challenge: { error?: string; scope?: string } | undefined,
      ) => {
        calls.push(`challenged ${status} ${challenge?.error} ${challenge?.scope}`);
      },
    };
    const t = {
      auth,
      url: new URL('https://rs.example/mcp'),
      options: { maxStepUps: 2, idleTimeoutMs: 1000 },
    };
    return { t: t as unknown as TransportContext, calls };
  }
  const answer = (status: number, headers: Record<string, string>): HttpResponse => ({
    status,
    header: (name) => headers[name] ?? null,
    body: null,
    text: async () => '',
  });
  const first = { afterAuth: false, stepUps: 0, afterNonce: false };

  test('a DPoP-bound request reads the DPoP challenge even when a Bearer one comes first', async () => {
    const { t, calls } = fakeTransport();
    const nonce = answer(401, {
      'www-authenticate': 'Bearer realm="mcp", DPoP algs="ES256", error="use_dpop_nonce"',
      'dpop-nonce': 'n-1',
    });
    assert.deepEqual(await answerChallenge(t, 'POST', nonce, 'DPoP tok', first), {
      ...first,
      afterNonce: true,
    });
    assert.deepEqual(calls, ['nonce n-1'], 'the nonce is taken, no new flow');
    const scope = answer(403, {
      'www-authenticate': 'Bearer realm="mcp", DPoP algs="ES256", error="insufficient_scope", scope="write"',
    });
    assert.deepEqual(await answerChallenge(t, 'POST', scope, 'DPoP tok', first), { ...first, stepUps: 1 });
    assert.deepEqual(calls.slice(1), ['challenged 403 insufficient_scope write']);
  });

  test('a Bearer request still reads the Bearer challenge', async () => {
    const { t, calls } = fakeTransport();
    const both = answer(403, {
      'www-authenticate':
        'DPoP algs="ES256", error="insufficient_scope", scope="x", Bearer error="insufficient_scope", scope="y"',
    });
    assert.deepEqual(await answerChallenge(t, 'POST', both, 'Bearer tok', first), { ...first, stepUps: 1 });
    assert.deepEqual(calls, ['challenged 403 insufficient_scope y']);
  });
});
