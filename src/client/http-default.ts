import { InvalidOptionError } from './errors.js';
import type { AddressGuardFor, FetchLike, HttpClient } from './http-client.js';
import { createFetchHttp } from './http-fetch.js';
import type { RedirectPolicy } from './redirect.js';

/**
 * Chooses the HTTP adapter when the caller passed no `fetch`: `node:http` on Node (and Bun, which provides it
 * under `process.versions.node`), on Deno its `fetch` (see `denoHttp`), the global `fetch` anywhere else.
 *
 * The Node adapter is reached only through the guarded dynamic `import()` below, so nothing imports
 * `node:*` unless the code runs on Node: a browser loading the ES modules unbundled never fetches
 * `http-node.js`. Bundlers resolve a literal `import()` even when it never runs, so package.json maps this file
 * to `http-default.browser.js` under the `browser` field (webpack, Vite/Rollup, esbuild honour it for files
 * inside a package) and a browser bundle contains no `node:*` import at all. See docs/client.md.
 */

type Factory = (redirects: RedirectPolicy) => HttpClient;

let nodeFactory: Factory | undefined;
let loading: Promise<Factory | undefined> | undefined;

interface ProcessLike {
  versions?: { node?: unknown; bun?: unknown; deno?: unknown };
  env?: Record<string, string | undefined>;
}

export function isNodeRuntime(): boolean {
  const p = (globalThis as { process?: ProcessLike }).process;
  return typeof p?.versions?.node === 'string';
}

/** Node itself, not Bun or Deno (which also name a Node version; their `node:http` may not take a `lookup`). */
function isPlainNode(): boolean {
  const v = (globalThis as { process?: ProcessLike }).process?.versions;
  return isNodeRuntime() && v?.bun === undefined && v?.deno === undefined;
}

/**
 * `SLUICE_CLIENT_HTTP=fetch` in the environment makes transports without `options.fetch` use the global
 * `fetch` on Node too: an escape hatch (and how the conformance suite runs the CLI over the fetch adapter).
 */
function fetchForced(): boolean {
  return (globalThis as { process?: ProcessLike }).process?.env?.['SLUICE_CLIENT_HTTP'] === 'fetch';
}

/** Throws `InvalidOptionError` (at construction) when there is neither node:http nor a global `fetch`. */
export function checkDefaultHttp(): void {
  if (!isNodeRuntime() && typeof globalThis.fetch !== 'function') {
    throw new InvalidOptionError('no fetch available: pass options.fetch (global fetch needs Node >= 18)');
  }
}

function globalFetchHttp(redirects: RedirectPolicy): HttpClient {
  return createFetchHttp((url, init) => globalThis.fetch(url, init), undefined, redirects);
}

/**
 * A new HTTP client for one transport: synchronously once the Node adapter has been loaded (every transport
 * after the first), else after the one-time `import()`. If that import fails (a bundle that left the file
 * out), the global `fetch` is used.
 */
export function defaultHttp(redirects: RedirectPolicy): HttpClient | Promise<HttpClient> {
  const deno = denoHttp(redirects);
  if (deno !== undefined) return deno;
  if (!isNodeRuntime() || fetchForced()) return globalFetchHttp(redirects);
  if (nodeFactory !== undefined) return nodeFactory(redirects);
  loading ??= import('./http-node.js').then(
    (m) => m.createNodeHttp,
    () => undefined,
  );
  return loading.then((factory) => {
    if (factory === undefined) return globalFetchHttp(redirects);
    nodeFactory = factory;
    return factory(redirects);
  });
}

interface DenoLike {
  createHttpClient?: (options: { poolMaxIdlePerHost?: number }) => unknown;
}
let denoFresh: FetchLike | undefined;

/**
 * On Deno: its `fetch`, and for requests that must not be sent twice (a `tools/call` without an idempotency
 * key) a `fetch` whose connections are never reused. Deno (2.9.6, measured) re-sends a request whose reused
 * keep-alive connection is reset after the request went out, with `fetch` and with its `node:http` alike (the
 * latter without the body, so the server answers 408): a tool would run twice. On a connection of its own a
 * reset reaches the adapter, which reports that the call may have run (docs/client.md, "Deno"). Not on Deno,
 * or with `SLUICE_CLIENT_HTTP=fetch`: undefined.
 */
function denoHttp(redirects: RedirectPolicy): HttpClient | undefined {
  const deno = (globalThis as { Deno?: DenoLike }).Deno;
  if (typeof deno?.createHttpClient !== 'function' || fetchForced()) return undefined;
  if (denoFresh === undefined) {
    const client = deno.createHttpClient({ poolMaxIdlePerHost: 0 });
    denoFresh = (url, init) => globalThis.fetch(url, { ...init, client } as RequestInit);
  }
  return createFetchHttp((url, init) => globalThis.fetch(url, init), denoFresh, redirects);
}

/**
 * The OAuth client's `fetch` when the caller passed none. On Node (not Bun or Deno, whose `node:http` may not
 * take a `lookup`): `node:http` with the resolved addresses checked by `guardFor` before connecting
 * (http-node-guarded.ts), loaded on first use. Elsewhere, and with `SLUICE_CLIENT_HTTP=fetch`: the global
 * `fetch`, where only the URL policy's literal checks apply.
 */
export function defaultOAuthFetch(guardFor: AddressGuardFor): FetchLike {
  if (!isPlainNode() || fetchForced()) return (url, init) => globalThis.fetch(url, init);
  let guarded: Promise<FetchLike> | undefined;
  return async (url, init) => {
    guarded ??= import('./http-node-guarded.js').then((m) => m.createGuardedFetch(guardFor));
    return (await guarded)(url, init);
  };
}

/** The adapter over a caller's `fetch`. */
export function fetchHttp(fetchFn: FetchLike, redirects: RedirectPolicy): HttpClient {
  return createFetchHttp(fetchFn, undefined, redirects);
}
