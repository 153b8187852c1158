/**
 * The DPoP checker with a shared proof store (auth/proof-replays.ts): the store is asked after this
 * process's own memory, its answer decides, a store that cannot answer refuses the proof (never lets
 * it through unchecked), and with a store this process's bounded memory no longer turns proofs away.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { DpopProofChecker } from '../../src/auth/dpop-proof.js';
import { ProofKeys } from '../../src/auth/proof-keys.js';
import type { ProofReplayStore } from '../../src/auth/proof-replays.js';
import { oauthResourceServer } from '../../src/server/index.js';

const RESOURCE = 'https://mcp.example.com/mcp';

async function setup(store: ProofReplayStore, maxRemembered = 100) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  const checker = new DpopProofChecker({
    resource: RESOURCE,
    algorithms: ['ES256'],
    now: Date.now,
    maxRemembered,
    replays: store,
  });
  const ath = createHash('sha256').update('abc').digest('base64url');
  const proof = (jti: string = randomUUID()): Promise<string> =>
    new SignJWT({ htm: 'POST', htu: RESOURCE, ath, jti })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .setIssuedAt()
      .sign(privateKey);
  const check = (p: string) => checker.check(p, 'POST', 'abc', jkt, { header: () => undefined });
  return { checker, proof, check, jkt };
}

/** A store in memory, as a shared one behaves: an id is fresh once. */
function memoryStore(log: string[]): ProofReplayStore {
  const spent = new Set<string>();
  return {
    spend: (jkt, jti, ttlMs) => {
      log.push(`${jti} ${ttlMs > 299_000 && ttlMs <= 300_000}`);
      const k = `${jkt} ${jti}`;
      const fresh = !spent.has(k);
      spent.add(k);
      return Promise.resolve(fresh);
    },
  };
}

describe('DPoP proofs with a shared store', () => {
  test('the store is asked with the rest of the window; an id it has seen is refused', async () => {
    const log: string[] = [];
    const store = memoryStore(log);
    const one = await setup(store);
    const p = await one.proof('id-1');
    assert.equal(await one.check(p), undefined);
    assert.deepEqual(log, ['id-1 true']);
    // Another process with the same store (another instance): refused, by the store.
    const other = new DpopProofChecker({
      resource: RESOURCE,
      algorithms: ['ES256'],
      now: Date.now,
      replays: store,
    });
    assert.equal(
      await other.check(p, 'POST', 'abc', one.jkt, { header: () => undefined }),
      'the DPoP proof was used before',
    );
    assert.equal(log.length, 2);
    // The same process again: refused from its own memory, the store not asked.
    assert.equal(await one.check(p), 'the DPoP proof was used before');
    assert.equal(log.length, 2);
  });

  test('a store that cannot answer refuses the proof, and a later try is asked again', async () => {
    let down = true;
    const spent = new Set<string>();
    const one = await setup({
      spend: (_jkt, jti) => {
        if (down) return Promise.reject(new Error('Redis did not answer'));
        const fresh = !spent.has(jti);
        spent.add(jti);
        return Promise.resolve(fresh);
      },
    });
    const p = await one.proof();
    assert.deepEqual(await one.check(p), { storeDown: true });
    down = false;
    // Nothing was remembered of the refused try: the same proof, once the store answers, is taken once.
    assert.equal(await one.check(p), undefined);
    assert.equal(await one.check(p), 'the DPoP proof was used before');
  });

  test('with a store, a full memory does not turn new proofs away (the store decides)', async () => {
    const log: string[] = [];
    const one = await setup(memoryStore(log), 2);
    for (let i = 0; i < 5; i++) assert.equal(await one.check(await one.proof()), undefined);
    const p = await one.proof();
    assert.equal(await one.check(p), undefined);
    assert.equal(await one.check(p), 'the DPoP proof was used before');
  });

  test('two requests of one process with one proof at once: one is taken', async () => {
    const one = await setup(memoryStore([]));
    const p = await one.proof();
    const verdicts = await Promise.all([one.check(p), one.check(p)]);
    assert.deepEqual(verdicts.filter((v) => v === undefined).length, 1, JSON.stringify(verdicts));
  });

  test('proofReplays is validated once; withProofReplays leaves the original as it was', () => {
    assert.throws(
      () =>
        oauthResourceServer({
          resource: RESOURCE,
          authorizationServers: ['https://as.example.com'],
          proofReplays: {} as ProofReplayStore,
        }),
      /proofReplays must have a spend/,
    );
    const rs = oauthResourceServer({ resource: RESOURCE, authorizationServers: ['https://as.example.com'] });
    const shared = rs.withProofReplays(memoryStore([]));
    assert.equal(rs.sharesProofs, false);
    assert.equal(shared.sharesProofs, true);
    assert.notEqual(shared, rs);
    assert.equal(shared.metadataUrl, rs.metadataUrl);
  });
});

