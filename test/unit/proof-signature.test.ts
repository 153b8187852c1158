/**
 * DPoP proofs checked through node:crypto (src/auth/proof-signature.ts) take exactly what jose's
 * `jwtVerify` takes, or less (one spelling of each part): the same proofs accepted with the same claims,
 * every tampered one refused. jose stays the reference, and the path for the other algorithms.
 */
import assert from 'node:assert/strict';
import { createHash, KeyObject, sign as nodeSign } from 'node:crypto';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  base64url,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  type JWK,
  jwtVerify,
  SignJWT,
} from 'jose';
import { DpopProofChecker } from '../../src/auth/dpop-proof.js';
import { ProofKeys } from '../../src/auth/proof-keys.js';
import { nodeProofVerifier, type ProofVerifier } from '../../src/auth/proof-signature.js';

const NOW_S = 1_900_000_000;
const RESOURCE = 'https://mcp.example.com/mcp';
const claims = {
  htm: 'POST',
  htu: 'https://mcp.example.com/mcp',
  ath: 'a'.repeat(43),
  jti: 'j1',
  iat: NOW_S,
};

async function signer(alg: string) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  const sign = (payload: Record<string, unknown> = claims, header: Record<string, unknown> = {}) =>
    new SignJWT(payload).setProtectedHeader({ alg, typ: 'dpop+jwt', jwk, ...header }).sign(privateKey);
  return { jwk, publicKey, privateKey, sign };
}

/** A proof signed as given, header and all: jose will not sign a `crit` it does not know. */
function signRaw(privateKey: CryptoKey, header: Record<string, unknown>, payload: string): string {
  const input = `${base64url.encode(JSON.stringify(header))}.${base64url.encode(payload)}`;
  const key = KeyObject.from(privateKey);
  return `${input}.${nodeSign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

function headerOf(proof: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(proof.split('.')[0] ?? '', 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}

function nodeVerify(jwk: JWK, alg: string): ProofVerifier {
  const verify = nodeProofVerifier(jwk, alg);
  assert.ok(verify !== undefined, `node:crypto path for ${alg} on Node`);
  return verify;
}

/** jose's verdict on a proof: its claims, or undefined when refused. */
async function joseVerdict(proof: string, key: CryptoKey, alg: string): Promise<unknown> {
  try {
    const { payload } = await jwtVerify(proof, key, {
      typ: 'dpop+jwt',
      algorithms: [alg],
      currentDate: new Date(NOW_S * 1000),
    });
    return payload;
  } catch {
    return undefined;
  }
}

describe('DPoP proof signatures through node:crypto', () => {
  for (const alg of ['ES256', 'ES384', 'ES512']) {
    test(`${alg}: a good proof gives the claims jose gives; tampered ones are refused`, async () => {
      const s = await signer(alg);
      const verify = nodeVerify(s.jwk, alg);
      const proof = await s.sign();
      assert.deepEqual(verify(proof, headerOf(proof), NOW_S), { payload: claims });
      assert.deepEqual(await joseVerdict(proof, s.publicKey, alg), claims);
      const [h, p, sig] = proof.split('.') as [string, string, string];
      const other = base64url.encode(JSON.stringify({ ...claims, htm: 'GET' }));
      assert.ok('refused' in verify(`${h}.${other}.${sig}`, headerOf(proof), NOW_S), 'another payload');
      const flipped = `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
      assert.ok('refused' in verify(`${h}.${p}.${flipped}`, headerOf(proof), NOW_S), 'another signature');
      assert.ok('refused' in verify(`${h}.${p}.${sig.slice(0, -4)}`, headerOf(proof), NOW_S), 'a short one');
      assert.ok('refused' in verify(`${h}.${p}`, headerOf(proof), NOW_S), 'two parts');
      assert.ok('refused' in verify(`${h}.${p}.${sig}.`, headerOf(proof), NOW_S), 'four parts');
      assert.ok('refused' in verify(`${h}.${p}.${sig}=`, headerOf(proof), NOW_S), 'padding');
    });
  }

  test('a key of another curve, a private, secret, encrypting or non-verifying key: refused at import', async () => {
    const p384 = await signer('ES384');
    assert.throws(() => nodeProofVerifier(p384.jwk, 'ES256'), /not a key for ES256/);
    const es = await signer('ES256');
    assert.throws(() => nodeProofVerifier({ ...es.jwk, d: 'x' }, 'ES256'));
    assert.throws(() => nodeProofVerifier({ kty: 'oct', k: 'c2VjcmV0' }, 'ES256'));
    assert.throws(() => nodeProofVerifier({ ...es.jwk, use: 'enc' }, 'ES256'));
    assert.throws(() => nodeProofVerifier({ ...es.jwk, key_ops: ['encrypt'] }, 'ES256'));
    assert.ok(nodeProofVerifier({ ...es.jwk, use: 'sig', key_ops: ['verify'] }, 'ES256'));
  });

  test('crit and b64 headers, claims that are no object, exp passed and nbf to come: refused', async () => {
    const s = await signer('ES256');
    const verify = nodeVerify(s.jwk, 'ES256');
    const check = async (payload: Record<string, unknown>, header: Record<string, unknown> = {}) => {
      const proof = await s.sign(payload, header);
      return verify(proof, headerOf(proof), NOW_S);
    };
    const raw = (header: Record<string, unknown>, payload = JSON.stringify(claims)) => {
      const proof = signRaw(s.privateKey, { alg: 'ES256', typ: 'dpop+jwt', jwk: s.jwk, ...header }, payload);
      return verify(proof, headerOf(proof), NOW_S);
    };
    assert.ok('payload' in raw({}), 'signed by hand, as by jose');
    assert.ok('refused' in raw({ crit: ['x'], x: 1 }));
    assert.ok('refused' in raw({ b64: true }));
    assert.deepEqual(raw({}, '[1,2]'), { refused: 'the DPoP proof claims are not a JSON object' });
    assert.deepEqual(raw({}, 'null'), { refused: 'the DPoP proof claims are not a JSON object' });
    assert.deepEqual(raw({}, '{"a":'), { refused: 'the DPoP proof claims are not JSON' });
    assert.ok('refused' in (await check({ ...claims, exp: NOW_S })));
    assert.ok('payload' in (await check({ ...claims, exp: NOW_S + 1 })));
    assert.ok('refused' in (await check({ ...claims, nbf: NOW_S + 1 })));
    assert.ok('payload' in (await check({ ...claims, nbf: NOW_S })));
    assert.ok('refused' in (await check({ ...claims, exp: 'never' })));
  });

  test('property: a changed character, part or cut never gets through, and jose agrees on what does', async () => {
    const s = await signer('ES256');
    const verify = nodeVerify(s.jwk, 'ES256');
    const proof = await s.sign();
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ';
    const mutation = fc.oneof(
      fc
        .tuple(fc.nat(proof.length - 1), fc.constantFrom(...alphabet))
        .map(([at, ch]) => `${proof.slice(0, at)}${ch}${proof.slice(at + 1)}`),
      fc.nat(proof.length - 1).map((at) => proof.slice(0, at)),
      fc
        .tuple(fc.nat(proof.length - 1), fc.constantFrom(...alphabet))
        .map(([at, ch]) => `${proof.slice(0, at)}${ch}${proof.slice(at)}`),
    );
    await fc.assert(
      fc.asyncProperty(mutation, async (changed) => {
        let header: Record<string, unknown>;
        try {
          header = headerOf(changed);
        } catch {
          header = {};
        }
        const ours = verify(changed, header, NOW_S);
        const theirs = await joseVerdict(changed, s.publicKey, 'ES256');
        if ('payload' in ours) {
          assert.equal(changed, proof, 'only the proof as signed is taken');
          assert.deepEqual(ours.payload, theirs);
        } else if (changed === proof) {
          assert.fail('the proof as signed was refused');
        }
      }),
      { numRuns: 1_500 },
    );
  });
});

