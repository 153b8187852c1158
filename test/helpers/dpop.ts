/**
 * A test's own DPoP key and proofs (RFC 9449 §4), and client-credentials tokens from the test's
 * oidc-provider bound to such a key (§5), for the resource server's DPoP tests.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { TEST_CLIENT, type TestAuthServer } from './auth-server.js';

export interface DpopKey {
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function dpopKey(): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { privateKey, jwk: await exportJWK(publicKey) };
}

export interface ProofClaims {
  htm: string;
  htu: string;
  ath?: string;
  iat?: number;
  jti?: string;
  /** The server's nonce (RFC 9449 §8, §9). */
  nonce?: string;
}

/** A proof signed by `key` (a fresh `jti` unless given; `iat` now unless given). */
export function dpopProof(key: DpopKey, c: ProofClaims, typ = 'dpop+jwt'): Promise<string> {
  const { iat, jti, ...rest } = c;
  return new SignJWT({ ...rest, jti: jti ?? randomUUID() })
    .setProtectedHeader({ alg: 'ES256', typ, jwk: key.jwk })
    .setIssuedAt(iat ?? Math.floor(Date.now() / 1000))
    .sign(key.privateKey);
}

/** The proof's `ath` for `token` (§4.2). */
export const ath = (token: string): string => createHash('sha256').update(token).digest('base64url');

/** A client-credentials token of TEST_CLIENT for `resource` and `scope`, bound to `key` when given. */
export async function clientToken(
  as: TestAuthServer,
  resource: string,
  key?: DpopKey,
  scope = 'mcp:tools',
): Promise<string> {
  const endpoint = `${as.issuer}/token`;
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa(`${TEST_CLIENT.client_id}:${TEST_CLIENT.client_secret}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
      ...(key === undefined ? {} : { dpop: await dpopProof(key, { htm: 'POST', htu: endpoint }) }),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
    signal: AbortSignal.timeout(5000),
  });
  const body = (await res.json()) as { access_token?: string; token_type?: string };
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.token_type, key === undefined ? 'Bearer' : 'DPoP');
  return body.access_token ?? '';
}
