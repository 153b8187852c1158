/**
 * A test's own DPoP key and proofs (RFC 9449 §4), and client-credentials tokens from the test's
 * oidc-provider bound to such a key (§5), for the resource server's DPoP tests.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { TEST_CLIENT, type TestAuthServer } from './auth-server.js';
import { initializeBody } from './http.js';

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

/** What a test reads of an answer to a request with a credential. */
export interface AuthAnswer {
  status: number;
  /** `error.data.reason` of a JSON refusal. */
  reason: string | undefined;
  nonce: string | null;
  challenge: string | null;
  session: string | null;
  retryAfter: string | null;
  route: string | null;
}

/**
 * POSTs `body` (an `initialize` unless given) to `url` with `headers` (the credential, a proof, a
 * session id…) over the usual MCP headers; resolves with the answer read to its end.
 */
export async function authPost(
  url: string,
  headers: Record<string, string>,
  body: unknown = initializeBody('2025-11-25', {}, 1),
): Promise<AuthAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let reason: string | undefined;
  if (res.headers.get('content-type')?.startsWith('application/json') === true) {
    reason = (JSON.parse(text) as { error?: { data?: { reason?: string } } }).error?.data?.reason;
  }
  return {
    status: res.status,
    reason,
    nonce: res.headers.get('dpop-nonce'),
    challenge: res.headers.get('www-authenticate'),
    session: res.headers.get('mcp-session-id'),
    retryAfter: res.headers.get('retry-after'),
    route: res.headers.get('sluice-route'),
  };
}
