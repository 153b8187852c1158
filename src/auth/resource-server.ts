/**
 * `oauthResourceServer`: an MCP server as an OAuth 2.1 resource server (MCP 2025-11-25 and
 * 2026-07-28 basic/authorization). Two halves, one object:
 * - `authenticate`, for the `authenticate` option: reads the bearer token (header only), verifies
 *   it (JWT against the issuer's JWKS, or RFC 7662 introspection, or a function of yours), checks
 *   audience = `resource` exactly (RFC 8707 §2) and the issuer, and answers the refusals RFC 6750
 *   §3 names: 401 `invalid_token`, 403 `insufficient_scope`, 400 `invalid_request`; 503 +
 *   Retry-After when the authorization server cannot be reached. An accepted token's `exp` becomes
 *   the result's `expiresAt`, which ends long-lived streams when the token does (core/stream-guard.ts);
 *   `toolScopes` are checked once the body is parsed (`AuthResult.authorize`).
 * - the protected resource metadata (RFC 9728), which the bindings serve at
 *   `/.well-known/oauth-protected-resource` + the resource's path and at the root.
 * Runtime-neutral: fetch and WebCrypto only.
 */
import { bearerChallenge, type Denial, readBearer, tokenInQuery } from './challenge.js';
import { MetadataCache } from './discovery.js';
import { DpopGate } from './dpop-gate.js';
import { boundThumbprint, hasConfirmation } from './dpop-proof.js';
import { AuthServerUnavailableError, InvalidTokenError } from './errors.js';
import { IntrospectionVerifier } from './introspection.js';
import { JwtVerifier } from './jwt-verifier.js';
import { type MetadataAnswer, metadataAnswer } from './metadata-answer.js';
import {
  OAUTH_DEFAULTS,
  type OAuthResourceServerOptions,
  type ResolvedOAuthOptions,
  resolveOAuthOptions,
} from './options.js';
import type { ProofReplayStore } from './proof-replays.js';
import type { TokenVerifier, VerifiedToken } from './verified-token.js';

/** The parts of a request the resource server reads (the core's RequestView has them). */
export interface AuthRequest {
  /** The request method (the core's RequestView has it); a DPoP proof names it (RFC 9449 §4.2 `htm`). */
  readonly method?: string | undefined;
  /** Path and query as received. */
  readonly url: string;
  header(name: string): string | undefined;
}

/** An accepted token, in the shape of the core's `AuthResult`. */
export interface OAuthAuthResult {
  principal: string;
  expiresAt: number | undefined;
  /** With `verify: 'introspection'`: its streams are re-checked this often (its cache TTL). */
  revalidateMs: number | undefined;
  scopes: readonly string[];
  authorize: ((method: string, params: unknown) => Denial | undefined) | undefined;
  /** The verified token, for your own checks. */
  token: VerifiedToken;
  /** Headers for the accepted answer: the next DPoP nonce (`DPoP-Nonce`, with `dpopNonce`). */
  headers: Readonly<Record<string, string>> | undefined;
}

const WELL_KNOWN = '/.well-known/oauth-protected-resource';

export class OAuthResourceServer {
  /** As given, for withProofReplays. */
  readonly #given: OAuthResourceServerOptions;
  readonly #o: ResolvedOAuthOptions;
  readonly #verify: TokenVerifier;
  readonly #graceMs: number;
  readonly #recheckMs: number | undefined;
  readonly #metadataJson: string;
  readonly #paths: readonly string[];
  readonly #challengeScopes: readonly string[];
  readonly #gate: DpopGate;
  /** The resource as configured, byte for byte. */
  readonly resource: string;
  /** Where the metadata lives (path-inserted, RFC 9728 §3.1); sent as `resource_metadata`. */
  readonly metadataUrl: string;

