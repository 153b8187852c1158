/**
 * The Node adapter: `node:http` / `node:https` with a keep-alive agent per transport. The default on Node
 * (loaded by `http-default.ts` only when running on Node, so no `node:*` import reaches a browser).
 *
 * Why: Node 20's global `fetch` (undici's WHATWG layer: Request/Response/Headers objects, web streams,
 * `makeTransferable`, AbortSignal plumbing) costs several hundred µs of CPU per call and most of the GC; this
 * path reads the response head from `rawHeaders` and the body as Buffers from 'data' events.
 *
 * It keeps the observable behaviour of `fetch` that the transport relies on: redirects are followed (at most
 * 20; 301/302 turn a POST into a GET, 303 turns anything but GET into a GET, 307/308 re-send as is; a
 * cross-origin hop drops `authorization`, `cookie` and `proxy-authorization`), `accept-encoding: gzip,
 * deflate` is sent unless set and gzip/deflate/br bodies are decoded, `user-agent: node` is sent unless set,
 * header lookups join repeated fields like `Headers.get`, 204/205/304 have a null body, and a body that ends
 * before it is complete is an error, not an EOF.
 */
import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, constants as zlib } from 'node:zlib';
import type { CancelSignal, HttpBody, HttpClient, HttpMethod, HttpResponse } from './http-client.js';

const MAX_REDIRECTS = 20;
/** Statuses whose response has no body (fetch's "null body status"; 101/103 never reach a request callback). */
const NULL_BODY = new Set([204, 205, 304]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);
/** Dropped on a cross-origin redirect (fetch "HTTP-redirect fetch", step 13, as undici implements it). */
const CROSS_ORIGIN_DROP = ['authorization', 'cookie', 'proxy-authorization'];
/** Dropped when a redirect turns the request into a bodyless GET ("request-body-header names"). */
const BODY_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
];
/**
 * Errors of a request written to a reused keep-alive socket, with no response byte back, that mean the server
 * had closed that connection: the request is sent again (at most {@link MAX_STALE_RETRIES} times).
 */
const STALE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
const MAX_STALE_RETRIES = 3;
/** Queued chunks above which the socket is paused until the reader catches up. */
const HIGH_WATER_CHUNKS = 16;
/**
 * Silence after which a request fails: no response head, or no byte of a body read by `text()`, for this long.
 * undici's `headersTimeout`/`bodyTimeout` default, which bounded the fetch path. SSE bodies are bounded by the
 * transport's own `idleTimeoutMs` (60 s) instead.
 */
const SILENCE_TIMEOUT_MS = 300_000;
/** How often requests are checked against {@link SILENCE_TIMEOUT_MS} (one unref'd timer per client, only while any is watched). */
const SWEEP_MS = 10_000;

/**
 * Keep-alive sockets idle for {@link IDLE_SOCKET_MS}, or for the server's `Keep-Alive: timeout=N` hint minus
 * one second when that is shorter, are closed (the agent applies the hint only when `timeout` is set). Like
 * undici's `keepAliveTimeout` (4 s by default, hint minus 1 s), so a request rarely meets a socket the server
 * is closing. The timeout only destroys *free* sockets; one serving an SSE stream is left alone.
 */
const IDLE_SOCKET_MS = 4_000;
const AGENT_OPTIONS = { keepAlive: true, timeout: IDLE_SOCKET_MS };

/** Where requests to one URL go; derived once per URL, not per request. */
interface Target {
  readonly href: string;
  readonly https: boolean;
  readonly hostname: string;
  readonly port: string;
  /** The `Host` header: host, and port unless it is the scheme's default (`URL.host`). */
  readonly host: string;
  readonly path: string;
  readonly origin: string;
}

/** A request (until its head) or a `text()` read (until its end) that {@link SILENCE_TIMEOUT_MS} applies to. */
interface Watched {
  /** Date.now() of the last sign of life. */
  at: number;
  expire(error: Error): void;
}

/** What `send` and `NodeResponse` share with their client. */
interface Context {
  target(url: URL): Target | undefined;
  agent(target: Target): HttpAgent;
  watch(w: Watched): void;
  unwatch(w: Watched): void;
}

