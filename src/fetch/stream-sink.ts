/**
 * ResponseSink over a web ReadableStream, for runtimes that answer with a fetch Response. The
 * stream is pull-driven: every write is encoded once to a Uint8Array and enqueued; when the queue
 * reaches `highWaterMark` bytes (desiredSize <= 0) write() returns false, so the SSE writer queues
 * and coalesces instead of enqueueing without bound, and `pull` — called by the runtime when its
 * consumer (socket, h2 stream, client) took bytes — is the 'drain'. The runtime's own backpressure
 * thus reaches the producer. A cancelled body or an aborted request is the connection closing.
 */
import type { Headers, ResponseSink } from '../core/pipeline/sink.js';

const encoder = new TextEncoder();

export class StreamSink implements ResponseSink {
  readonly #highWaterMark: number;
  readonly response: Promise<Response>;
  #resolve!: (r: Response) => void;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #started = false;
  #closed = false;
  #waitingDrain = false;
  #drain: (() => void)[] = [];
  #close: (() => void)[] = [];

  constructor(highWaterMark: number, signal?: AbortSignal) {
    this.#highWaterMark = highWaterMark;
    this.response = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    if (signal !== undefined) {
      if (signal.aborted) this.#gone();
      else signal.addEventListener('abort', () => this.#gone(), { once: true });
    }
  }

  /** Whether a status was committed (respond or head). */
  get started(): boolean {
    return this.#started;
  }

  get closed(): boolean {
    return this.#closed;
  }

  respond(status: number, headers: Headers, body: string): void {
    if (this.#closed || this.#started) return;
    this.#started = true;
    // 204 has no body (RFC 9110 §15.3.5) and Response refuses one; an empty 202 must not gain the
    // text/plain content type Response gives a string body.
    this.#resolve(new Response(status === 204 || body.length === 0 ? null : body, { status, headers }));
    this.#finish();
  }

  head(status: number, headers: Headers): void {
    if (this.#closed || this.#started) return;
    this.#started = true;
    const body = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          this.#controller = c;
        },
        pull: () => this.#onPull(),
        cancel: () => this.#gone(),
      },
      { highWaterMark: this.#highWaterMark, size: (chunk) => chunk.byteLength },
    );
    this.#resolve(new Response(body, { status, headers }));
  }

  write(chunk: string): boolean {
    const c = this.#controller;
    if (this.#closed || c === undefined) return true;
    c.enqueue(encoder.encode(chunk));
    if ((c.desiredSize ?? 0) > 0) return true;
    this.#waitingDrain = true;
    return false;
  }

  end(last?: string): void {
    if (this.#closed) return;
    const c = this.#controller;
    if (c !== undefined) {
      if (last !== undefined && last.length > 0) c.enqueue(encoder.encode(last));
      c.close();
    } else if (!this.#started) {
      this.respond(200, {}, last ?? '');
      return;
    }
    this.#finish();
  }

  /**
   * Stops the stream (the writer's overflow, a server-side close, an error after the head): nothing
   * more is enqueued, and the body is closed, not errored. The runtime then delivers what is queued
   * and ends the response, and the client resumes from the last id it got, as after any close by the
   * server (2025-11-25 basic/transports, "Resumability and Redelivery"). Erroring the body would
   * make the runtime abort the response and drop what it holds: the queue, which a burst fills
   * before the runtime's first read (a tool that sends many messages at once), and what an adapter
   * has read but not yet sent (a Node adapter's response buffer). Either can hold the stream's
   * first event, the priming event whose id a resume needs; without it the client cannot resume.
   * What stays queued is bounded by the high-water mark; a reader that never reads again keeps its
   * connection until it leaves or the runtime's idle timeout, as before the overflow.
   */
  destroy(): void {
    if (this.#closed) return;
    const c = this.#controller;
    if (c !== undefined) {
      try {
        c.close();
      } catch {
        // already closed, or cancelled by the runtime
      }
    } else if (!this.#started) {
      // Nothing was committed (the client went away mid-body): answer something the runtime can
      // discard; the connection is gone.
      this.#started = true;
      this.#resolve(new Response(null, { status: 503 }));
    }
    this.#finish();
  }

  onDrain(listener: () => void): void {
    this.#drain.push(listener);
  }

  onClose(listener: () => void): void {
    if (this.#closed) queueMicrotask(listener);
    else this.#close.push(listener);
  }

  #onPull(): void {
    if (!this.#waitingDrain || this.#closed) return;
    this.#waitingDrain = false;
    for (const l of this.#drain) l();
  }

  /** The consumer left: the body was cancelled or the request aborted. */
  #gone(): void {
    if (this.#closed) return;
    const c = this.#controller;
    if (c !== undefined) {
      try {
        c.error(new Error('sluice: request aborted'));
      } catch {
        // already closed or errored by the runtime's cancel
      }
    } else if (!this.#started) {
      this.#started = true;
      this.#resolve(new Response(null, { status: 503 }));
    }
    this.#finish();
  }

  #finish(): void {
    this.#closed = true;
    this.#drain = [];
    const listeners = this.#close;
    this.#close = [];
    // As on node:http, 'close' comes after the call that ended the response, never inside it.
    if (listeners.length === 0) return;
    queueMicrotask(() => {
      for (const l of listeners) l();
    });
  }
}
