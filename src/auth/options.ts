/**
 * The resource server's options, their defaults, and the one function that validates them (once,
 * when `oauthResourceServer` is called; nothing is validated per request).
 */
import { InvalidOptionError } from '../errors.js';
import type { FetchLike } from './discovery.js';
import type { ProofReplayStore } from './proof-replays.js';
import type { TokenVerifier } from './verified-token.js';

export interface IntrospectionClient {
  /** The resource server's client id at the authorization server. */
  clientId: string;
  clientSecret: string;
  /** How long an answer is reused (never past the token's `exp`); 0 asks every time. @defaultValue 60000 */
  cacheTtlMs?: number;
  /** Answers held at most, accepted and refused tokens each; the oldest goes first. @defaultValue 10000 */
  maxCacheEntries?: number;
}

export interface OAuthResourceServerOptions {
  /**
   * This MCP endpoint's canonical URL (RFC 8707 §2; MCP basic/authorization §"Canonical Server
   * URI"), e.g. 'https://mcp.example.com/mcp'. Tokens must name it in `aud`, byte for byte, and the
   * protected resource metadata publishes it as `resource`.
   */
  resource: string;
  /** Issuer identifiers of the authorization servers whose tokens are accepted (at least one). */
  authorizationServers: readonly string[];
  /**
   * 'jwt' verifies JWT access tokens against the issuer's JWKS; 'introspection' asks the
   * authorization server (RFC 7662; needs `introspection`); a function verifies tokens itself.
   * @defaultValue 'jwt'
   */
  verify?: 'jwt' | 'introspection' | TokenVerifier;
  /** Credentials for RFC 7662 introspection (with `verify: 'introspection'`). */
  introspection?: IntrospectionClient;
  /** Scopes every request needs; advertised in the metadata and in challenges. @defaultValue [] */
  scopes?: readonly string[];
  /** Extra scopes `tools/call` of a tool needs, by tool name (403 `insufficient_scope` otherwise). @defaultValue {} */
  toolScopes?: Readonly<Record<string, readonly string[]>>;
  /** `scopes_supported` in the metadata. @defaultValue `scopes` and every scope of `toolScopes` */
  scopesSupported?: readonly string[];
  /**
   * Allowed clock difference for `exp` and `nbf`, in seconds, in the built-in verifiers. A stream ends
   * at its token's `exp`, or, for a token accepted already past `exp`, this long after it. @defaultValue 30
   */
  clockToleranceS?: number;
  /** A longer `Authorization` token is refused unread. @defaultValue 8192 */
  maxTokenBytes?: number;
  /** JWS algorithms accepted; asymmetric only. @defaultValue RS/PS/ES 256-512 and EdDSA */
  algorithms?: readonly string[];
  /** Timeout for each request to the authorization server (metadata, JWKS, introspection). @defaultValue 5000 */
  timeoutMs?: number;
  /** `Retry-After` when the authorization server cannot be reached, and how long a failed discovery is not retried. @defaultValue 5 */
  retryAfterS?: number;
  /** How long a fetched JWKS is used before it is fetched again. @defaultValue 600000 */
  jwksCacheMaxAgeMs?: number;
  /** A token with an unknown `kid` refetches the JWKS at most once per this interval. @defaultValue 30000 */
  jwksCooldownMs?: number;
  /** Verified JWTs remembered (by their whole text) so the signature is not checked on every request; 0 = off. @defaultValue 1000 */
  jwtCacheEntries?: number;
  /** How long a verified JWT is remembered (never past its `exp`). @defaultValue 60000 */
  jwtCacheTtlMs?: number;
  /** How long authorization server metadata is used before it is fetched again. @defaultValue 86400000 */
  metadataMaxAgeMs?: number;
  /** The session principal for a token. @defaultValue `sub` (else `client_id`), prefixed by the issuer when several are accepted */
  principal?: (token: import('./verified-token.js').VerifiedToken) => string;
  /** `resource_name` in the metadata (RFC 9728 §2). */
  resourceName?: string;
  /** `resource_documentation` in the metadata. */
  resourceDocumentation?: string;
  /** The fetch used to reach the authorization server. @defaultValue globalThis.fetch */
  fetch?: FetchLike;
  /**
   * Where DPoP proof ids are spent so that no two instances accept one proof (RFC 9449 §11.1;
   * proof-replays.ts). A handler given `cluster` as well uses the cluster's Redis when this is not
   * set. @defaultValue undefined (each process remembers the proofs it accepted)
   */
  proofReplays?: ProofReplayStore;
  /**
   * Ask for server-provided nonces in DPoP proofs (RFC 9449 §9; auth/dpop-nonce.ts): a proof without
   * a current one is refused with `use_dpop_nonce` and the nonce to use, and every accepted DPoP
   * answer carries the current nonce in `DPoP-Nonce`. `key` (at least 16 bytes) makes them; every
   * instance behind one balancer needs the same: a cluster member derives it from the cluster
   * secret, a lone process draws one at random. A nonce is good for `windowS` to twice that.
   * @defaultValue undefined (no nonces); windowS 60
   */
  dpopNonce?: { key?: string; windowS?: number };
  /** Clock, for tests. @defaultValue Date.now */
  now?: () => number;
}

