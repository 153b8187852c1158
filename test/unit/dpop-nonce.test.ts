/**
 * The resource server's DPoP nonces (auth/dpop-nonce.ts, RFC 9449 §9): good in their window and the
 * next only, bound to the key and the resource, and nothing else taken for one: every string a
 * client could send that was not made by this key for this resource is refused.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { DpopNonces } from '../../src/auth/dpop-nonce.js';
import { oauthResourceServer } from '../../src/server/index.js';

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
    // A nonce from the future (a clock ahead, or made up) is refused too.
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
          assert.equal(verdict === 'current', candidate === good, String(candidate));
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
