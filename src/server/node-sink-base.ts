/**
 * What the node:http sink (NodeSink) and the node:http2 sink (H2Sink) share: the response they
 * wrap, the peer-close flag, the one-write complete response, and the drain/close hooks. Each
 * subclass keeps its own `closed`, `head`, `write`, `end` and `destroy`, so the per-write path reads
 * the subclass's own fields with no call through this class.
 */
import type { Headers, ResponseSink } from '../core/pipeline/sink.js';
import { wireChunk } from './wire-chunk.js';

/** The part of ServerResponse and Http2ServerResponse the shared methods use. */
interface NodeResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Headers): unknown;
  end(body: string | Buffer): unknown;
  on(event: 'drain' | 'close', listener: () => void): unknown;
}

/**
 * `headers` and the body's `content-length` (`length` bytes), in a new object filled key by key: on
 * Node 20's V8, `{ ...headers, 'content-length': n }` takes a slow path of 1-2 µs (a key added to a
 * spread copy), on every JSON answer (docs/benchmarks.md, section (a)). `__proto__` stays an own
 * key, as with the spread.
 */
function withLength(headers: Headers, length: number): Headers {
  const h: Headers = {};
  for (const k of Object.keys(headers)) {
    const v = headers[k] as string;
    if (k === '__proto__')
      Object.defineProperty(h, k, { value: v, enumerable: true, writable: true, configurable: true });
    else h[k] = v;
  }
  h['content-length'] = String(length);
  return h;
}

export abstract class NodeSinkBase<R extends NodeResponse> implements ResponseSink {
  protected readonly res: R;
  /** Set by the response's 'close' event (the exchange finished, was reset or destroyed). */
  protected peerClosed = false;
  /**
   * The owners' close listeners (a stream holds three or four: its connection, writer, stream and
   * guard), called in order from the one 'close' listener this sink puts on the response. Each
   * `once()` on the response itself would cost a wrapper object, a bound function and its argument
   * array, about 140 bytes per listener on every idle stream (docs/benchmarks.md, idle memory).
   */
  #closeListeners: (() => void) | readonly (() => void)[] | undefined;

  constructor(res: R) {
    this.res = res;
    // on(), not once(): 'close' comes once, and once() would add a wrapper, a bound function and
    // its arguments to every response. A repeated event finds no listeners left.
    res.on('close', () => {
      this.peerClosed = true;
      const l = this.#closeListeners;
      this.#closeListeners = undefined;
      if (typeof l === 'function') l();
      else if (l !== undefined) for (const f of l) f();
    });
  }

  abstract get closed(): boolean;
  abstract head(status: number, headers: Headers): void;
  abstract write(chunk: string): boolean;
  abstract end(last?: string): void;
  abstract destroy(): void;

  respond(status: number, headers: Headers, body: string): void {
    if (this.closed || this.res.headersSent) return;
    // An explicit length, 0 included: without it node:http's writeHead() commits to chunked encoding
    // even for an empty 202. 204 carries no body and no length (RFC 9110 §8.6).
    // A long body goes as its bytes (wire-chunk.ts), whose length is then known without a count.
    const chunk = wireChunk(body);
    const length = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    this.res.writeHead(status, status === 204 ? headers : withLength(headers, length));
    this.res.end(chunk);
  }

  onDrain(listener: () => void): void {
    this.res.on('drain', listener);
  }

  onClose(listener: () => void): void {
    if (this.closed) {
      queueMicrotask(listener);
      return;
    }
    const l = this.#closeListeners;
    if (l === undefined) this.#closeListeners = listener;
    // A new array each time, exactly as long as needed (push() would grow it to 17 slots).
    else this.#closeListeners = typeof l === 'function' ? [l, listener] : l.concat(listener);
  }
}
