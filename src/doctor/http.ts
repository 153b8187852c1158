/**
 * One HTTP exchange as the doctor sees it: node's fetch, with the time the head arrived, the time of
 * every body chunk, and — for text/event-stream — every SSE event and comment with its arrival time
 * (parsed with Sluice's WHATWG SSE parser, as clients do). Times are milliseconds since the request went out.
 * Nothing here knows MCP; session.ts builds the protocol on top.
 */

import { mediaType } from '../http/media-type.js';
import { createSseParser } from '../sse/parse.js';

export interface SseItem {
  /** ms since the request went out. */
  at: number;
  kind: 'event' | 'comment';
  id?: string | undefined;
  /** Event data, or the comment text. */
  data: string;
}

export interface ExchangeInit {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  /** Deadline for the response head, ms. @defaultValue 10000 */
  headTimeoutMs?: number;
}

/** A response being read. `done` settles when the body ended, failed, or was cancelled. */
export class Exchange {
  readonly status: number;
  readonly headers: Headers;
  /** ms from request to response head. */
  readonly headAt: number;
  #firstByteAt: number | undefined;
  #lastByteAt: number | undefined;
  #endAt: number | undefined;
  #error: string | undefined;
  /** Why the body ended early (network error, proxy cut), if it did. */
  get error(): string | undefined {
    return this.#error;
  }
  /** Arrival time and byte length of every chunk. */
  readonly chunks: { at: number; bytes: number }[] = [];
  readonly items: SseItem[] = [];
  #text = '';
  get text(): string {
    return this.#text;
  }
  readonly done: Promise<void>;
  readonly #t0: number;
  readonly #abort: AbortController;
  readonly #listeners = new Set<() => void>();
  #cancelled = false;

  /** When the request was sent, on `performance.now()`: every other time here counts from it. */
  get startedAt(): number {
    return this.#t0;
  }

  /** ms of the first body chunk, if any. */
  get firstByteAt(): number | undefined {
    return this.#firstByteAt;
  }

  /** ms of the last body chunk, if any. */
  get lastByteAt(): number | undefined {
    return this.#lastByteAt;
  }

  /** ms when the body ended (cleanly or not). */
  get endAt(): number | undefined {
    return this.#endAt;
  }

  constructor(res: Response, t0: number, abort: AbortController) {
    this.#t0 = t0;
    this.#abort = abort;
    this.status = res.status;
    this.headers = res.headers;
    this.headAt = performance.now() - t0;
    this.done = this.#read(res);
  }

  get contentType(): string {
    return mediaType(this.headers.get('content-type')) ?? '';
  }
  get isSse(): boolean {
    return this.contentType === 'text/event-stream';
  }
  get ended(): boolean {
    return this.#endAt !== undefined;
  }
  /** When each progress notification arrived (ms since the request). */
  progressTimes(): number[] {
    return this.messages()
      .filter((m) => m.message['method'] === 'notifications/progress')
      .map((m) => m.at);
  }
  /** SSE events carrying data, parsed as JSON (events that are not JSON are skipped). */
  messages(): { at: number; message: Record<string, unknown> }[] {
    const out: { at: number; message: Record<string, unknown> }[] = [];
    for (const i of this.items) {
      if (i.kind !== 'event' || i.data.length === 0) continue;
      try {
        out.push({ at: i.at, message: JSON.parse(i.data) as Record<string, unknown> });
      } catch {
        // Not JSON: not an MCP message; the doctor reports on messages only.
      }
    }
    return out;
  }
  /** The body as JSON, or undefined. */
  json(): unknown {
    try {
      return JSON.parse(this.#text) as unknown;
    } catch {
      return undefined;
    }
  }

  /** Resolves true once pred holds, false when the body ended first or ms passed. */
  waitFor(pred: () => boolean, ms: number): Promise<boolean> {
    if (pred()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const fin = (v: boolean): void => {
        clearTimeout(timer);
        this.#listeners.delete(check);
        resolve(v);
      };
      const check = (): void => {
        if (pred()) fin(true);
        else if (this.ended) fin(false);
      };
      const timer = setTimeout(() => fin(pred()), ms);
      this.#listeners.add(check);
    });
  }

  /** Stops reading and closes the connection. */
  cancel(): void {
    this.#cancelled = true;
    this.#abort.abort();
  }

  #now(): number {
    return performance.now() - this.#t0;
  }

  async #read(res: Response): Promise<void> {
    const sse = this.isSse;
    const parser = createSseParser({
      onEvent: (e) => this.items.push({ at: this.#now(), kind: 'event', id: e.id, data: e.data }),
      onComment: (c) => this.items.push({ at: this.#now(), kind: 'comment', data: c }),
    });
    const decoder = new TextDecoder();
    try {
      if (res.body === null) return;
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const at = this.#now();
        this.#firstByteAt ??= at;
        this.#lastByteAt = at;
        this.chunks.push({ at, bytes: value.byteLength });
        const s = decoder.decode(value, { stream: true });
        this.#text += s;
        if (sse) parser.feed(s);
        this.#notify();
      }
    } catch (e) {
      if (!this.#cancelled) this.#error = errorText(e);
    } finally {
      this.#endAt = this.#now();
      this.#notify();
    }
  }

  #notify(): void {
    for (const l of [...this.#listeners]) l();
  }
}

/** undici wraps the socket error in `cause`; that is the informative part. */
export function errorText(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as Error & { cause?: unknown }).cause;
  const c = cause instanceof Error ? `: ${(cause as Error & { code?: string }).code ?? cause.message}` : '';
  return `${e.message}${c}`;
}

/** Sends one request; resolves at the response head (the body keeps arriving into the Exchange). */
export async function exchange(url: string, init: ExchangeInit): Promise<Exchange> {
  const abort = new AbortController();
  const t0 = performance.now();
  const timer = setTimeout(() => abort.abort(), init.headTimeoutMs ?? 10_000);
  try {
    const res = await fetch(url, {
      method: init.method,
      headers: init.headers ?? {},
      ...(init.body === undefined ? {} : { body: init.body }),
      signal: abort.signal,
      redirect: 'manual',
    });
    clearTimeout(timer);
    return new Exchange(res, t0, abort);
  } catch (e) {
    clearTimeout(timer);
    if (abort.signal.aborted) {
      throw new Error(`${init.method} ${url}: no response head within ${init.headTimeoutMs ?? 10_000} ms`);
    }
    throw new Error(`${init.method} ${url}: ${errorText(e)}`);
  }
}