/** One keep-alive HTTP client (its own agents, destroyed by `close()`). */
export function createNodeHttp(): HttpClient {
  let http: HttpAgent | undefined;
  let https: HttpsAgent | undefined;
  let closed = false;
  let last: Target | undefined;
  const watched = new Set<Watched>();
  let sweeper: ReturnType<typeof setInterval> | undefined;
  const sweep = (): void => {
    const now = Date.now();
    for (const w of watched) {
      if (now - w.at >= SILENCE_TIMEOUT_MS) {
        watched.delete(w);
        w.expire(new Error(`no data from the server for ${SILENCE_TIMEOUT_MS / 1000} s`));
      }
    }
    if (watched.size === 0 && sweeper !== undefined) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };
  const context: Context = {
    target(url) {
      const href = url.href;
      if (last !== undefined && last.href === href) return last;
      const isHttps = url.protocol === 'https:';
      if (!isHttps && url.protocol !== 'http:') return undefined;
      const hostname = url.hostname;
      last = {
        href,
        https: isHttps,
        // `URL.hostname` keeps the brackets of an IPv6 literal; the socket layer wants the bare address.
        hostname: hostname.charCodeAt(0) === 91 ? hostname.slice(1, -1) : hostname,
        port: url.port,
        host: url.host,
        path: url.pathname + url.search,
        origin: url.origin,
      };
      return last;
    },
    agent(target) {
      if (target.https) {
        https ??= new HttpsAgent(AGENT_OPTIONS);
        return https;
      }
      http ??= new HttpAgent(AGENT_OPTIONS);
      return http;
    },
    watch(w) {
      watched.add(w);
      if (sweeper === undefined) {
        sweeper = setInterval(sweep, SWEEP_MS);
        sweeper.unref();
      }
    },
    unwatch(w) {
      watched.delete(w);
    },
  };
  return {
    request(method, url, headers, body, signal) {
      if (closed) return Promise.reject(new Error('HTTP client closed'));
      if (headers['accept-encoding'] === undefined) headers['accept-encoding'] = 'gzip, deflate';
      if (headers['user-agent'] === undefined) headers['user-agent'] = 'node';
      return send(context, method, url, headers, body, signal, 0);
    },
    close() {
      closed = true;
      if (sweeper !== undefined) clearInterval(sweeper);
      sweeper = undefined;
      watched.clear();
      http?.destroy();
      https?.destroy();
    },
  };
}

function abortError(): Error {
  const error = new Error('This operation was aborted');
  error.name = 'AbortError';
  return error;
}

function send(
  context: Context,
  method: HttpMethod,
  url: URL,
  headers: Record<string, string>,
  body: string | undefined,
  signal: CancelSignal,
  redirects: number,
  resets = 0,
): Promise<HttpResponse> {
  return new Promise<HttpResponse>((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError());
      return;
    }
    const target = context.target(url);
    if (target === undefined) {
      reject(new TypeError(`unsupported URL scheme ${url.protocol}`));
      return;
    }
    // A flat [name, value, …] list goes straight to the header serializer (still validated), skipping one
    // setHeader() and its bookkeeping per field; `Host` is then ours to add.
    const outgoing: string[] = ['host', target.host];
    for (const name in headers) outgoing.push(name, headers[name] as string);
    if (body !== undefined) outgoing.push('content-length', String(Buffer.byteLength(body)));
    const options: RequestOptions & { servername?: string } = {
      method,
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      headers: outgoing as unknown as OutgoingHttpHeaders,
      agent: context.agent(target),
    };
    // Plain HTTP has no SNI; an empty servername spares the agent deriving one from the Host header.
    if (!target.https) options.servername = '';
    const req = (target.https ? httpsRequest : httpRequest)(options);
    let response: NodeResponse | undefined;
    const head: Watched = {
      at: Date.now(),
      expire: (error) => {
        if (response === undefined) req.destroy(error);
      },
    };
    context.watch(head);
    let listening = true;
    const detach = (): void => {
      if (!listening) return;
      listening = false;
      signal.offAbort(onAbort);
    };
    function onAbort(): void {
      const reason = abortError();
      detach();
      context.unwatch(head);
      if (response !== undefined) response.abort(reason);
      else req.destroy(reason);
      reject(reason);
    }
    signal.onAbort(onAbort);
    req.on('error', (error: NodeJS.ErrnoException) => {
      // After the response head, socket errors surface on the response (see NodeResponse); this rejection is
      // then a no-op.
      if (response !== undefined) return;
      detach();
      context.unwatch(head);
      if (
        req.reusedSocket &&
        resets < MAX_STALE_RETRIES &&
        !signal.aborted &&
        STALE_CODES.has(error.code ?? '')
      ) {
        // A pooled keep-alive socket the server had already closed (idle timeout, restart): the request never
        // reached the application. Sent again on another connection, as browsers do.
        resolve(send(context, method, url, headers, body, signal, redirects, resets + 1));
        return;
      }
      reject(error);
    });
    req.on('response', (res: IncomingMessage) => {
      context.unwatch(head);
      const status = res.statusCode ?? 0;
      if (REDIRECT.has(status)) {
        const location = rawHeader(res.rawHeaders, 'location');
        if (location !== null) {
          detach();
          res.resume();
          if (redirects >= MAX_REDIRECTS) {
            reject(new TypeError('redirect count exceeded'));
            return;
          }
          let next: URL;
          try {
            next = new URL(location, url);
          } catch (error) {
            reject(new TypeError(`invalid redirect location ${location}`, { cause: error }));
            return;
          }
          const h: Record<string, string> = { ...headers };
          let m = method;
          let b = body;
          if (
            ((status === 301 || status === 302) && method === 'POST') ||
            (status === 303 && method !== 'GET')
          ) {
            m = 'GET';
            b = undefined;
            for (const name of BODY_HEADERS) delete h[name];
          }
          if (next.origin !== target.origin) for (const name of CROSS_ORIGIN_DROP) delete h[name];
          resolve(send(context, m, next, h, b, signal, redirects + 1));
          return;
        }
      }
      response = new NodeResponse(res, status, detach, context);
      resolve(response);
    });
    if (body === undefined) req.end();
    else req.end(body);
  });
}

