/**
 * A Node adapter response: the head read from `rawHeaders` (never building `res.headers`), and the body as an
 * async iterator of Buffers from 'data' events, or as text through `text(limit)`. 204/205/304 have a null body,
 * and a body that ends before it is complete is an error, not an EOF.
 */
import type { IncomingMessage } from 'node:http';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { BodySilenceError, type HttpBody, type HttpResponse } from './http-client.js';
import { decodersFor } from './http-node-decoders.js';

/** One shared no-op, not a function literal per response assigned to a property (request-objects-gc.test.ts). */
const NOTHING = (): void => {};

/** Statuses whose response has no body (fetch's "null body status"; 101/103 never reach a request callback). */
const NULL_BODY = new Set([204, 205, 304]);
/** Queued chunks above which the socket is paused until the reader catches up. */
const HIGH_WATER_CHUNKS = 16;

/** An `IncomingMessage` as an `HttpResponse`. @internal exported for the unit tests */
export function nodeResponse(res: IncomingMessage, release: () => void = () => {}): HttpResponse {
  return new NodeResponse(res, res.statusCode ?? 0, release);
}

/** `Headers.get()` over `rawHeaders` (Node builds `res.headers` lazily; this never builds it). */
export function rawHeader(raw: readonly string[], name: string): string | null {
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
export class NodeResponse implements HttpResponse, HttpBody, AsyncIterator<Uint8Array> {
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

  constructor(res: IncomingMessage, status: number, release: () => void) {
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
      this.onDone = NOTHING;
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

  text(limit: number, silenceMs: number): Promise<string | undefined> {
    if (this.body === null) return Promise.resolve('');
    if (this.source !== undefined || this.ended) return Promise.reject(new TypeError('body already read'));
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      // A body that has fully arrived (a small JSON answer, usually) cannot stall; otherwise a timer of
      // this read's own, reset by every chunk, bounds the silence.
      const silence = this.res.complete
        ? undefined
        : setTimeout(() => this.abort(new BodySilenceError(silenceMs)), silenceMs);
      this.listen(
        (chunk) => {
          silence?.refresh();
          size += chunk.length;
          if (size > limit) {
            if (silence !== undefined) clearTimeout(silence);
            void this.cancel();
            resolve(undefined);
            return;
          }
          chunks.push(chunk);
        },
        (error) => {
          this.ended = true;
          if (silence !== undefined) clearTimeout(silence);
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
