/**
 * Sluice as an OAuth 2.1 resource server against a real authorization server (oidc-provider on
 * 127.0.0.1, test/helpers/auth-server.ts): the protected resource metadata at both well-known URLs,
 * tokens it issued for this resource accepted on both eras and both bindings, every bad input
 * refused with its own status and challenge and no state left behind, per-tool scopes, and the
 * official SDK v1 client discovering and authorizing by itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  Client as V2Client,
  ClientCredentialsProvider as V2ClientCredentialsProvider,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SignJWT } from 'jose';
import {
  OAUTH_DEFAULTS,
  oauthResourceServer,
  type Served,
  type ServeOptions,
  serve,
} from '../../src/server/index.js';
import { type SigningKey, signingKey, TEST_CLIENT, TestAuthServer } from '../helpers/auth-server.js';
import { withDeadline } from '../helpers/deadline.js';
import {
  ACCEPT_BOTH,
  errorOf,
  initializeBody,
  RawSession,
  type Reply,
  send,
  toolCall,
} from '../helpers/http.js';
import { modernBody, modernSend } from '../helpers/modern.js';
import { serveFetch } from '../helpers/serve-fetch.js';
import { createProbe, testServerFactory } from '../helpers/test-server.js';

const SCOPES = ['mcp:read', 'mcp:write', 'mcp:admin'];

function challenge(r: Reply): Record<string, string> {
  const h = r.headers['www-authenticate'];
  assert.equal(typeof h, 'string', `no WWW-Authenticate on ${r.status}`);
  assert.match(h as string, /^Bearer /);
  const out: Record<string, string> = {};
  for (const m of (h as string).slice(7).matchAll(/([a-z_]+)="([^"]*)"/g))
    out[m[1] as string] = m[2] as string;
  return out;
}

function b64url(v: unknown): string {
  return Buffer.from(JSON.stringify(v)).toString('base64url');
}

for (const binding of ['node', 'fetch'] as const) {
  describe(`OAuth resource server (${binding} binding, oidc-provider)`, () => {
    let as: TestAuthServer;
    let key: SigningKey;
    let served: Served;
    let url: string;
    let prm: string;
    const start = (o: ServeOptions): Promise<Served> => (binding === 'node' ? serve(o) : serveFetch(o));

    before(async () => {
      key = await signingKey('k1');
      as = await TestAuthServer.start({ keys: [key], scopes: SCOPES });
      served = await start({
        createServer: testServerFactory(createProbe()),
        port: 0,
        oauth: (endpoint) =>
          oauthResourceServer({
            resource: endpoint,
            authorizationServers: [as.issuer],
            scopes: ['mcp:read'],
            toolScopes: { progress: ['mcp:write'] },
          }),
      });
      url = served.url;
      const u = new URL(url);
      prm = `${u.origin}/.well-known/oauth-protected-resource${u.pathname}`;
    });
    after(async () => {
      await served?.close();
      await as?.stop();
    });

    const sessions = (): number => served.handler.stats().sessions.active;
    const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
    const initWith = (headers: Record<string, string>, target = url): Promise<Reply> =>
      send(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...headers },
        body: JSON.stringify(initializeBody()),
      });
    /** A token we sign with the authorization server's own key, with these claims changed. */
    const forged = (
      claims: Record<string, unknown>,
      exp = Math.floor(Date.now() / 1000) + 600,
    ): Promise<string> =>
      new SignJWT({ scope: 'mcp:read', client_id: 'forger', ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'at+jwt' })
        .setIssuer(typeof claims['iss'] === 'string' ? claims['iss'] : as.issuer)
        .setAudience(typeof claims['aud'] === 'string' ? claims['aud'] : url)
        .setSubject('forger')
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(key.privateKey);

    test('the protected resource metadata is served path-inserted and at the root (RFC 9728 §3)', async () => {
      for (const where of [prm, `${new URL(url).origin}/.well-known/oauth-protected-resource`]) {
        const r = await send(where);
        assert.equal(r.status, 200, where);
        assert.equal(r.headers['access-control-allow-origin'], '*');
        assert.deepEqual(r.json(), {
          resource: url,
          authorization_servers: [as.issuer],
          bearer_methods_supported: ['header'],
          dpop_signing_alg_values_supported: OAUTH_DEFAULTS.algorithms,
          scopes_supported: ['mcp:read', 'mcp:write'],
        });
      }
      assert.equal((await send(prm, { method: 'POST', body: '{}' })).status, 405);
    });

    test('no token: 401 with resource_metadata and scope, no error code (RFC 6750 §3.1)', async () => {
      const r = await initWith({});
      assert.equal(r.status, 401);
      assert.equal(errorOf(r).reason, 'unauthorized');
      assert.deepEqual(challenge(r), { resource_metadata: prm, scope: 'mcp:read' });
      // Another scheme is no bearer token either.
      const basic = await initWith({ authorization: 'Basic dXNlcjpwYXNz' });
      assert.equal(basic.status, 401);
      assert.equal(challenge(basic)['error'], undefined);
      assert.equal(sessions(), 0);
    });

    test('a token the authorization server issued for this resource works on a 2025 session', async () => {
      const token = await as.token(url, 'mcp:read');
      const s = new RawSession(url, bearer(token));
      await s.init();
      const r = await s.post(toolCall('echo', { text: 'hi' }));
      assert.equal(r.status, 200);
      assert.equal(r.json().result.content[0].text, 'hi');
      // The session is bound to its principal: another client's valid token cannot use it.
      const other = await as.register();
      const foreign = await s.post(
        toolCall('echo', { text: 'x' }),
        bearer(await as.token(url, 'mcp:read', other)),
      );
      assert.equal(foreign.status, 404);
      assert.equal((await s.delete()).status, 204);
    });

    test('a token the authorization server issued for this resource works on a 2026-07-28 request', async () => {
      const token = await as.token(url, 'mcp:read');
      const r = await modernSend(
        url,
        modernBody('tools/call', { name: 'echo', arguments: { text: 'modern' } }),
        bearer(token),
      );
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json().result.content[0].text, 'modern');
    });

    test('a tool that needs another scope: 403 insufficient_scope naming every scope it needs, both eras', async () => {
      const read = await as.token(url, 'mcp:read');
      const s = new RawSession(url, bearer(read));
      await s.init();
      const call = toolCall('progress', { n: 1, delayMs: 0 });
      const r = await s.post(call);
      assert.equal(r.status, 403);
      assert.equal(errorOf(r).reason, 'insufficient-scope');
      assert.equal(errorOf(r).id, call.id);
      assert.deepEqual(challenge(r), {
        resource_metadata: prm,
        scope: 'mcp:read mcp:write',
        error: 'insufficient_scope',
        error_description: "tool 'progress' needs scope mcp:write",
      });
      const m = await modernSend(
        url,
        modernBody('tools/call', { name: 'progress', arguments: { n: 1, delayMs: 0 } }),
        bearer(read),
      );
      assert.equal(m.status, 403);
      assert.equal(challenge(m)['error'], 'insufficient_scope');
      // Stepped up, the same calls run.
      const write = await as.token(url, 'mcp:read mcp:write');
      const ok = await s.post(toolCall('progress', { n: 1, delayMs: 0 }), bearer(write));
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.json().result?.isError, undefined, ok.text);
      const mOk = await modernSend(
        url,
        modernBody('tools/call', { name: 'progress', arguments: { n: 1, delayMs: 0 } }),
        bearer(write),
      );
      assert.equal(mOk.status, 200, mOk.text);
      assert.equal(mOk.json().result?.isError, undefined, mOk.text);
      await s.delete();
    });

    test('a token without a scope every request needs: 403 insufficient_scope', async () => {
      const r = await initWith(bearer(await as.token(url, 'mcp:write')));
      assert.equal(r.status, 403);
      assert.deepEqual(challenge(r), {
        resource_metadata: prm,
        scope: 'mcp:read',
        error: 'insufficient_scope',
        error_description: 'the token lacks a scope this server requires',
      });
      assert.equal(sessions(), 0);
    });

    test('bad input: each refused with its own status and reason, nothing created', async () => {
      const now = Math.floor(Date.now() / 1000);
      const other = await signingKey('k1');
      const header = (alg: string, kid = key.kid) => b64url({ alg, kid, typ: 'at+jwt' });
      const payload = b64url({ iss: as.issuer, aud: url, sub: 'x', scope: 'mcp:read', exp: now + 600 });
      const cases: [string, Record<string, string>, number, string, string | undefined][] = [
        [
          'malformed header',
          { authorization: 'Bearer two tokens' },
          400,
          'malformed-authorization',
          'invalid_request',
        ],
        ['empty bearer', { authorization: 'Bearer ' }, 400, 'malformed-authorization', 'invalid_request'],
        ['not a JWT', bearer('not-a-jwt'), 401, 'token-malformed', 'invalid_token'],
        ['alg none', bearer(`${header('none')}.${payload}.`), 401, 'token-algorithm', 'invalid_token'],
        [
          'HS256 against an RSA key',
          bearer(`${header('HS256')}.${payload}.c2lnbmF0dXJl`),
          401,
          'token-algorithm',
          'invalid_token',
        ],
        [
          'signed by a key not in the JWKS',
          bearer(await forgedWith(other, 'k1', as.issuer, url)),
          401,
          'token-signature',
          'invalid_token',
        ],
        [
          'unknown kid',
          bearer(await forgedWith(other, 'no-such-kid', as.issuer, url)),
          401,
          'token-unknown-key',
          'invalid_token',
        ],
        [
          'wrong audience (issued for another resource)',
          bearer(await as.token('https://other.example/mcp', 'mcp:read')),
          401,
          'token-audience',
          'invalid_token',
        ],
        [
          'audience with a trailing slash',
          bearer(await forged({ aud: `${url}/` })),
          401,
          'token-audience',
          'invalid_token',
        ],
        [
          'unknown issuer',
          bearer(await forged({ iss: 'https://evil.example' })),
          401,
          'token-issuer',
          'invalid_token',
        ],
        ['expired', bearer(await forged({}, now - 120)), 401, 'token-expired', 'invalid_token'],
        [
          'not yet valid',
          bearer(await forged({ nbf: now + 600 })),
          401,
          'token-not-yet-valid',
          'invalid_token',
        ],
        [
          'oversized',
          bearer(await forged({ pad: 'x'.repeat(9000) })),
          401,
          'token-too-large',
          'invalid_token',
        ],
      ];
      for (const [label, headers, status, reason, error] of cases) {
        const r = await initWith(headers);
        assert.equal(r.status, status, `${label}: ${r.text}`);
        assert.equal(errorOf(r).reason, reason, label);
        const c = challenge(r);
        assert.equal(c['error'], error, label);
        assert.equal(c['resource_metadata'], prm, label);
      }
      // Within the clock tolerance (30 s by default) an expired token still passes.
      assert.equal((await initWith(bearer(await forged({}, now - 5)))).status, 200);
      const q = await initWith(bearer(await as.token(url, 'mcp:read')), `${url}?access_token=abc`);
      assert.equal(q.status, 400);
      assert.equal(errorOf(q).reason, 'token-in-query');
      assert.equal(sessions(), 1, 'only the one accepted initialize made a session');
    });

    if (binding === 'node') {
      test('the official SDK v1 client with its own client-credentials provider discovers and authorizes', async () => {
        const client = new Client({ name: 'sdk-v1', version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(new URL(url), {
          authProvider: new ClientCredentialsProvider({
            clientId: TEST_CLIENT.client_id,
            clientSecret: TEST_CLIENT.client_secret,
            expectedIssuer: as.issuer,
            scope: 'mcp:read',
          }),
        });
        await withDeadline(client.connect(transport), 10_000, 'SDK connect through OAuth');
        const r = await withDeadline(
          client.callTool({ name: 'echo', arguments: { text: 'sdk' } }),
          10_000,
          'call',
        );
        assert.deepEqual(r.content, [{ type: 'text', text: 'sdk' }]);
        await transport.terminateSession();
        await client.close();
      });

      for (const mode of ['auto', 'legacy'] as const) {
        test(`the official SDK v2 client (${mode === 'auto' ? '2026-07-28' : 'legacy'} era) with its own client-credentials provider`, async () => {
          const client = new V2Client(
            { name: 'sdk-v2', version: '1.0.0' },
            mode === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {},
          );
          const transport = new V2Transport(new URL(url), {
            authProvider: new V2ClientCredentialsProvider({
              clientId: TEST_CLIENT.client_id,
              clientSecret: TEST_CLIENT.client_secret,
              expectedIssuer: as.issuer,
              scope: 'mcp:read',
            }),
          });
          const before = sessions();
          await withDeadline(client.connect(transport), 10_000, 'SDK v2 connect through OAuth');
          // The 2026-07-28 era has no sessions; the legacy one opened one.
          assert.equal(sessions() - before, mode === 'auto' ? 0 : 1);
          const r = await withDeadline(
            client.callTool({ name: 'echo', arguments: { text: 'v2' } }),
            10_000,
            'call',
          );
          assert.deepEqual(r.content, [{ type: 'text', text: 'v2' }]);
          await client.close();
        });
      }
    }
  });
}

async function forgedWith(k: SigningKey, kid: string, iss: string, aud: string): Promise<string> {
  return new SignJWT({ scope: 'mcp:read' })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
    .setIssuer(iss)
    .setAudience(aud)
    .setSubject('forger')
    .setExpirationTime('10m')
    .sign(k.privateKey);
}