  constructor(options: OAuthResourceServerOptions) {
    const o = resolveOAuthOptions(options);
    this.#given = options;
    this.#o = o;
    this.resource = o.resource;
    const path = o.resourceUrl.pathname === '/' ? '' : o.resourceUrl.pathname;
    this.metadataUrl = `${o.resourceUrl.origin}${WELL_KNOWN}${path}`;
    this.#paths = path === '' ? [WELL_KNOWN] : [`${WELL_KNOWN}${path}`, WELL_KNOWN];
    this.#challengeScopes = o.scopes;
    this.#gate = new DpopGate(o, this.metadataUrl);
    const metadata: Record<string, unknown> = {
      resource: o.resource,
      authorization_servers: o.authorizationServers,
      // MCP basic/authorization §"Token Requirements": the Authorization header only.
      bearer_methods_supported: ['header'],
      // RFC 9728 §2: DPoP-bound tokens are accepted, with proofs signed by these algorithms.
      dpop_signing_alg_values_supported: o.algorithms,
      ...(o.scopesSupported.length > 0 ? { scopes_supported: o.scopesSupported } : {}),
      ...(o.resourceName === undefined ? {} : { resource_name: o.resourceName }),
      ...(o.resourceDocumentation === undefined ? {} : { resource_documentation: o.resourceDocumentation }),
    };
    this.#metadataJson = JSON.stringify(metadata);
    const discovery = {
      fetch: o.fetch,
      timeoutMs: o.timeoutMs,
      retryAfterS: o.retryAfterS,
      maxAgeMs: o.metadataMaxAgeMs,
      now: o.now,
    };
    const issuers = new Map(o.authorizationServers.map((iss) => [iss, new MetadataCache(iss, discovery)]));
    // The built-in verifiers accept a token until `exp` + the tolerance (#streamEnd).
    this.#graceMs = typeof o.verify === 'function' ? 0 : o.clockToleranceS * 1000;
    // RFC 7662 §4: an introspected token may be revoked before it expires (and may have no exp at
    // all), so its streams are re-checked as often as its answer is cached: a revoked token's stream
    // ends within about that long instead of at exp, or never.
    this.#recheckMs =
      o.verify === 'introspection' && o.introspection !== undefined
        ? o.introspection.cacheTtlMs > 0
          ? o.introspection.cacheTtlMs
          : OAUTH_DEFAULTS.introspectionCacheTtlMs
        : undefined;
    if (typeof o.verify === 'function') this.#verify = o.verify;
    else if (o.verify === 'introspection' && o.introspection !== undefined) {
      const issuer = o.authorizationServers[0] ?? '';
      this.#verify = new IntrospectionVerifier({
        issuer,
        metadata: issuers.get(issuer) as MetadataCache,
        ...o.introspection,
        clockToleranceS: o.clockToleranceS,
        timeoutMs: o.timeoutMs,
        retryAfterS: o.retryAfterS,
        fetch: o.fetch,
        now: o.now,
      }).verify;
    } else {
      this.#verify = new JwtVerifier({
        issuers,
        resource: o.resource,
        algorithms: o.algorithms,
        clockToleranceS: o.clockToleranceS,
        jwksCacheMaxAgeMs: o.jwksCacheMaxAgeMs,
        jwksCooldownMs: o.jwksCooldownMs,
        timeoutMs: o.timeoutMs,
        retryAfterS: o.retryAfterS,
        cacheEntries: o.jwtCacheEntries,
        cacheTtlMs: o.jwtCacheTtlMs,
        fetch: o.fetch,
        now: o.now,
      }).verify;
    }
  }

  /** Whether DPoP proof ids are spent in a store shared with other instances (`proofReplays`). */
  get sharesProofs(): boolean {
    return this.#o.proofReplays !== undefined;
  }

  /** A new resource server like this one, spending DPoP proof ids in `store` (this one is unchanged). */
  withProofReplays(store: ProofReplayStore): OAuthResourceServer {
    return new OAuthResourceServer({ ...this.#given, proofReplays: store });
  }

  /** The protected resource metadata document (RFC 9728 §2). */
  metadata(): Record<string, unknown> {
    return JSON.parse(this.#metadataJson) as Record<string, unknown>;
  }

  /** The paths the metadata is served at: path-inserted first, then the root. */
  get metadataPaths(): readonly string[] {
    return this.#paths;
  }

  /**
   * The answer for a request to `path` (no query) when it is a metadata path, else undefined.
   * Public and cacheable, readable from any origin (browser-based clients discover it too).
   */
  metadataAnswer(method: string, path: string): MetadataAnswer | undefined {
    return this.#paths.includes(path) ? metadataAnswer(method, this.#metadataJson) : undefined;
  }

  /** For the `authenticate` option of createMcpHandler, serve and createFetchHandler. */
  readonly authenticate = async (req: AuthRequest): Promise<OAuthAuthResult | Denial> => {
    if (tokenInQuery(req.url)) {
      return this.#deny(
        400,
        'token-in-query',
        'invalid_request',
        'access tokens are accepted only in the Authorization header',
      );
    }
    const header = req.header('authorization');
    if (header !== undefined && header.length > this.#o.maxTokenBytes + 16) {
      return this.#deny(
        401,
        'token-too-large',
        'invalid_token',
        `the token exceeds ${this.#o.maxTokenBytes} bytes`,
      );
    }
    const cred = readBearer(header);
    if (cred.kind === 'missing' || cred.kind === 'other-scheme') {
      // RFC 6750 §3.1: a request without credentials gets the challenge without an error code.
      return this.#deny(401, 'unauthorized', undefined, 'Unauthorized: a bearer token is required');
    }
    if (cred.kind === 'malformed')
      return this.#deny(400, 'malformed-authorization', 'invalid_request', cred.why);
    let token: VerifiedToken;
    try {
      token = await this.#verify(cred.token);
    } catch (error) {
      if (error instanceof InvalidTokenError) {
        return this.#deny(401, `token-${error.reason}`, 'invalid_token', error.message);
      }
      if (error instanceof AuthServerUnavailableError) {
        return {
          status: 503,
          reason: 'authorization-server-unavailable',
          message: 'Service Unavailable: the authorization server cannot be reached to check the token',
          headers: { 'retry-after': String(error.retryAfterS) },
        };
      }
      throw error;
    }
    const o = this.#o;
    if (boundThumbprint(token.claims) === undefined && hasConfirmation(token.claims)) {
      // RFC 8705 §3 (and any other RFC 7800 `cnf` method): a token bound to a key this server
      // cannot check the presenter holds must not be honoured as a bearer token.
      return this.#deny(
        401,
        'token-binding',
        'invalid_token',
        'the token is bound to a confirmation method this server does not support',
      );
    }
    const passed = await this.#gate.check(req, cred.scheme, cred.token, token.claims);
    if ('status' in passed) return passed;
    // Checked here for every verifier, a custom one included (RFC 8707 §2; RFC 8414 §3.3).
    if (!token.audience.includes(o.resource)) {
      return this.#deny(401, 'token-audience', 'invalid_token', 'the token was not issued for this resource');
    }
    if (!o.authorizationServers.includes(token.issuer)) {
      return this.#deny(
        401,
        'token-issuer',
        'invalid_token',
        'the token was not issued by an accepted authorization server',
      );
    }
    const granted = new Set(token.scopes);
    if (o.scopes.some((s) => !granted.has(s))) {
      return this.#deny(
        403,
        'insufficient-scope',
        'insufficient_scope',
        'the token lacks a scope this server requires',
        o.scopes,
      );
    }
    const principal =
      o.principal?.(token) ??
      (o.authorizationServers.length > 1 ? `${token.issuer} ${token.subject}` : token.subject);
    return {
      principal,
      expiresAt: this.#streamEnd(token.expiresAt),
      revalidateMs: this.#recheckMs,
      scopes: token.scopes,
      authorize:
        o.toolScopes.size === 0
          ? undefined
          : (method, params) => this.#authorizeTool(granted, method, params),
      token,
      headers: passed.headers,
    };
  };

  /** 2025-11-25 basic/authorization §"Scope Challenge Handling": name every scope the call needs. */
  #authorizeTool(granted: ReadonlySet<string>, method: string, params: unknown): Denial | undefined {
    if (method !== 'tools/call' || typeof params !== 'object' || params === null) return undefined;
    const name = (params as { name?: unknown }).name;
    const needs = typeof name === 'string' ? this.#o.toolScopes.get(name) : undefined;
    if (needs === undefined || needs.every((s) => granted.has(s))) return undefined;
    const all = [...new Set([...this.#o.scopes, ...needs])];
    return this.#deny(
      403,
      'insufficient-scope',
      'insufficient_scope',
      `tool '${String(name).slice(0, 64)}' needs scope ${needs.join(' ')}`,
      all,
    );
  }

  /**
   * When a stream opened with a token expiring at `exp` ends: at `exp`; but a token accepted past its
   * `exp`, inside the clock leeway (RFC 7519 §4.1.4), keeps its stream until the leeway ends, when
   * this server stops accepting it. Ending that one at `exp` ended it at once, and a client whose
   * clock runs behind came back with the same token, still accepted, over and over.
   */
  #streamEnd(exp: number | undefined): number | undefined {
    if (exp === undefined) return undefined;
    return exp > this.#o.now() ? exp : exp + this.#graceMs;
  }

  #deny(
    status: 400 | 401 | 403,
    reason: string,
    error: 'invalid_request' | 'invalid_token' | 'insufficient_scope' | undefined,
    description: string,
    scopes: readonly string[] = this.#challengeScopes,
  ): Denial {
    const challenge = bearerChallenge({
      resourceMetadata: this.metadataUrl,
      scopes,
      ...(error === undefined ? {} : { error, description }),
    });
    const message =
      status === 401
        ? `Unauthorized: ${description}`
        : status === 403
          ? `Forbidden: ${description}`
          : `Bad Request: ${description}`;
    return { status, reason, message, headers: { 'www-authenticate': challenge } };
  }
}

/** Builds the resource server; options are validated here, once (InvalidOptionError). */
export function oauthResourceServer(options: OAuthResourceServerOptions): OAuthResourceServer {
  return new OAuthResourceServer(options);
}