/** An `IncomingMessage` as an `HttpResponse`. @internal exported for the unit tests */
export function nodeResponse(res: IncomingMessage, release: () => void = () => {}): HttpResponse {
  return new NodeResponse(res, res.statusCode ?? 0, release, undefined);
}

/** `Headers.get()` over `rawHeaders` (Node builds `res.headers` lazily; this never builds it). */
function rawHeader(raw: readonly string[], name: string): string | null {
  let out: string | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i] as string;
    if (key.length === name.length && key.toLowerCase() === name) {
      const value = raw[i + 1] as string;
      out = out === null ? value : `${out}, ${value}`;
    }
  }
  return out;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

interface Waiter {
  resolve(result: IteratorResult<Uint8Array>): void;
  reject(error: unknown): void;
}

/**
 * A response and its body. The body is read from 'data' events, attached on the first `next()` or `text()`;
 * chunks are queued (the socket paused above {@link HIGH_WATER_CHUNKS}) until the reader asks for them.
 */
class NodeResponse implements HttpResponse, HttpBody, AsyncIterator<Uint8Array> {
  readonly status: number;
  readonly body: HttpBody | null;
  private readonly res: IncomingMessage;
  private readonly release: () => void;
  private source: Readable | undefined;
  private readonly queue: Buffer[] = [];
  private waiter: Waiter | undefined;
  private paused = false;
  /** 'end' seen, failed, or cancelled: nothing more will be queued. */
  private ended = false;
  private failure: unknown;
  /** How `res` ended before anyone listened to the body (an error, or a close before it was complete). */
  private early: unknown;
  private onChunk: ((chunk: Buffer) => void) | undefined;
  private onDone: ((error: unknown) => void) | undefined;

  /** For the silence timeout of `text()`; undefined in unit tests. */
  private readonly context: Context | undefined;

  constructor(res: IncomingMessage, status: number, release: () => void, context: Context | undefined) {
    this.context = context;
    this.res = res;
    this.status = status;
    this.release = release;
    // Always listened to, so that an abort or a reset before the body is read never throws an unhandled
    // 'error'. A socket closed mid-body destroys `res` with an 'aborted' error; a close that saw neither
    // 'end' nor 'error' is still a truncated body, never a clean EOF.
    res.on('error', (error) => this.fail(error));
    res.once('close', () => {
      if (!res.complete)
        this.fail(new Error('terminated: the connection closed before the body was complete'));
    });
    if (NULL_BODY.has(status)) {
      this.body = null;
      this.ended = true;
      res.once('end', release);
      res.once('close', release);
      res.resume();
    } else {
      this.body = this;
    }
  }

  header(name: string): string | null {
    return rawHeader(this.res.rawHeaders, name.toLowerCase());
  }

  private fail(error: unknown): void {
    if (this.onDone !== undefined) this.finish(error);
    else this.early ??= error;
  }

  /** Attaches the body listeners once; chunks go to `onChunk`, the end (error or not) to `onDone`. */
  private listen(onChunk: (chunk: Buffer) => void, onDone: (error: unknown) => void): void {
    this.onChunk = onChunk;
    this.onDone = onDone;
    const res = this.res;
    if (this.early !== undefined) {
      this.source = res;
      this.finish(this.early);
      return;
    }
    let source: Readable = res;
    const coding = rawHeader(res.rawHeaders, 'content-encoding');
    if (coding !== null) {
      const decoders = decodersFor(coding);
      if (decoders.length > 0) {
        source = pipeline([res, ...decoders], () => {
          // Errors are seen through the last decoder's 'error' event below.
        }) as Transform;
        source.on('error', (error) => this.finish(error));
      }
    }
    this.source = source;
    source.on('data', (chunk: Buffer) => this.onChunk?.(chunk));
    source.once('end', () => this.finish(undefined));
  }

