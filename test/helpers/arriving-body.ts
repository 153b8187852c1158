/**
 * A response body as it arrives, for the raw HTTP/1.1 (http.ts) and HTTP/2 (h2-client.ts) test
 * clients: the text so far, an incremental SSE view of text/event-stream bodies (parsed with
 * eventsource-parser, as clients do), and waits on either that are checked after every chunk and
 * at the end, each bounded with withDeadline.
 */
import type { Readable } from 'node:stream';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { withDeadline } from './deadline.js';

/** Parsed JSON as test assertions navigate it (`r.json().result.content[0].text`). */
// biome-ignore lint/suspicious/noExplicitAny: assertions walk parsed JSON of known shape; any keeps them readable.
export type Loose = any;

export class ArrivingBody {
  text = '';
  readonly events: EventSourceMessage[] = [];
  readonly comments: string[] = [];
  readonly retries: number[] = [];
  /** Arrival time (ms) of each SSE message with data. */
  readonly arrivals: number[] = [];
  ended = false;
  /** Resolves when the body ended or the stream closed. */
  readonly done: Promise<void>;
  readonly #listeners = new Set<() => void>();
  /** Messages parsed so far, from the events with data; each event's JSON is parsed once. */
  readonly #parsed: Loose[] = [];
  #eventsSeen = 0;

  /** `isSse` is asked at every chunk: the response head may land after construction (HTTP/2). */
  constructor(body: Readable, isSse: () => boolean) {
    const parser = createParser({
      onEvent: (e) => {
        this.events.push(e);
        if (e.data !== '') this.arrivals.push(Date.now());
      },
      onComment: (c) => this.comments.push(c),
      onRetry: (r) => this.retries.push(r),
    });
    body.setEncoding('utf8');
    body.on('data', (chunk: string) => {
      this.text += chunk;
      if (isSse()) parser.feed(chunk);
      this.#notify();
    });
    this.done = new Promise((resolve) => {
      const fin = (): void => {
        if (this.ended) return;
        this.ended = true;
        this.#notify();
        resolve();
      };
      body.on('end', fin);
      body.on('close', fin);
      body.on('error', fin);
    });
  }

  /** The body as JSON (throws when it is not). */
  json(): Loose {
    return JSON.parse(this.text);
  }

  /**
   * JSON-RPC messages carried by SSE events (events with empty data, e.g. priming, skipped). Parsed
   * on demand, each event once: waits call this after every chunk, and re-parsing the whole stream
   * each time made a 50,000-event stream quadratic. Not to be modified by the caller.
   */
  messages(): readonly Loose[] {
    for (; this.#eventsSeen < this.events.length; this.#eventsSeen++) {
      const data = this.events[this.#eventsSeen]?.data ?? '';
      if (data.length > 0) this.#parsed.push(JSON.parse(data));
    }
    return this.#parsed;
  }

  /** Waits until pred holds (checked after every chunk and at the end). */
  waitFor(pred: (r: this) => boolean, ms: number, label: string): Promise<void> {
    if (pred(this)) return Promise.resolve();
    let listener: (() => void) | undefined;
    const p = new Promise<void>((resolve, reject) => {
      listener = () => {
        if (pred(this)) resolve();
        else if (this.ended)
          reject(new Error(`${label}: the response ended first; body so far:\n${this.text.slice(-2000)}`));
      };
      this.#listeners.add(listener);
    });
    return withDeadline(p, ms, label).finally(() => {
      if (listener !== undefined) this.#listeners.delete(listener);
    });
  }

  /** Waits for an SSE message matching pred and returns it. */
  async waitMessage(pred: (m: Loose) => boolean, ms: number, label: string): Promise<Loose> {
    await this.waitFor((r) => r.messages().some(pred), ms, label);
    return this.messages().find(pred);
  }

  /** Waits for the body to end. */
  finished(ms: number, label: string): Promise<void> {
    return withDeadline(this.done, ms, label);
  }

  #notify(): void {
    for (const l of [...this.#listeners]) l();
  }
}
