/**
 * JWT access tokens (RFC 9068) verified with `jose` against the issuer's JWKS, found through its
 * metadata (`jwks_uri`, src/auth/discovery.ts). The key set is cached for `jwksCacheMaxAgeMs`; a
 * token whose `kid` the cached set lacks makes jose fetch the set once more, at most once per
 * `jwksCooldownMs` (key rotation without letting forged `kid`s hammer the authorization server).
 *
 * A verified token is remembered, by its whole text, for `cacheTtlMs` and never past its `exp`
 * (at most `cacheEntries` tokens): a client presents the same token on every request, and checking
 * its signature again each time is most of the cost of authenticating it.
 *
 * Only asymmetric algorithms are accepted: a resource server holds no shared secret, and accepting
 * HS256 against a public key is the classic confusion attack (RFC 8725 §2.1, §3.1).
 */
import type { JWTVerifyGetKey } from 'jose';
import { BoundedMap } from '../flow/bounded-map.js';
import type { FetchLike, MetadataCache } from './discovery.js';
import { AuthServerUnavailableError, InvalidTokenError, type InvalidTokenReason } from './errors.js';
import { type Jose, loadJose } from './jose-lazy.js';
import { audienceOf, scopesOf, subjectOf, type VerifiedToken } from './verified-token.js';

export interface JwtVerifierOptions {
  issuers: ReadonlyMap<string, MetadataCache>;
  resource: string;
  algorithms: readonly string[];
  clockToleranceS: number;
  jwksCacheMaxAgeMs: number;
  jwksCooldownMs: number;
  timeoutMs: number;
  retryAfterS: number;
  /** Verified tokens remembered at most; 0 turns the cache off. */
  cacheEntries: number;
  cacheTtlMs: number;
  fetch: FetchLike;
  now: () => number;
}

/** jose's error codes that say something about the token (everything else is the JWKS endpoint's fault). */
const TOKEN_ERRORS: Record<string, InvalidTokenReason> = {
  ERR_JWT_EXPIRED: 'expired',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'signature',
  ERR_JOSE_ALG_NOT_ALLOWED: 'algorithm',
  ERR_JWKS_NO_MATCHING_KEY: 'unknown-key',
  ERR_JWKS_MULTIPLE_MATCHING_KEYS: 'unknown-key',
  ERR_JWS_INVALID: 'malformed',
  ERR_JWT_INVALID: 'malformed',
  ERR_JOSE_NOT_SUPPORTED: 'malformed',
};
/**
 * `typ` values an access token may carry: RFC 9068 §2.1 `at+jwt` (with or without `application/`),
 * and the generic `JWT` (or none) that Keycloak and Entra ID put on theirs. Any other declared type
 * (`dpop+jwt`, `logout+jwt`, `secevent+jwt`, `token-introspection+jwt`, ...) is another kind of JWT,
 * signed by the same keys perhaps, never to be taken for an access token (RFC 8725 §3.11, RFC 9068 §4).
 */
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt', 'jwt', 'application/jwt']);

const CLAIM_ERRORS: Record<string, InvalidTokenReason> = {
  exp: 'expired',
  nbf: 'not-yet-valid',
  aud: 'audience',
  iss: 'issuer',
};

export class JwtVerifier {
  readonly #o: JwtVerifierOptions;
  readonly #keySets = new Map<string, JWTVerifyGetKey>();
  /** Insertion order is age order: the oldest entry goes first (flow/bounded-map.ts says why not a Map). */
  readonly #verified: BoundedMap<string, { token: VerifiedToken; until: number }>;

  constructor(options: JwtVerifierOptions) {
    this.#o = options;
    // With cacheEntries 0 nothing is remembered (#remember); the map is then never written.
    this.#verified = new BoundedMap(Math.max(1, options.cacheEntries));
  }

  readonly verify = async (token: string): Promise<VerifiedToken> => {
    const o = this.#o;
    const hit = this.#verified.get(token);
    if (hit !== undefined) {
      if (o.now() < hit.until) return hit.token;
      this.#verified.delete(token);
    }
    const verified = await this.#verify(token);
    this.#remember(token, verified);
    return verified;
  };