describe('ProofKeys: which path checks a key', () => {
  test('ECDSA keys through node:crypto on Node; RSA and EdDSA through jose', async () => {
    const keys = new ProofKeys(10);
    const es = await signer('ES256');
    assert.ok('verify' in (await keys.keyFor(es.jwk, 'ES256', 'x')).check);
    const ed = await signer('EdDSA');
    assert.ok('key' in (await keys.keyFor(ed.jwk, 'EdDSA', 'x')).check);
    const rs = await signer('RS256');
    assert.ok('key' in (await keys.keyFor(rs.jwk, 'RS256', 'x')).check);
  });
});

describe('DpopProofChecker: both paths end to end', () => {
  for (const alg of ['ES256', 'EdDSA', 'PS256']) {
    test(`${alg}: a good proof is taken once; a tampered one is refused`, async () => {
      const s = await signer(alg);
      const jkt = await calculateJwkThumbprint(s.jwk, 'sha256');
      const checker = new DpopProofChecker({ resource: RESOURCE, algorithms: [alg], now: Date.now });
      const ath = createHash('sha256').update('tok').digest('base64url');
      const proof = await s.sign({
        htm: 'POST',
        htu: RESOURCE,
        ath,
        jti: `j-${alg}`,
        iat: Math.floor(Date.now() / 1000),
      });
      const [h, p, sig] = proof.split('.') as [string, string, string];
      const tampered = `${h}.${base64url.encode(JSON.stringify({ ...claims, htu: RESOURCE, ath }))}.${sig}`;
      assert.equal(
        await checker.check(tampered, 'POST', 'tok', jkt),
        'the DPoP proof signature does not verify',
      );
      assert.equal(await checker.check(`${h}.${p}.${sig}`, 'POST', 'tok', jkt), undefined);
      assert.equal(await checker.check(proof, 'POST', 'tok', jkt), 'the DPoP proof was used before');
    });
  }
});
