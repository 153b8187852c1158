/**
 * `sluice serve --oauth-issuer URL [--oauth-resource URL] [--oauth-scopes "a b"] [--oauth-dpop-nonce]`
 * as a process, against a real authorization server (oidc-provider): the metadata at both well-known
 * URLs with the resource defaulting to the endpoint URL as printed, tokens for it accepted, tokens
 * without the required scope refused 403, a DPoP proof without the server's nonce refused with the
 * nonce to use, and bad flag combinations refused with exit 2.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { OAUTH_DEFAULTS } from '../../src/server/index.js';
import { signingKey, TestAuthServer } from '../helpers/auth-server.js';
import { withDeadline } from '../helpers/deadline.js';
import { ath, authPost, clientToken, dpopKey, dpopProof } from '../helpers/dpop.js';
import { RawSession, send, toolCall } from '../helpers/http.js';
import { reapWithMe } from '../helpers/reaper.js';
import { repoRoot, type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

describe('sluice serve --oauth-*', () => {
  let as: TestAuthServer;
  let srv: SpawnedServe;

  before(async () => {
    as = await TestAuthServer.start({ keys: [await signingKey('k1')], scopes: ['mcp:read', 'mcp:write'] });
    srv = await spawnServe(['--oauth-issuer', as.issuer, '--oauth-scopes', 'mcp:read', '--oauth-dpop-nonce']);
  });
  after(async () => {
    await srv?.close();
    await as?.stop();
  });

  test('the resource is the printed endpoint URL; the metadata is served path-inserted and at the root', async () => {
    const u = new URL(srv.url);
    for (const p of [
      `/.well-known/oauth-protected-resource${u.pathname}`,
      '/.well-known/oauth-protected-resource',
    ]) {
      const r = await send(`${u.origin}${p}`);
      assert.equal(r.status, 200, p);
      assert.deepEqual(r.json(), {
        resource: srv.url,
        authorization_servers: [as.issuer],
        bearer_methods_supported: ['header'],
        dpop_signing_alg_values_supported: OAUTH_DEFAULTS.algorithms,
        scopes_supported: ['mcp:read'],
      });
    }
  });

  test('401 without a token, 403 without the required scope, 200 with a token for this resource', async () => {
    const none = new RawSession(srv.url);
    await assert.rejects(none.init(), /401/);
    const writeOnly = new RawSession(srv.url, {
      authorization: `Bearer ${await as.token(srv.url, 'mcp:write')}`,
    });
    await assert.rejects(writeOnly.init(), /403/);
    const ok = new RawSession(srv.url, { authorization: `Bearer ${await as.token(srv.url, 'mcp:read')}` });
    await ok.init();
    const r = await ok.post(toolCall('echo', { text: 'oauth' }));
    assert.equal(r.status, 200, r.text);
    const foreign = new RawSession(srv.url, {
      authorization: `Bearer ${await as.token('http://127.0.0.1:1/mcp', 'mcp:read')}`,
    });
    await assert.rejects(foreign.init(), /401/);
  });

  test('--oauth-dpop-nonce: a proof without the nonce gets it (RFC 9449 §9); with it, served', async () => {
    const key = await dpopKey();
    const token = await clientToken(as, srv.url, key, 'mcp:read');
    const claims = { htm: 'POST', htu: srv.url, ath: ath(token) };
    const post = (dpop: string) => authPost(srv.url, { authorization: `DPoP ${token}`, dpop });
    const asked = await post(await dpopProof(key, claims));
    assert.equal(asked.status, 401, JSON.stringify(asked));
    assert.equal(asked.reason, 'dpop-nonce');
    const nonce = asked.nonce;
    assert.ok(nonce !== null && nonce.length > 0);
    const ok = await post(await dpopProof(key, { ...claims, nonce }));
    assert.equal(ok.status, 200, JSON.stringify(ok));
    assert.equal(ok.nonce, nonce);
  });

  test("SLUICE_DPOP_NONCE_KEY: two instances with the same key take each other's nonces", async () => {
    // Two instances of one resource behind a balancer that is no Sluice cluster (no --redis): a nonce
    // one of them hands out must pass at the other, or a client meets a new nonce at every turn. The
    // proofs name the resource, the URL the client calls through the balancer.
    const resource = 'https://mcp.example.com/mcp';
    const env = { SLUICE_DPOP_NONCE_KEY: 'a-shared-nonce-key-of-32-bytes!!' };
    const args = ['--oauth-issuer', as.issuer, '--oauth-resource', resource, '--oauth-dpop-nonce'];
    const [a, b] = await Promise.all([spawnServe(args, env), spawnServe(args, env)]);
    try {
      const key = await dpopKey();
      const token = await clientToken(as, resource, key, 'mcp:read');
      const asked = await authPost(a.url, {
        authorization: `DPoP ${token}`,
        dpop: await dpopProof(key, { htm: 'POST', htu: resource, ath: ath(token) }),
      });
      assert.equal(asked.status, 401, JSON.stringify(asked));
      assert.equal(asked.reason, 'dpop-nonce');
      const nonce = asked.nonce;
      assert.ok(nonce !== null && nonce.length > 0);
      const atB = await authPost(b.url, {
        authorization: `DPoP ${token}`,
        dpop: await dpopProof(key, { htm: 'POST', htu: resource, ath: ath(token), nonce }),
      });
      assert.equal(atB.status, 200, JSON.stringify(atB));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('--oauth-resource names the audience; bad combinations exit 2', async () => {
    const resource = 'https://mcp.example.com/mcp';
    const other = await spawnServe(['--oauth-issuer', as.issuer, '--oauth-resource', resource]);
    try {
      const prm = await send(new URL('/.well-known/oauth-protected-resource/mcp', other.url).href);
      assert.equal(prm.json().resource, resource);
      const s = new RawSession(other.url, {
        authorization: `Bearer ${await as.token(resource, 'mcp:read')}`,
      });
      await s.init();
    } finally {
      await other.close();
    }
    const cli = join(repoRoot(), 'dist', 'src', 'cli', 'main.js');
    const run = (args: string[], env: Record<string, string> = {}) =>
      withDeadline(
        new Promise<{ code: number | null; err: string }>((resolve) => {
          const c = spawn(process.execPath, [cli, 'serve', '--port', '0', ...args], {
            stdio: ['ignore', 'ignore', 'pipe'],
            env: { ...process.env, ...env },
          });
          reapWithMe(c);
          let err = '';
          c.stderr.on('data', (d: Buffer) => (err += d));
          c.on('exit', (code) => resolve({ code, err }));
        }),
        10_000,
        `sluice serve ${args.join(' ')}`,
      );
    for (const [args, reason] of [
      [
        ['--oauth-scopes', 'a'],
        /--oauth-resource, --oauth-scopes and --oauth-dpop-nonce need --oauth-issuer/,
      ],
      [['--oauth-dpop-nonce'], /need --oauth-issuer/],
      [['--oauth-issuer', 'http://as.example.com'], /must be https \(http only on a loopback host\)/],
      [['--oauth-issuer', as.issuer, '--auth-token', 'demo-token-123'], /exclude each other/],
      [['--oauth-issuer', as.issuer, '--oauth-scopes', 'a"b'], /is not a scope token/],
    ] as const) {
      const r = await run([...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, reason);
    }
    for (const [args, key, reason] of [
      [['--oauth-issuer', as.issuer, '--oauth-dpop-nonce'], 'too-short', /16 bytes/],
      [['--oauth-issuer', as.issuer], 'a-shared-nonce-key-of-32-bytes!!', /SLUICE_DPOP_NONCE_KEY is set but/],
    ] as const) {
      const r = await run([...args], { SLUICE_DPOP_NONCE_KEY: key });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, reason);
    }
  });
});
