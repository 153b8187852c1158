/**
 * Authorization server metadata, found from the issuer identifier alone: RFC 8414 §3.1 first
 * (`/.well-known/oauth-authorization-server`, path-inserted), then OpenID Connect Discovery 1.0 §4
 * (`/.well-known/openid-configuration`, path-inserted, then path-appended), the order MCP
 * 2025-11-25 basic/authorization §"Authorization Server Metadata Discovery" gives. The document's
 * `issuer` must equal the configured issuer exactly (RFC 8414 §3.3), or it is not used.
 *
 * The answer is cached; a failure is remembered for `retryAfterS`, so an unreachable authorization
 * server is asked at most once per window however many requests arrive (each gets 503 meanwhile).
 */
import { AuthServerUnavailableError } from './errors.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** The fields Sluice reads; the rest of the document is kept as received. */
export interface AuthServerMetadata {
  readonly issuer: string;
  readonly jwks_uri?: string;
  readonly introspection_endpoint?: string;
  readonly [field: string]: unknown;
}

/** A metadata document or JWKS larger than this is refused (a misbehaving endpoint, not a key set). */
const MAX_DOCUMENT_BYTES = 1024 * 1024;

/** The well-known URLs to try for `issuer`, in order. */
export function metadataUrls(issuer: string): string[] {
  const u = new URL(issuer);
  const path = u.pathname === '/' ? '' : u.pathname.replace(/\/$/, '');
  const origin = u.origin;
  if (path === '') {
    return [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`];
  }
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

/** GETs a JSON object; `undefined` for a 404/410 (try the next URL), throws for anything else. */
export async function fetchJson(
  fetchFn: FetchLike,
  url: string,
  timeoutMs: number,
  init: RequestInit = {},
): Promise<Record<string, unknown> | undefined> {
  const res = await fetchFn(url, {
    ...init,
    headers: { accept: 'application/json', ...(init.headers as Record<string, string> | undefined) },
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (res.status === 404 || res.status === 410) {
    await res.body?.cancel();
    return undefined;
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new Error(`${url} answered ${res.status}`);
  }
  const text = await res.text();
  if (text.length > MAX_DOCUMENT_BYTES)
    throw new Error(`${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
  const json: unknown = JSON.parse(text);
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new Error(`${url} did not answer a JSON object`);
  }
  return json as Record<string, unknown>;
}

export interface DiscoveryOptions {
  fetch: FetchLike;
  timeoutMs: number;
  retryAfterS: number;
  /** A cached document older than this is fetched again (the stale one is kept if that fails). */
  maxAgeMs: number;
  now: () => number;
}

/** One issuer's metadata, fetched on first use and cached. */
export class MetadataCache {
  readonly #issuer: string;
  readonly #o: DiscoveryOptions;
  #doc: AuthServerMetadata | undefined;
  #fetchedAt = 0;
  #failedAt: number | undefined;
  #pending: Promise<AuthServerMetadata> | undefined;

  constructor(issuer: string, options: DiscoveryOptions) {
    this.#issuer = issuer;
    this.#o = options;
  }

  get(): Promise<AuthServerMetadata> {
    const now = this.#o.now();
    const doc = this.#doc;
    if (doc !== undefined && now - this.#fetchedAt < this.#o.maxAgeMs) return Promise.resolve(doc);
    const failedAt = this.#failedAt;
    if (failedAt !== undefined && now - failedAt < this.#o.retryAfterS * 1000) {
      if (doc !== undefined) return Promise.resolve(doc);
      return Promise.reject(this.#unavailable('failed moments ago', undefined));
    }
    this.#pending ??= this.#load().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #load(): Promise<AuthServerMetadata> {
    try {
      for (const url of metadataUrls(this.#issuer)) {
        const json = await fetchJson(this.#o.fetch, url, this.#o.timeoutMs);
        if (json === undefined) continue;
        // RFC 8414 §3.3: a document for another issuer must not be used.
        if (json['issuer'] !== this.#issuer) {
          throw new Error(`${url} names issuer ${JSON.stringify(json['issuer'])}, not ${this.#issuer}`);
        }
        this.#doc = json as unknown as AuthServerMetadata;
        this.#fetchedAt = this.#o.now();
        this.#failedAt = undefined;
        return this.#doc;
      }
      throw new Error('no authorization server metadata at any well-known URL');
    } catch (cause) {
      this.#failedAt = this.#o.now();
      if (this.#doc !== undefined) return this.#doc;
      throw this.#unavailable(cause instanceof Error ? cause.message : String(cause), cause);
    }
  }

  #unavailable(why: string, cause: unknown): AuthServerUnavailableError {
    return new AuthServerUnavailableError(
      `authorization server metadata for ${this.#issuer}: ${why}`,
      this.#o.retryAfterS,
      { cause },
    );
  }
}
