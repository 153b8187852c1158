/**
 * The client transport's two HTTP adapters, for tests that run every case over both: the Node
 * adapter (the default under Node) and the fetch adapter (browsers, Deno, Bun, workerd), chosen by
 * passing a `fetch`.
 */
import type { StreamableHttpClientOptions } from '../../src/client/index.js';

export const CLIENT_ADAPTERS: Readonly<Record<string, StreamableHttpClientOptions>> = {
  node: {},
  fetch: { fetch: (url, init) => globalThis.fetch(url, init) },
};
