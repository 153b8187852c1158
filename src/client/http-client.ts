/**
 * The small HTTP interface the transport is written against, so that it does not depend on `fetch`'s
 * `Response`. Two adapters implement it: `http-fetch.ts` (any `fetch`; used in browsers and whenever
 * `options.fetch` is passed) and `http-node.ts` (`node:http`/`node:https` with a keep-alive agent; the
 * default on Node, loaded by `http-default.ts`). See docs/client.md, "HTTP adapters".
 */

/**
 * A response body: its chunks in order, read once. `cancel()` releases it; a `next()` pending at that moment
 * then resolves as done (as `ReadableStreamDefaultReader.cancel()` does). A transport or protocol error
 * rejects the pending `next()`.
 */
export interface HttpBody extends AsyncIterable<Uint8Array> {
  /** Idempotent; never rejects. */
  cancel(): Promise<void>;
}

export interface HttpResponse {
  readonly status: number;
  /**
   * A response header, `Headers.get()` semantics: the name is matched case-insensitively, repeated fields are
   * joined with `", "`, and an absent one is `null`.
   */
  header(name: string): string | null;
  /** `null` for a null-body status (204, 205, 304), as in `fetch`. */
  readonly body: HttpBody | null;
  /**
   * The whole body decoded as UTF-8 (a leading BOM stripped), or `undefined` when it exceeds `limit` bytes
   * (the body is cancelled then). So a hostile server cannot make the client buffer gigabytes.
   */
  text(limit: number): Promise<string | undefined>;
}

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

export interface HttpClient {
  /**
   * Sends one request and resolves once the response head has arrived (redirects followed as `fetch` does).
   * Aborting `signal` rejects a pending request, and ends the body of a response already received.
   * `headers` has lower-case names and is owned by the callee.
   */
  request(
    method: HttpMethod,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal,
  ): Promise<HttpResponse>;
  /** Releases pooled connections. Called by the transport's `close()`, last. Idempotent. */
  close(): void;
}

/** 2xx, like `Response.ok`. */
export function isOk(response: HttpResponse): boolean {
  return response.status >= 200 && response.status < 300;
}