describe('DPoP proof keys, remembered (auth/proof-keys.ts)', () => {
  test('a remembered key does not let a proof signed by another key through', async () => {
    const one = await setup({ spend: () => Promise.resolve(true) });
    assert.equal(await one.check(await one.proof()), undefined, 'the key is remembered now');
    // The header names the remembered key, the signature is another key's.
    const { privateKey } = await generateKeyPair('ES256');
    const header = JSON.parse(Buffer.from((await one.proof()).split('.')[0] ?? '', 'base64url').toString());
    const forged = await new SignJWT({
      htm: 'POST',
      htu: RESOURCE,
      ath: createHash('sha256').update('abc').digest('base64url'),
      jti: randomUUID(),
    })
      .setProtectedHeader(header)
      .setIssuedAt()
      .sign(privateKey);
    assert.equal(await one.check(forged), 'the DPoP proof signature does not verify');
    // A secret (oct) key in the header is never a proof key, whatever the algorithm says.
    const [, body, sig] = forged.split('.');
    const oct = Buffer.from(
      JSON.stringify({ ...header, jwk: { kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQ' } }),
    ).toString('base64url');
    assert.equal(await one.check(`${oct}.${body}.${sig}`), 'the DPoP proof signature does not verify');
    // The right key again: still taken.
    assert.equal(await one.check(await one.proof()), undefined);
  });

  test('one key in JWKs that differ only in kid or use: one thumbprint, both verify', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const jkt = await calculateJwkThumbprint(jwk, 'sha256');
    const checker = new DpopProofChecker({ resource: RESOURCE, algorithms: ['ES256'], now: Date.now });
    const ath = createHash('sha256').update('abc').digest('base64url');
    for (const extra of [{}, { kid: 'a' }, { kid: 'b', use: 'sig' }]) {
      const p = await new SignJWT({ htm: 'POST', htu: RESOURCE, ath, jti: randomUUID() })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: { ...jwk, ...extra } })
        .setIssuedAt()
        .sign(privateKey);
      assert.equal(await checker.check(p, 'POST', 'abc', jkt), undefined, JSON.stringify(extra));
    }
  });
});

describe('a proof a trusted peer checked (a forwarded request)', () => {
  test('is not checked again, nor spent; any other request is', async () => {
    const spent: string[] = [];
    const store: ProofReplayStore = {
      spend: (_jkt, jti) => {
        spent.push(jti);
        return Promise.resolve(true);
      },
      checkedUpstream: (req) => req.header('x-relayed') === 'yes',
    };
    const one = await setup(store);
    const relayed = { header: (n: string) => (n === 'x-relayed' ? 'yes' : undefined) };
    const direct = { header: () => undefined };
    // Anything, even no proof at all, on the relayed request: the peer checked it.
    assert.equal(await one.checker.check(undefined, 'POST', 'abc', one.jkt, relayed), undefined);
    assert.deepEqual(spent, []);
    // The same without the claim: checked as ever.
    assert.equal(
      await one.checker.check(undefined, 'POST', 'abc', one.jkt, direct),
      'a DPoP-bound token needs a DPoP proof',
    );
    assert.equal(await one.checker.check(await one.proof('id-9'), 'POST', 'abc', one.jkt, direct), undefined);
    assert.deepEqual(spent, ['id-9']);
  });
});

describe('ProofKeys', () => {
  test("remembers only a key that is some token's, and not one that failed to import", async () => {
    const keys = new ProofKeys(10);
    const { publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const jkt = await calculateJwkThumbprint(jwk, 'sha256');
    // Not the token's key: imported for this proof, then let go.
    assert.equal((await keys.keyFor(jwk, 'ES256', 'another-thumbprint')).thumbprint, jkt);
    await new Promise((r) => setImmediate(r));
    assert.equal(keys.remembered, 0);
    // The token's key: remembered once, however often it signs.
    const a = await keys.keyFor(jwk, 'ES256', jkt);
    const b = await keys.keyFor({ ...jwk, kid: 'x' }, 'ES256', jkt);
    assert.equal(a, b, 'one key, one import');
    assert.equal(keys.remembered, 1);
    // Not a public key, or not one for this algorithm: refused, and not remembered.
    await assert.rejects(keys.keyFor({ kty: 'oct', k: 'c2VjcmV0' }, 'ES256', jkt));
    await assert.rejects(keys.keyFor(jwk, 'RS256', jkt));
    await new Promise((r) => setImmediate(r));
    assert.equal(keys.remembered, 1);
  });
});
