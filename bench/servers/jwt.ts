// JWT verification for the `sluice+jwt` rows of (a): one RS256 key per bench run, a token signed
// with it for a fixed resource and issuer, and the public key set handed to the server child in
// an environment variable. The child verifies through oauthResourceServer with a fetch answering
// the issuer's metadata and JWKS from memory: the key set is fetched once and cached, as against
// a real authorization server, so the rows measure verification per request, not the network.
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

export const BENCH_ISSUER = 'https://as.bench.invalid';
export const BENCH_RESOURCE = 'https://mcp.bench.invalid/mcp';
export const JWKS_ENV = 'SLUICE_BENCH_JWKS';

export interface BenchJwt {
  /** `{ keys: [publicJwk] }` as JSON, for the child's environment. */
  jwks: string;
  /** `Bearer <token>` for every request. */
  authorization: string;
}

let made: Promise<BenchJwt> | undefined;

export function benchJwt(): Promise<BenchJwt> {
  made ??= (async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
    const token = await new SignJWT({ scope: 'mcp:tools', client_id: 'bench' })
      .setProtectedHeader({ alg: 'RS256', kid: 'bench', typ: 'at+jwt' })
      .setIssuer(BENCH_ISSUER)
      .setAudience(BENCH_RESOURCE)
      .setSubject('bench')
      .setIssuedAt()
      .setExpirationTime('1d')
      .sign(privateKey);
    return { jwks: JSON.stringify({ keys: [jwk] }), authorization: `Bearer ${token}` };
  })();
  return made;
}

/** The child's fetch: the issuer's RFC 8414 metadata and its JWKS, from memory. */
export function memoryFetch(jwks: string): (url: string) => Promise<Response> {
  return async (url) => {
    if (url === `${BENCH_ISSUER}/.well-known/oauth-authorization-server`) {
      return Response.json({ issuer: BENCH_ISSUER, jwks_uri: `${BENCH_ISSUER}/jwks` });
    }
    if (url === `${BENCH_ISSUER}/jwks`)
      return new Response(jwks, { headers: { 'content-type': 'application/json' } });
    return new Response('not found', { status: 404 });
  };
}
