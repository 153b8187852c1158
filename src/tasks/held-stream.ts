/**
 * The client's response while its call is held (task-after.ts): what a plain call of the
 * 2026-07-28 era would have sent reaches the client as it comes, on the era's SSE answer
 * (`openStream`) opened at the first notification: the progress for the client's own
 * `progressToken`, frames of partial output for it, log messages at the client's `_meta` logLevel.
 * The answer (the result or error of a call that ended within `taskAfterMs`, or the
 * CreateTaskResult of one that became a task) is then the stream's last event. A call whose tool
 * sends nothing the client asked for is answered in one JSON body.
 *
 * The stream is the era's own connection: while the socket is full, progress coalesces to the
 * newest, while partial output and log messages queue and the tool waits for room (CaptureSink's
 * write says so), as a plain call's would; the endpoint's keepalive timer sends a comment when it
 * has been silent for `keepaliveMs`. A call kept plain after the store refused its task may run for
 * long: `keepAlive` opens the stream for that, so a proxy's idle timeout does not cut it.
 */
import type { OfferStream, TaskOffer } from '../core/era-2026/task-hook.js';
import type { Answer } from './answers.js';
import type { HeldRelay } from './capture-sink.js';

/** One stream relays one token's progress: one coalescing key is enough. */
const PROGRESS_KEY = 'held-progress';

export class HeldStream implements HeldRelay {
  readonly #o: TaskOffer;
  readonly token: unknown;
  #stream: OfferStream | undefined;
  #ended = false;

  /** `token`: the client's own progress token, if its call carried one. */
  constructor(o: TaskOffer, token: unknown) {
    this.#o = o;
    this.token = token;
  }

  /** Whether the SSE answer was opened. */
  get open(): boolean {
    return this.#stream !== undefined;
  }

  /** A progress notification's JSON text. */
  progress(json: string): void {
    this.#opened()?.notify(json, PROGRESS_KEY);
  }

  /** A notification that must arrive whole; the promise resolves once the tool may go on. */
  event(json: string): Promise<void> | undefined {
    return this.#opened()?.send(json);
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
