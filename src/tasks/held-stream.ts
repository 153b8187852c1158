/**
 * The client's response while its call is held (task-after.ts): a call whose request carries a
 * `progressToken` gets the tool's progress as it comes, on the era's SSE answer (`openStream`)
 * opened at the first notification, as a plain call of the 2026-07-28 era would; the answer (the
 * result or error of a call that ended within `taskAfterMs`, or the CreateTaskResult of one that
 * became a task) is then the stream's last event. A call that reports no progress is answered in
 * one JSON body, as before. Frames of partial output are not sent here (dropping one would corrupt
 * the text a client rebuilds); a task keeps them.
 *
 * The stream is the era's own connection: while the socket is full, progress coalesces to the
 * newest, and the endpoint's keepalive timer sends a comment when it has been silent for
 * `keepaliveMs`. A call kept plain after the store refused its task may run for long: `keepAlive`
 * opens the stream for that, so a proxy's idle timeout does not cut it.
 */
import type { OfferStream, TaskOffer } from '../core/era-2026/task-hook.js';
import type { Answer } from './answers.js';

/** One stream relays one token's progress: one coalescing key is enough. */
const PROGRESS_KEY = 'held-progress';

export class HeldStream {
  readonly #o: TaskOffer;
  #stream: OfferStream | undefined;
  #ended = false;

  constructor(o: TaskOffer) {
    this.#o = o;
  }

  /** Whether the SSE answer was opened. */
  get open(): boolean {
    return this.#stream !== undefined;
  }

  /** A progress notification's JSON text. */
  progress(json: string): void {
    this.#opened()?.notify(json, PROGRESS_KEY);
  }

  /** Opens the stream now, so the endpoint's keepalive keeps a long answer alive (when it has one). */
  keepAlive(): void {
    if (this.#o.keepsAlive) this.#opened();
  }

  /** Ends the opened stream with `a` as its last event. */
  finish(a: Answer): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stream?.finish(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
  }

  #opened(): OfferStream | undefined {
    if (this.#ended || this.#o.sink.closed) return undefined;
    this.#stream ??= this.#o.openStream();
    return this.#stream;
  }
}
