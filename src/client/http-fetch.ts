import {
  type FetchLike,
  type HttpBody,
  type HttpClient,
  type HttpResponse,
  MAX_STALE_RESENDS,
  STALE_CODES,
  StaleConnectionError,
} from './http-client.js';
import { headersAcross, isRedirect, MAX_REDIRECTS, type RedirectPolicy, redirectTarget } from './redirect.js';
import { readTextLimited } from './sse-reader.js';

/**
 * Deno's fetch gives no code, only its HTTP stack's words (observed with Deno 2.9.6): a connection reset once
 * the request was on it is "Connection reset by peer (os error 104)", one closed before a response head
 * "client error (SendRequest): connection closed before message completed"; a connection never made is
 * "client error (Connect): …", which is not matched.
 */
const DENO_LOST = /\(SendRequest\)|\bconnection reset by peer\b|\bbroken pipe\b/i;

/**
 * Whether a fetch failed because the connection was lost (`STALE_CODES`, as the Node adapter reads them)
 * before a response head: undici (Node's fetch) puts the code on the `cause` (the socket's own, or its
 * `UND_ERR_SOCKET` "other side closed"); Bun on the error itself; Deno says it in words (`DENO_LOST`). A
 * refused connection (`ECONNREFUSED`) is not among them: that request reached no one. Browsers retry a stale
 * socket themselves.
 */
function connectionLost(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < 3 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (STALE_CODES.has(code) || code === 'UND_ERR_SOCKET')) return true;
    const message = (e as { message?: unknown }).message;
    if (depth > 0 && typeof message === 'string' && !message.includes('(Connect)') && DENO_LOST.test(message))
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * The `fetch` adapter: used when `options.fetch` is passed, and by default outside Node (browsers, Deno
 * without node:http, workers). Imports nothing from `node:*`.
 *
 * A lost connection (above) is treated as the Node adapter treats one on a reused keep-alive socket, since
 * fetch cannot say whether the socket was reused: a `resendable` request goes again, any other rejects with
 * `StaleConnectionError`, so that the transport re-sends it only when it is idempotent and otherwise reports
 * that it may have run (RFC 9110 §9.2.2). Both are as true of a fresh connection that was cut.
 * `freshFetch`, when given, sends the requests that are not resendable.
 */
export function createFetchHttp(
  fetchFn: FetchLike,
  freshFetch: FetchLike = fetchFn,
  redirectPolicy: RedirectPolicy = 'same-origin',
): HttpClient {
  return {
    async request(method, url, headers, body, cancel, resendable): Promise<HttpResponse> {
      const signal = cancel.signal;
      // Redirects are followed here, as redirect.ts allows, never by fetch: fetch would carry the session id and
      // the caller's headers to another origin. In a browser a manual redirect is an opaque answer (status 0) that
      // cannot be followed; the transport reports it as such.
      let init: RequestInit =
        body === undefined
          ? { method, headers, signal, redirect: 'manual' }
          : { method, headers, body, signal, redirect: 'manual' };
      // A request that must not go twice takes `freshFetch`: on Deno a fetch whose connections are never
      // reused (http-default.ts), since Deno's fetch re-sends a request whose reused connection was reset.
      const send = resendable ? fetchFn : freshFetch;
      let target = url;
      let sent = headers;
      for (let redirects = 0; ; redirects++) {
        const response = await fetchOnce(send, target, init, signal, resendable);
        const next = isRedirect(response.status)
          ? redirectTarget(response.status, method, target, response.headers.get('location'), redirectPolicy)
          : undefined;
        if (next === undefined) return new FetchResponse(response);
        await response.body?.cancel().catch(() => {
          // Nothing left to release.
        });
        if (redirects >= MAX_REDIRECTS) throw new TypeError('redirect count exceeded');
        // Leaving the origin (only under 'follow') drops the credentials (redirect.ts).
        const nextHeaders = headersAcross(target, next, sent);
        if (nextHeaders !== sent) {
          sent = nextHeaders;
          init = { ...init, headers: sent };
        }
        target = next;
      }
    },
    close() {
      // The connections belong to the fetch implementation's own pool.
    },
  };
}

/** One fetch, sent again after a lost connection when `resendable` (see `createFetchHttp`). */
async function fetchOnce(
  send: FetchLike,
  url: URL,
  init: RequestInit,
  signal: AbortSignal,
  resendable: boolean,
): Promise<Response> {
  for (let resends = 0; ; resends++) {
    try {
      return await send(url, init);
    } catch (error) {
      if (signal.aborted || !connectionLost(error)) throw error;
      if (!resendable) throw new StaleConnectionError(error);
      if (resends >= MAX_STALE_RESENDS) throw error;
    }
  }
}

/** A fetch `Response` as an `HttpResponse`. @internal exported for the unit tests */
export function fetchResponse(response: Response): HttpResponse {
  return new FetchResponse(response);
}

class FetchResponse implements HttpResponse {
  readonly status: number;
  readonly body: HttpBody | null;
  private readonly response: Response;

  constructor(response: Response) {
    this.response = response;
    this.status = response.status;
    this.body = response.body === null ? null : new StreamBody(response.body, response);
  }

  header(name: string): string | null {
    return this.response.headers.get(name);
  }

  text(limit: number, silenceMs: number): Promise<string | undefined> {
    return readTextLimited(this.body, limit, silenceMs);
  }
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/** A `ReadableStream` body as an `HttpBody`: one reader, taken on the first `next()`. */
class StreamBody implements HttpBody, AsyncIterator<Uint8Array> {
  private readonly stream: ReadableStream<Uint8Array>;
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private cancelled = false;
  /**
   * Kept so that the `Response` lives as long as its body is read: undici reaches the body of an aborted fetch
   * through a `WeakRef` to the `Response` (see `SseReadOptions.signal`).
   */
  readonly response: Response;

  constructor(stream: ReadableStream<Uint8Array>, response: Response) {
    this.stream = stream;
    this.response = response;
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return this;
  }

  async next(): Promise<IteratorResult<Uint8Array>> {
    if (this.cancelled) return DONE;
    this.reader ??= this.stream.getReader();
    const { value, done } = await this.reader.read();
    return done ? DONE : { value, done: false };
  }

  async return(): Promise<IteratorResult<Uint8Array>> {
    await this.cancel();
    return DONE;
  }

  async cancel(): Promise<void> {
    if (this.cancelled) return;
    this.cancelled = true;
    try {
      await (this.reader !== undefined ? this.reader.cancel() : this.stream.cancel());
    } catch {
      // Cancelling an already-closed or errored body rejects; there is nothing left to release.
    }
  }
}
