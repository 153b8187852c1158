/**
 * What the node:http sink (NodeSink) and the node:http2 sink (H2Sink) share: the response they
 * wrap, the peer-close flag, the one-write complete response, and the drain/close hooks. Each
 * subclass keeps its own `closed`, `head`, `write`, `end` and `destroy`, so the per-write path reads
 * the subclass's own fields with no call through this class.
 */
import type { Headers, ResponseSink } from '../core/pipeline/sink.js';

/** The part of ServerResponse and Http2ServerResponse the shared methods use. */
interface NodeResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Headers): unknown;
  end(body: string): unknown;
  on(event: 'drain', listener: () => void): unknown;
  once(event: 'close', listener: () => void): unknown;
}

export abstract class NodeSinkBase<R extends NodeResponse> implements ResponseSink {
  protected readonly res: R;
  /** Set by the response's 'close' event (the exchange finished, was reset or destroyed). */
  protected peerClosed = false;

  constructor(res: R) {
    this.res = res;
    res.once('close', () => {
      this.peerClosed = true;
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
    const h = status === 204 ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    this.res.writeHead(status, h);
    this.res.end(body);
  }

  onDrain(listener: () => void): void {
    this.res.on('drain', listener);
  }

  onClose(listener: () => void): void {
    if (this.closed) queueMicrotask(listener);
    else this.res.once('close', listener);
  }
}
