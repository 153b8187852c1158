/**
 * The client's response while its call is held (task-after.ts): a call whose request carries a
 * `progressToken` gets the tool's progress as it comes, on an SSE response opened at the first
 * notification, as a plain call of the 2026-07-28 era would; the answer (the result or error of a
 * call that ended within `taskAfterMs`, or the CreateTaskResult of one that became a task) is then
 * the stream's last event. A call that reports no progress is answered in one JSON body, as before.
 *
 * Progress is coalesced under backpressure: while the socket is full only the newest notification
 * is kept (each carries the whole state, `progress` and `message`), written when it drains, so a
 * flooding tool cannot grow the response's buffer during the hold. Frames of partial output are
 * not sent here (dropping one would corrupt the text a client rebuilds); a task keeps them.
 *
 * A call kept plain after the store refused its task may run for long: `keepAlive` opens the stream
 * if need be and sends an SSE comment whenever it has been silent for the endpoint's `keepaliveMs`,
 * so a proxy's idle timeout does not cut it, as for the era's own streams.
 */
import type { TaskOffer } from '../core/era-2026/task-hook.js';
import { SSE_HEADERS } from '../core/stream/stream-context.js';
import { encodeEvent, KEEPALIVE_COMMENT } from '../sse/encode.js';
import type { Answer } from './answers.js';

export class HeldStream {
  readonly #o: TaskOffer;
  #open = false;
  #full = false;
  #pending: string | undefined;
  #ended = false;
  #lastWrite = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(o: TaskOffer) {
    this.#o = o;
  }

  /** Sends a comment whenever the answer has been silent for `o.keepaliveMs` (0: never), until it ends. */
  keepAlive(): void {
    const idleMs = this.#o.keepaliveMs;
    if (!(idleMs > 0) || this.#timer !== undefined || this.#ended) return;
    this.#lastWrite = Date.now();
    this.#timer = setInterval(
      () => {
        if (this.#ended || this.#o.sink.closed) return this.#stop();
        if (this.#full || Date.now() - this.#lastWrite < idleMs) return;
        this.#openStream();
        this.#send(KEEPALIVE_COMMENT);
      },
      Math.max(50, Math.floor(idleMs / 4)),
    );
    this.#timer.unref?.();
  }

  /** Whether the SSE response was opened (something was sent on it). */
  get open(): boolean {
    return this.#open;
  }

  /** A progress notification's JSON text, sent now or, the socket being full, kept as the newest. */
  progress(json: string): void {
    if (this.#ended || this.#o.sink.closed) return;
    this.#openStream();
    if (this.#full) this.#pending = json;
    else this.#send(encodeEvent({ data: json }));
  }

  /** Ends the opened stream with the newest pending progress, then `a` as its last event. */
  finish(a: Answer): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stop();
    if (this.#o.sink.closed) return;
    const body = typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
    const last = this.#pending === undefined ? '' : encodeEvent({ data: this.#pending });
    this.#pending = undefined;
    this.#o.sink.end(last + encodeEvent({ data: body }));
  }

  #openStream(): void {
    if (this.#open) return;
    this.#open = true;
    this.#o.sink.head(200, { ...this.#o.headers, ...SSE_HEADERS });
    this.#o.sink.onDrain(() => this.#drained());
  }

  #send(chunk: string): void {
    this.#lastWrite = Date.now();
    this.#full = !this.#o.sink.write(chunk);
  }

  #stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #drained(): void {
    this.#full = false;
    const json = this.#pending;
    this.#pending = undefined;
    if (json !== undefined && !this.#ended) this.progress(json);
  }
}
