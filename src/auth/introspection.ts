/**
 * RFC 7662 token introspection: the authorization server says whether a token is active. For opaque
 * tokens, and for deployments that want revocation honoured within `cacheTtlMs` rather than at
 * `exp`. Answers are cached by the token's SHA-256 (the token itself is never kept), bounded in
 * count, and never past the token's `exp`; refusals are cached too, so a replayed bad token does
 * not reach the authorization server on every request.
 */
import { BoundedMap } from '../flow/bounded-map.js';
import type { FetchLike, MetadataCache } from './discovery.js';
import { AuthServerUnavailableError, InvalidTokenError } from './errors.js';
import { audienceOf, scopesOf, subjectOf, type VerifiedToken } from './verified-token.js';

export interface IntrospectionOptions {
  issuer: string;
  metadata: MetadataCache;
  /** The resource server's own client credentials at the authorization server (RFC 7662 §2.1). */
  clientId: string;
  clientSecret: string;
  cacheTtlMs: number;
  maxCacheEntries: number;
  clockToleranceS: number;
  timeoutMs: number;
  retryAfterS: number;
  fetch: FetchLike;
  now: () => number;
}

interface Entry {
  until: number;
  result: VerifiedToken | InvalidTokenError;
}

/** RFC 6749 §2.3.1: the client id and secret are form-encoded before Basic encoding. */
function basic(id: string, secret: string): string {
  const enc = (v: string): string => encodeURIComponent(v).replace(/%20/g, '+');
  const bytes = new TextEncoder().encode(`${enc(id)}:${enc(secret)}`);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return `Basic ${btoa(bin)}`;
}

async function digest(token: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token)));
  let hex = '';
  for (const b of d) hex += b.toString(16).padStart(2, '0');
  return hex;
}

export class IntrospectionVerifier {
  readonly #o: IntrospectionOptions;
  /** Insertion order is age order: the oldest entry goes first (flow/bounded-map.ts says why not a Map). */
  readonly #cache: BoundedMap<string, Entry>;
  /**
   * Refusals apart, with their own bound: anyone can send tokens that are refused, and in the one
   * map a stream of distinct bad tokens would push every accepted token out, so each of them would
   * be asked for again on its next request (the cache defeated, the authorization server asked
   * once per request received).
   */
  readonly #refused: BoundedMap<string, Entry>;
  readonly #authorization: string;
  /** Questions under way, by token digest; each leaves when answered (bounded by requests in flight). */
  readonly #pending = new Map<string, Promise<VerifiedToken>>();

  constructor(options: IntrospectionOptions) {
    this.#o = options;
    this.#cache = new BoundedMap(options.maxCacheEntries);
    this.#refused = new BoundedMap(options.maxCacheEntries);
    this.#authorization = basic(options.clientId, options.clientSecret);
  }

  /** Entries held now (for tests and metrics). */
  get cached(): number {
    return this.#cache.size + this.#refused.size;
  }

  readonly verify = async (token: string): Promise<VerifiedToken> => {
    const o = this.#o;
    const key = await digest(token);
    const now = o.now();
    const hit = this.#cache.get(key) ?? this.#refused.get(key);
    if (hit !== undefined) {
      if (hit.until > now) {
        if (hit.result instanceof InvalidTokenError) throw hit.result;
        return hit.result;
      }
      this.#cache.delete(key);
      this.#refused.delete(key);
    }
    // Requests that arrive together with one token (a client's first burst) share one question.
    let pending = this.#pending.get(key);
    if (pending === undefined) {
      pending = this.#fresh(token, key, now).finally(() => this.#pending.delete(key));
      this.#pending.set(key, pending);
    }
    return pending;
  };

  async #fresh(token: string, key: string, now: number): Promise<VerifiedToken> {
    const o = this.#o;
    const answer = await this.#ask(token);
    const result = this.#judge(answer, now);
    const until = Math.min(
      now + o.cacheTtlMs,
      result instanceof InvalidTokenError
        ? Number.POSITIVE_INFINITY
        : (result.expiresAt ?? Number.POSITIVE_INFINITY),
    );
    this.#remember(key, { until, result });
    if (result instanceof InvalidTokenError) throw result;
    return result;
  }

  #remember(key: string, entry: Entry): void {
    if (this.#o.cacheTtlMs === 0) return;
    (entry.result instanceof InvalidTokenError ? this.#refused : this.#cache).set(key, entry);
  }

  async #ask(token: string): Promise<Record<string, unknown>> {
    const o = this.#o;
    const doc = await o.metadata.get();
    const endpoint = doc.introspection_endpoint;
    if (typeof endpoint !== 'string' || !URL.canParse(endpoint)) {
      throw new AuthServerUnavailableError(`${o.issuer} publishes no introspection_endpoint`, o.retryAfterS);
    }
    let res: Response;
    try {
      res = await o.fetch(endpoint, {
        method: 'POST',
        headers: {
          authorization: this.#authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        signal: AbortSignal.timeout(o.timeoutMs),
      });
    } catch (cause) {
      throw new AuthServerUnavailableError(
        `introspection at ${endpoint} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
        o.retryAfterS,
        { cause },
      );
    }
    let json: unknown;
    try {
      json = res.status === 200 ? await res.json() : undefined;
    } catch {
      json = undefined;
    }
    if (json === undefined) await res.body?.cancel().catch(() => undefined);
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      // 401 here means the resource server's own credentials are wrong: still not the token's fault.
      throw new AuthServerUnavailableError(
        `introspection at ${endpoint} answered ${res.status} without a JSON object`,
        o.retryAfterS,
      );
    }
    return json as Record<string, unknown>;
  }

  /** RFC 7662 §2.2: only `active: true` means anything; the other fields are checked as a JWT's would be. */
  #judge(a: Record<string, unknown>, now: number): VerifiedToken | InvalidTokenError {
    const o = this.#o;
    if (a['active'] !== true) return new InvalidTokenError('inactive', 'the token is not active');
    const skew = o.clockToleranceS * 1000;
    const exp = a['exp'];
    if (exp !== undefined && (typeof exp !== 'number' || exp * 1000 + skew <= now)) {
      return new InvalidTokenError('expired', 'the token has expired');
    }
    const nbf = a['nbf'];
    if (typeof nbf === 'number' && nbf * 1000 - skew > now) {
      return new InvalidTokenError('not-yet-valid', 'the token is not valid yet');
    }
    const iss = a['iss'] ?? o.issuer;
    if (iss !== o.issuer)
      return new InvalidTokenError('issuer', 'the token was issued by another authorization server');
    const subject = subjectOf(a);
    if (subject === undefined)
      return new InvalidTokenError('claims', 'the token has neither sub nor client_id');
    return {
      issuer: o.issuer,
      audience: audienceOf(a),
      subject,
      scopes: scopesOf(a),
      expiresAt: typeof exp === 'number' ? exp * 1000 : undefined,
      claims: a,
    };
  }
}
