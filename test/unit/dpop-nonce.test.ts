/**
 * The resource server's DPoP nonces (auth/dpop-nonce.ts, RFC 9449 §9): good in their window and the
 * next only, bound to the key and the resource, and nothing else taken for one: every string a
 * client could send that was not made by this key for this resource is refused.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { DpopNonces } from '../../src/auth/dpop-nonce.js';
import { createFetchHandler } from '../../src/fetch/index.js';
import { oauthResourceServer } from '../../src/server/index.js';
import { initializeBody } from '../helpers/http.js';
import { createProbe, testServerFactory } from '../helpers/test-server.js';

const RESOURCE = 'https://mcp.example.com/mcp';

function nonces(o: {
  key?: string | undefined;
  resource?: string;
  windowS?: number;
  clock: { now: number };
}) {
  return new DpopNonces({
    resource: o.resource ?? RESOURCE,
    windowS: o.windowS ?? 60,
    key: () => o.key,
    now: () => o.clock.now,
  });
}

describe('DPoP nonces', () => {
  test('current in its window, previous in the next, refused after', async () => {
    const clock = { now: 1_700_000_000_000 };
    const n = nonces({ key: 'k'.repeat(32), clock });
    const first = await n.current();
    assert.ok(first !== undefined);
    assert.equal(await n.check(first), 'current');
    assert.equal(await n.current(), first, 'one nonce per window');
    clock.now += 60_000;
    assert.equal(await n.check(first), 'previous');
    assert.notEqual(await n.current(), first);
    clock.now += 60_000;
    assert.equal(await n.check(first), 'refused');
    // Made by an instance whose clock is a window ahead: good here too (only the key makes one).
    const ahead = nonces({ key: 'k'.repeat(32), clock: { now: clock.now + 60_000 } });
    assert.equal(await n.check(await ahead.current()), 'current');
    // Two windows ahead (a clock far off, or made up): refused.
    const later = nonces({ key: 'k'.repeat(32), clock: { now: clock.now + 120_000 } });
    assert.equal(await n.check(await later.current()), 'refused');
  });

  test('bound to the key and the resource; no key, no nonce', async () => {
    const clock = { now: 1_700_000_000_000 };
    const mine = await nonces({ key: 'k'.repeat(32), clock }).current();
    assert.equal(await nonces({ key: 'x'.repeat(32), clock }).check(mine), 'refused');
    assert.equal(
      await nonces({ key: 'k'.repeat(32), resource: `${RESOURCE}/`, clock }).check(mine),
      'refused',
    );
    const keyless = nonces({ key: undefined, clock });
    assert.equal(await keyless.current(), undefined);
    assert.equal(await keyless.check(mine), 'refused');
  });

  test('property: no string but a nonce made with the key is taken', async () => {
    const clock = { now: 1_700_000_000_000 };
    const n = nonces({ key: 'k'.repeat(32), clock });
    const good = (await n.current()) as string;
    const [win] = good.split('.') as [string];
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 80 }),
          // Right shape and window, any MAC.
          fc.stringMatching(/^[A-Za-z0-9_-]{22}$/).map((mac) => `${win}.${mac}`),
          // The good nonce with one character changed.
          fc
            .tuple(fc.nat(good.length - 1), fc.constantFrom(...'Aa0_-z.'))
            .map(([i, c]) => good.slice(0, i) + c + good.slice(i + 1)),
          fc.anything(),
        ),
        async (candidate) => {
          const verdict = await n.check(candidate);
          // fc.stringify: String() throws on some of fc.anything()'s values (`{ toString: null }`).
          assert.equal(verdict === 'current', candidate === good, fc.stringify(candidate));
          assert.notEqual(verdict, 'previous');
        },
      ),
      { numRuns: 400 },
    );
  });

  test('dpopNonce is validated once', () => {
    const base = { resource: RESOURCE, authorizationServers: ['https://as.example.com'] };
    assert.throws(() => oauthResourceServer({ ...base, dpopNonce: { key: 'short' } }), /at least 16 bytes/);
    assert.throws(() => oauthResourceServer({ ...base, dpopNonce: { windowS: 5 } }), /dpopNonce\.windowS/);
    assert.throws(
      () => oauthResourceServer({ ...base, dpopNonce: 'yes' as never }),
      /dpopNonce must be an object/,
    );
    assert.doesNotThrow(() => oauthResourceServer({ ...base, dpopNonce: {} }));
  });
});

describe('DPoP nonces through the fetch binding (Bun, Deno, workerd)', () => {
  test('the refusal and the accepted answer carry DPoP-Nonce; the nonce is taken', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const jkt = await calculateJwkThumbprint(jwk, 'sha256');
    const AS = 'https://as.example.com';
    const oauth = oauthResourceServer({
      resource: RESOURCE,
      authorizationServers: [AS],
      dpopNonce: {},
      // A bound token this test vouches for: the DPoP step is what is under test.
      verify: async () => ({
        issuer: AS,
        audience: [RESOURCE],
        subject: 'alice',
        scopes: [],
        expiresAt: Date.now() + 60_000,
        claims: { cnf: { jkt } },
      }),
    });
    const handler = createFetchHandler({
      createServer: testServerFactory(createProbe()),
      oauth,
      loopbackOnly: false,
    });
    const post = async (nonce?: string) => {
      const proof = await new SignJWT({
        htm: 'POST',
        htu: RESOURCE,
        ath: createHash('sha256').update('tok').digest('base64url'),
        jti: randomUUID(),
        ...(nonce === undefined ? {} : { nonce }),
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .setIssuedAt()
        .sign(privateKey);
      return handler(
        new Request(RESOURCE, {
          method: 'POST',
          headers: {
            authorization: 'DPoP tok',
            dpop: proof,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          },
          body: JSON.stringify(initializeBody('2025-11-25', {}, 1)),
        }),
      );
    };
    try {
      const asked = await post();
      assert.equal(asked.status, 401, await asked.clone().text());
      assert.match(asked.headers.get('www-authenticate') ?? '', /DPoP error="use_dpop_nonce"/);
      const nonce = asked.headers.get('dpop-nonce');
      assert.ok(nonce !== null);
      await asked.text();
      const ok = await post(nonce);
      assert.equal(ok.status, 200, await ok.clone().text());
      assert.equal(ok.headers.get('dpop-nonce'), nonce);
      await ok.text();
    } finally {
      await handler.close();
    }
  });
});