export const OAUTH_DEFAULTS = {
  verify: 'jwt',
  clockToleranceS: 30,
  dpopNonceWindowS: 60,
  maxTokenBytes: 8192,
  algorithms: [
    'RS256',
    'RS384',
    'RS512',
    'PS256',
    'PS384',
    'PS512',
    'ES256',
    'ES384',
    'ES512',
    'EdDSA',
    'Ed25519',
  ],
  timeoutMs: 5000,
  retryAfterS: 5,
  jwksCacheMaxAgeMs: 600_000,
  jwksCooldownMs: 30_000,
  metadataMaxAgeMs: 86_400_000,
  jwtCacheEntries: 1000,
  jwtCacheTtlMs: 60_000,
  introspectionCacheTtlMs: 60_000,
  introspectionMaxCacheEntries: 10_000,
} as const;

/** RFC 6749 §3.3 scope-token: printable ASCII except space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

function fail(message: string): never {
  throw new InvalidOptionError(`oauthResourceServer: ${message}`);
}

function url(name: string, v: unknown, httpsOnly: boolean): URL {
  if (typeof v !== 'string' || !URL.canParse(v))
    fail(`${name} must be an absolute URL, got ${JSON.stringify(v)}`);
  const u = new URL(v);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') fail(`${name} must be an http(s) URL, got '${v}'`);
  // OAuth 2.1 §1.5: authorization servers over TLS, except on this machine (tests, development).
  if (httpsOnly && u.protocol === 'http:' && !LOOPBACK.test(u.host.replace(/:\d+$/, ''))) {
    fail(`${name} must be https (http only on a loopback host), got '${v}'`);
  }
  if (u.hash !== '' || v.includes('#')) fail(`${name} must not have a fragment (RFC 8707 §2), got '${v}'`);
  return u;
}

function scopeList(name: string, v: unknown): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) fail(`${name} must be an array of scope strings`);
  for (const s of v) {
    if (typeof s !== 'string' || !SCOPE_TOKEN.test(s))
      fail(`${name}: ${JSON.stringify(s)} is not a scope token`);
  }
  return [...new Set(v as string[])];
}

function int(name: string, v: unknown, dflt: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    fail(
      `${name} must be an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}, got ${String(v)}`,
    );
  }
  return v;
}

export interface ResolvedOAuthOptions {
  resource: string;
  resourceUrl: URL;
  authorizationServers: readonly string[];
  verify: 'jwt' | 'introspection' | TokenVerifier;
  introspection: Required<IntrospectionClient> | undefined;
  scopes: readonly string[];
  toolScopes: ReadonlyMap<string, readonly string[]>;
  scopesSupported: readonly string[];
  clockToleranceS: number;
  maxTokenBytes: number;
  algorithms: readonly string[];
  timeoutMs: number;
  retryAfterS: number;
  jwksCacheMaxAgeMs: number;
  jwksCooldownMs: number;
  metadataMaxAgeMs: number;
  jwtCacheEntries: number;
  jwtCacheTtlMs: number;
  principal: ((token: import('./verified-token.js').VerifiedToken) => string) | undefined;
  resourceName: string | undefined;
  resourceDocumentation: string | undefined;
  fetch: FetchLike;
  proofReplays: ProofReplayStore | undefined;
  dpopNonce: { key: string | undefined; windowS: number } | undefined;
  now: () => number;
}

export function resolveOAuthOptions(o: OAuthResourceServerOptions): ResolvedOAuthOptions {
  if (typeof o !== 'object' || o === null) fail('needs { resource, authorizationServers }');
  const resourceUrl = url('resource', o.resource, false);
  const servers = o.authorizationServers;
  if (!Array.isArray(servers) || servers.length === 0)
    fail('authorizationServers must list at least one issuer');
  for (const s of servers) url('authorizationServers', s, true);
  const verify = o.verify ?? OAUTH_DEFAULTS.verify;
  if (verify !== 'jwt' && verify !== 'introspection' && typeof verify !== 'function') {
    fail(`verify must be 'jwt', 'introspection' or a function, got ${String(verify)}`);
  }
  let introspection: Required<IntrospectionClient> | undefined;
  if (verify === 'introspection') {
    const i = o.introspection;
    if (
      i === undefined ||
      typeof i.clientId !== 'string' ||
      typeof i.clientSecret !== 'string' ||
      i.clientId === ''
    ) {
      fail("verify: 'introspection' needs introspection: { clientId, clientSecret }");
    }
    if (servers.length !== 1) fail("verify: 'introspection' asks one authorization server; list exactly one");
    introspection = {
      clientId: i.clientId,
      clientSecret: i.clientSecret,
      cacheTtlMs: int('introspection.cacheTtlMs', i.cacheTtlMs, OAUTH_DEFAULTS.introspectionCacheTtlMs, 0),
      maxCacheEntries: int(
        'introspection.maxCacheEntries',
        i.maxCacheEntries,
        OAUTH_DEFAULTS.introspectionMaxCacheEntries,
        1,
      ),
    };
  }
  const scopes = scopeList('scopes', o.scopes);
  const toolScopes = new Map<string, readonly string[]>();
  if (o.toolScopes !== undefined) {
    if (typeof o.toolScopes !== 'object' || o.toolScopes === null)
      fail('toolScopes must map tool names to scopes');
    for (const [tool, list] of Object.entries(o.toolScopes))
      toolScopes.set(tool, scopeList(`toolScopes.${tool}`, list));
  }
  const scopesSupported =
    o.scopesSupported === undefined
      ? [...new Set([...scopes, ...[...toolScopes.values()].flat()])]
      : scopeList('scopesSupported', o.scopesSupported);
  const algorithms = o.algorithms === undefined ? [...OAUTH_DEFAULTS.algorithms] : [...o.algorithms];
  for (const a of algorithms) {
    if (typeof a !== 'string' || !/^(RS|PS|ES)(256|384|512)$|^(EdDSA|Ed25519)$/.test(a)) {
      fail(`algorithms: '${String(a)}' is not an asymmetric JWS algorithm (RFC 8725 §3.1)`);
    }
  }
  if (algorithms.length === 0) fail('algorithms must not be empty');
  const fetchFn = o.fetch ?? (globalThis.fetch as FetchLike | undefined);
  if (typeof fetchFn !== 'function') fail('no fetch: pass { fetch }');
  if (o.principal !== undefined && typeof o.principal !== 'function') fail('principal must be a function');
  if (o.proofReplays !== undefined && typeof o.proofReplays?.spend !== 'function')
    fail('proofReplays must have a spend(jkt, jti, ttlMs, req) method');
  const nonce = o.dpopNonce;
  if (nonce !== undefined && (typeof nonce !== 'object' || nonce === null))
    fail('dpopNonce must be an object: { key?, windowS? }');
  const nonceKey = nonce?.key;
  if (
    nonceKey !== undefined &&
    (typeof nonceKey !== 'string' || new TextEncoder().encode(nonceKey).length < 16)
  )
    fail('dpopNonce.key must be a string of at least 16 bytes');
  return {
    resource: o.resource,
    resourceUrl,
    authorizationServers: [...servers],
    verify,
    introspection,
    scopes,
    toolScopes,
    scopesSupported,
    clockToleranceS: int('clockToleranceS', o.clockToleranceS, OAUTH_DEFAULTS.clockToleranceS, 0, 600),
    maxTokenBytes: int('maxTokenBytes', o.maxTokenBytes, OAUTH_DEFAULTS.maxTokenBytes, 256),
    algorithms,
    timeoutMs: int('timeoutMs', o.timeoutMs, OAUTH_DEFAULTS.timeoutMs, 1),
    retryAfterS: int('retryAfterS', o.retryAfterS, OAUTH_DEFAULTS.retryAfterS, 1, 3600),
    jwksCacheMaxAgeMs: int('jwksCacheMaxAgeMs', o.jwksCacheMaxAgeMs, OAUTH_DEFAULTS.jwksCacheMaxAgeMs, 0),
    jwksCooldownMs: int('jwksCooldownMs', o.jwksCooldownMs, OAUTH_DEFAULTS.jwksCooldownMs, 0),
    metadataMaxAgeMs: int('metadataMaxAgeMs', o.metadataMaxAgeMs, OAUTH_DEFAULTS.metadataMaxAgeMs, 0),
    jwtCacheEntries: int('jwtCacheEntries', o.jwtCacheEntries, OAUTH_DEFAULTS.jwtCacheEntries, 0),
    jwtCacheTtlMs: int('jwtCacheTtlMs', o.jwtCacheTtlMs, OAUTH_DEFAULTS.jwtCacheTtlMs, 0),
    principal: o.principal,
    resourceName: o.resourceName,
    resourceDocumentation: o.resourceDocumentation,
    fetch: fetchFn,
    proofReplays: o.proofReplays,
    dpopNonce:
      nonce === undefined
        ? undefined
        : {
            key: nonceKey,
            windowS: int('dpopNonce.windowS', nonce.windowS, OAUTH_DEFAULTS.dpopNonceWindowS, 10, 3600),
          },
    now: o.now ?? Date.now,
  };
}
