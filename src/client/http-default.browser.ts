import { InvalidOptionError } from './errors.js';
import type { AddressGuardFor, FetchLike, HttpClient } from './http-client.js';
import { createFetchHttp } from './http-fetch.js';
import type { RedirectPolicy } from './redirect.js';

/**
 * `http-default.ts` for browser bundles (package.json `browser` field): the same exports, and only the global
 * `fetch`; no reference to `http-node.js` or any `node:*` module.
 */

export function isNodeRuntime(): boolean {
  return false;
}

export function checkDefaultHttp(): void {
  if (typeof globalThis.fetch !== 'function') {
    throw new InvalidOptionError('no fetch available: pass options.fetch');
  }
}

export function defaultHttp(redirects: RedirectPolicy): HttpClient | Promise<HttpClient> {
  return createFetchHttp((url, init) => globalThis.fetch(url, init), undefined, redirects);
}

export function fetchHttp(fetchFn: FetchLike, redirects: RedirectPolicy): HttpClient {
  return createFetchHttp(fetchFn, undefined, redirects);
}

/** The OAuth client's `fetch`: the global one (a browser resolves names itself; the URL policy checks literals). */
export function defaultOAuthFetch(_guardFor: AddressGuardFor): FetchLike {
  return (url, init) => globalThis.fetch(url, init);
}