  #remember(text: string, token: VerifiedToken): void {
    const o = this.#o;
    if (o.cacheEntries === 0) return;
    const until = Math.min(o.now() + o.cacheTtlMs, token.expiresAt ?? 0);
    if (until <= o.now()) return;
    this.#verified.set(text, { token, until });
  }

  async #verify(token: string): Promise<VerifiedToken> {
    const o = this.#o;
    const jose = await loadJose();
    let alg: unknown;
    let typ: unknown;
    let iss: unknown;
    try {
      ({ alg, typ } = jose.decodeProtectedHeader(token));
      iss = jose.decodeJwt(token).iss;
    } catch (cause) {
      throw new InvalidTokenError('malformed', 'the token is not a JWT', { cause });
    }
    if (typeof alg !== 'string' || !o.algorithms.includes(alg)) {
      throw new InvalidTokenError('algorithm', `algorithm ${String(alg).slice(0, 16)} is not accepted`);
    }
    if (typ !== undefined && (typeof typ !== 'string' || !ACCESS_TOKEN_TYPES.has(typ.toLowerCase()))) {
      throw new InvalidTokenError('type', `a JWT of type ${String(typ).slice(0, 32)} is not an access token`);
    }
    const metadata = typeof iss === 'string' ? o.issuers.get(iss) : undefined;
    if (typeof iss !== 'string' || metadata === undefined) {
      throw new InvalidTokenError('issuer', 'the token was not issued by an accepted authorization server');
    }
    const keys = await this.#keySet(jose, iss, metadata);
    try {
      const { payload } = await jose.jwtVerify(token, keys, {
        issuer: iss,
        audience: o.resource,
        algorithms: [...o.algorithms],
        clockTolerance: o.clockToleranceS,
        requiredClaims: ['exp'],
        currentDate: new Date(o.now()),
      });
      const claims = payload as Record<string, unknown>;
      const subject = subjectOf(claims);
      if (subject === undefined)
        throw new InvalidTokenError('claims', 'the token has neither sub nor client_id');
      return {
        issuer: iss,
        audience: audienceOf(claims),
        subject,
        scopes: scopesOf(claims),
        expiresAt: typeof payload.exp === 'number' ? payload.exp * 1000 : undefined,
        claims,
      };
    } catch (error) {
      throw this.#classify(jose.errors, error);
    }
  }

  #classify(errors: Jose['errors'], error: unknown): Error {
    if (error instanceof InvalidTokenError) return error;
    if (error instanceof errors.JWTClaimValidationFailed || error instanceof errors.JWTExpired) {
      const reason = (error.reason === 'missing' ? undefined : CLAIM_ERRORS[error.claim]) ?? 'claims';
      return new InvalidTokenError(
        reason,
        `the token's ${error.claim} claim is not accepted (${error.reason})`,
        {
          cause: error,
        },
      );
    }
    const code = error instanceof errors.JOSEError ? error.code : undefined;
    const reason = code === undefined ? undefined : TOKEN_ERRORS[code];
    if (reason !== undefined) {
      return new InvalidTokenError(reason, error instanceof Error ? error.message : reason, { cause: error });
    }
    // A timeout, a refused connection, a non-200 or a broken key set: the JWKS endpoint's fault.
    return new AuthServerUnavailableError(
      `the JWKS could not be fetched: ${error instanceof Error ? error.message : String(error)}`,
      this.#o.retryAfterS,
      { cause: error },
    );
  }

  async #keySet(jose: Jose, issuer: string, metadata: MetadataCache): Promise<JWTVerifyGetKey> {
    const known = this.#keySets.get(issuer);
    if (known !== undefined) return known;
    const doc = await metadata.get();
    const uri = doc.jwks_uri;
    if (typeof uri !== 'string' || !URL.canParse(uri)) {
      throw new AuthServerUnavailableError(`${issuer} publishes no jwks_uri`, this.#o.retryAfterS);
    }
    const o = this.#o;
    const keys = jose.createRemoteJWKSet(new URL(uri), {
      cacheMaxAge: o.jwksCacheMaxAgeMs,
      cooldownDuration: o.jwksCooldownMs,
      timeoutDuration: o.timeoutMs,
      [jose.customFetch]: backedOff(o) as typeof fetch,
    });
    this.#keySets.set(issuer, keys);
    return keys;
  }
}

/**
 * `fetch` for one JWKS, not asked again for `retryAfterS` after it failed. jose remembers only
 * successful fetches: with no fresh key set (at start, or once `jwksCacheMaxAgeMs` has passed) every
 * token would fetch the set again while the endpoint is down, one request to the authorization
 * server per request received. The discovery cache has the same window (discovery.ts).
 */
function backedOff(o: JwtVerifierOptions): FetchLike {
  let failedAt: number | undefined;
  return async (url, init) => {
    if (failedAt !== undefined && o.now() - failedAt < o.retryAfterS * 1000) {
      throw new Error(`${url} failed less than ${o.retryAfterS} s ago`);
    }
    try {
      const res = await o.fetch(url, init);
      failedAt = res.status === 200 ? undefined : o.now();
      return res;
    } catch (error) {
      failedAt = o.now();
      throw error;
    }
  };
}
