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
   * A body on which no byte arrives for `silenceMs` is cancelled and the read rejects with
   * {@link BodySilenceError}: so it cannot hold a request forever either (the transport passes its
   * `idleTimeoutMs`, the bound its SSE streams have).
   */
  text(limit: number, silenceMs: number): Promise<string | undefined>;
}

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/**
 * What a request, and the read of its body, listen to for cancellation. The transport's own handle
 * ({@link Canceller}) rather than an `AbortController`: on Node 20 one `AbortController` plus one listener
 * added and removed costs about 4.5 µs, a few percent of a whole `tools/call` on the Node adapter.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  /** Called once, synchronously, when aborted. Not called if already aborted: check `aborted` first. */
  onAbort(listener: () => void): void;
  offAbort(listener: () => void): void;
  /** A WHATWG `AbortSignal` that follows this one, created on first use (for `fetch`). */
  readonly signal: AbortSignal;
}

/** A {@link CancelSignal} with its `abort()`. */
export class Canceller implements CancelSignal {
  #aborted = false;
  get aborted(): boolean {
    return this.#aborted;
  }
  private listeners: (() => void)[] | undefined;
  private controller: AbortController | undefined;

  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
    this.controller?.abort();
  }

  onAbort(listener: () => void): void {
    if (this.#aborted) return;
    if (this.listeners === undefined) this.listeners = [listener];
    else this.listeners.push(listener);
  }

  offAbort(listener: () => void): void {
    const listeners = this.listeners;
    if (listeners === undefined) return;
    const i = listeners.indexOf(listener);
    if (i !== -1) listeners.splice(i, 1);
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.#aborted) this.controller.abort();
    }
    return this.controller.signal;
  }
}

/**
 * Socket error codes of a connection lost after a request may have been written and before any response byte:
 * on a reused keep-alive socket they usually mean the server had closed that idle connection. "Usually": a proxy
 * that forwarded the request and then died looks the same, so the server may have it. Both adapters read them
 * (the Node adapter on the socket's error, the fetch adapter on the error or its cause).
 */
export const STALE_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
/** A resendable request that met a lost connection is sent again at most this many times, by either adapter. */
export const MAX_STALE_RESENDS = 3;

/**
 * A request written to a reused keep-alive connection that failed (reset, broken pipe) before any response byte,
 * when the caller did not allow sending it again: the server may or may not have received it. Adapter-internal;
 * the transport turns it into a typed client error.
 */
export class StaleConnectionError extends Error {
  constructor(cause: unknown) {
    super('the connection failed after the request was sent and before any response byte', { cause });
    this.name = 'StaleConnectionError';
  }
}

/** A body read by `text(limit, silenceMs)` on which no byte arrived for `silenceMs`. Adapter-internal. */
export class BodySilenceError extends Error {
  readonly silenceMs: number;
  constructor(silenceMs: number) {
    super(`no byte of the body for ${silenceMs} ms`);
    this.name = 'BodySilenceError';
    this.silenceMs = silenceMs;
  }
}

/**
 * A DNS name that resolved only to addresses a guard refuses (the OAuth client's URL policy, checked at the
 * lookup the connection uses: http-node-guarded.ts): no connection was made. Adapter-internal; the OAuth
 * exchange turns it into `AuthorizationError` reason `url-refused`.
 */
export class AddressRefusedError extends Error {
  readonly host: string;
  readonly addresses: string;
  constructor(host: string, addresses: string) {
    super(`${host} resolves to ${addresses || 'no address'}, which the OAuth URL policy refuses`);
    this.name = 'AddressRefusedError';
    this.host = host;
    this.addresses = addresses;
  }
}

/** For one URL: the check its resolved addresses must pass before a connection, or undefined for none. */
export type AddressGuardFor = (url: URL) => ((address: string) => boolean) | undefined;

export interface HttpClient {
  /**
   * Sends one request and resolves once the response head has arrived (redirects followed as redirect.ts allows;
   * any other redirect answer is resolved as it is).
   * Aborting `cancel` rejects a pending request, and ends the body of a response already received.
   * `headers` has lower-case names and is owned by the callee.
   *
   * `resendable`: whether the request may be sent again when it met a stale keep-alive socket (no response
   * byte back). Only requests that are safe to repeat may be (RFC 9110 §9.2.2); otherwise such a failure
   * rejects with {@link StaleConnectionError}. An adapter that cannot tell a reused socket (fetch) treats every
   * connection lost before a response head so.
   */
  request(
    method: HttpMethod,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    cancel: CancelSignal,
    resendable: boolean,
  ): Promise<HttpResponse>;
  /** Releases pooled connections. Called by the transport's `close()`, last. Idempotent. */
  close(): void;
}

/** 2xx, like `Response.ok`. */
export function isOk(response: HttpResponse): boolean {
  return response.status >= 200 && response.status < 300;
}

/** A `fetch` for the transport to call instead of its default HTTP adapter. Same shape as the SDK's `FetchLike`. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Timers and clock, injectable for deterministic tests. */
export interface ClientClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}