  private finish(error: unknown): void {
    const done = this.onDone;
    if (done === undefined) return;
    this.onDone = undefined;
    this.onChunk = undefined;
    this.release();
    done(error);
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return this;
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.source === undefined && !this.ended) {
      this.listen(
        (chunk) => {
          const waiter = this.waiter;
          if (waiter !== undefined) {
            this.waiter = undefined;
            waiter.resolve({ value: chunk, done: false });
            return;
          }
          this.queue.push(chunk);
          if (this.queue.length >= HIGH_WATER_CHUNKS && !this.paused) {
            this.paused = true;
            this.source?.pause();
          }
        },
        (error) => {
          this.ended = true;
          if (error !== undefined) this.failure = error;
          const waiter = this.waiter;
          if (waiter === undefined) return;
          this.waiter = undefined;
          if (error !== undefined) waiter.reject(error);
          else waiter.resolve(DONE);
        },
      );
    }
    const chunk = this.queue.shift();
    if (chunk !== undefined) {
      if (this.paused && this.queue.length === 0) {
        this.paused = false;
        this.source?.resume();
      }
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  async return(): Promise<IteratorResult<Uint8Array>> {
    await this.cancel();
    return DONE;
  }

  /**
   * Ends the body: one that has fully arrived is drained, so its socket goes back to the pool; anything else
   * is destroyed (for an SSE stream that is the only way to stop it).
   */
  async cancel(): Promise<void> {
    this.queue.length = 0;
    this.failure = undefined;
    if (!this.ended) {
      this.ended = true;
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter?.resolve(DONE);
    }
    this.onChunk = undefined;
    const res = this.res;
    if (this.onDone !== undefined) {
      // Listening: the 'end' (or error) still comes, releases, and goes nowhere.
      this.onDone = () => {};
      if (res.complete && this.source === res) {
        res.resume();
        return;
      }
    } else if (this.source === undefined && res.complete && this.early === undefined) {
      this.source = res;
      res.once('end', this.release);
      res.resume();
      return;
    }
    if (!res.destroyed) res.destroy();
    this.release();
  }

  /** The request's signal was aborted after the head arrived. */
  abort(reason: unknown): void {
    if (!this.res.destroyed) this.res.destroy(reason instanceof Error ? reason : new Error(String(reason)));
  }

  text(limit: number): Promise<string | undefined> {
    if (this.body === null) return Promise.resolve('');
    if (this.source !== undefined || this.ended) return Promise.reject(new TypeError('body already read'));
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      // A body that has fully arrived (a small JSON answer, usually) cannot stall.
      const context = this.res.complete ? undefined : this.context;
      const watched: Watched = { at: 0, expire: (error) => this.abort(error) };
      if (context !== undefined) {
        watched.at = Date.now();
        context.watch(watched);
      }
      this.listen(
        (chunk) => {
          if (context !== undefined) watched.at = Date.now();
          size += chunk.length;
          if (size > limit) {
            context?.unwatch(watched);
            void this.cancel();
            resolve(undefined);
            return;
          }
          chunks.push(chunk);
        },
        (error) => {
          this.ended = true;
          context?.unwatch(watched);
          if (error !== undefined) {
            reject(error);
            return;
          }
          const only = chunks.length === 1 ? chunks[0] : undefined;
          const text = (only ?? Buffer.concat(chunks, size)).toString('utf8');
          resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
        },
      );
    });
  }
}

/** zlib decoders for a `Content-Encoding` value, applied in reverse order; none when a coding is unknown. */
function decodersFor(coding: string): Transform[] {
  const codings = coding.toLowerCase().split(',');
  const out: Transform[] = [];
  // Like undici: flush as data arrives (SSE must not wait for a full window), and tolerate a missing trailer.
  const flush = { flush: zlib.Z_SYNC_FLUSH, finishFlush: zlib.Z_SYNC_FLUSH };
  for (let i = codings.length - 1; i >= 0; i--) {
    const c = (codings[i] as string).trim();
    if (c === 'gzip' || c === 'x-gzip') out.push(createGunzip(flush));
    else if (c === 'deflate') out.push(createInflate(flush));
    else if (c === 'br')
      out.push(
        createBrotliDecompress({
          flush: zlib.BROTLI_OPERATION_FLUSH,
          finishFlush: zlib.BROTLI_OPERATION_FLUSH,
        }),
      );
    else if (c === 'identity' || c === '') continue;
    else return [];
  }
  return out;
}
