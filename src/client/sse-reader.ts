import { createSseParser } from '../sse/parse.js';
import { BodySilenceError, type CancelSignal, type ClientClock, type HttpBody } from './http-client.js';

/** What one SSE connection delivers, in order. */
export interface SseSink {
  /**
   * An event with a non-empty `data` (`event` is the `event:` field, undefined when absent; `ownId` the
   * block's own `id:` field, undefined when it carried none).
   */
  onEvent(data: string, event: string | undefined, ownId: string | undefined): void;
  /** The `id:` of a completed event block, before its `onEvent`; `''` means "reset the last event id". */
  onId(id: string): void;
  /** A valid `retry:` field, in milliseconds. */
  onRetry(ms: number): void;
}

/** Why reading a connection stopped. */
export type SseEnd =
  | { readonly kind: 'eof' }
  | { readonly kind: 'idle' }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'error'; readonly error: unknown };

export interface SseReadOptions {
  readonly maxEventBytes: number;
  readonly idleTimeoutMs: number;
  readonly clock: ClientClock;
  /**
   * Aborting it ends the read (the body is cancelled). Needed on top of passing the signal to the request:
   * undici reaches the body of an aborted fetch through a `WeakRef` to the `Response`, so once the `Response`
   * object has been collected (only its body is still referenced) an abort tears the socket down but leaves
   * `read()` pending forever. (The fetch adapter also keeps the `Response` referenced from its body.)
   */
  readonly signal?: CancelSignal;
}

/**
 * Reads one `text/event-stream` body to its end, incrementally. The body is the adapter's chunk iterator
 * (`http-client.ts`): Buffers straight from the socket on the Node adapter, so no web stream is created there.
 *
 * - Bytes are decoded with one streaming `TextDecoder`, so a UTF-8 sequence split across chunks is
 *   reassembled; one leading BOM is stripped, by the parser (WHATWG SSE "decode").
 * - Lines are split by `createSseParser` (src/sse/parse.ts), which handles CR, LF and a CRLF pair split across chunks,
 *   multi-line `data`, comments (ignored here: they only count as liveness), `retry` and `id`.
 * - Liveness: any chunk, keep-alive comments included, postpones the idle deadline. The deadline is one
 *   timer re-armed lazily (it checks `lastByteAt` when it fires) instead of a clear+set per chunk.
 * - Size: the parser's buffer (a pending line plus a pending multi-line event) is capped at
 *   `maxEventBytes` characters; UTF-16 code units never outnumber UTF-8 bytes, so this bounds memory.
 *
 * Never throws: the end reason is returned.
 */
export async function readSse(body: HttpBody, sink: SseSink, options: SseReadOptions): Promise<SseEnd> {
  const { clock, idleTimeoutMs } = options;
  let stop: 'idle' | 'too-large' | 'aborted' | undefined;
  const stopWith = (reason: 'idle' | 'too-large' | 'aborted'): void => {
    stop ??= reason;
    // Ends a pending next() as done; cancel() never rejects.
    void body.cancel();
  };
  const onAbort = (): void => stopWith('aborted');
  const signal = options.signal;
  if (signal !== undefined) {
    if (signal.aborted) onAbort();
    else signal.onAbort(onAbort);
  }
  const parser = createSseParser({
    maxBufferSize: options.maxEventBytes,
    onId: (id) => sink.onId(id),
    onRetry: (ms) => sink.onRetry(ms),
    onEvent: (message) => {
      if (stop !== undefined) return;
      // maxBufferSize only bounds what the parser keeps *between* feed() calls; an event that arrives whole in
      // one chunk is checked here.
      if (message.data.length > options.maxEventBytes) {
        stopWith('too-large');
        return;
      }
      // An event block whose data is empty (the 2025-11-25 priming event) dispatches nothing (WHATWG).
      if (message.data.length > 0) sink.onEvent(message.data, message.event, message.ownId);
    },
    onError: () => stopWith('too-large'),
  });
  // The decoder keeps the BOM and the parser strips it: both stripping one ignored a second U+FEFF, which WHATWG
  // HTML §9.2.6 makes part of the first line's field name (only "one leading" BOM is ignored).
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let lastByteAt = clock.now();
  let timer: unknown;
  const armIdle = (ms: number): void => {
    timer = clock.setTimeout(() => {
      const idleFor = clock.now() - lastByteAt;
      if (idleFor >= idleTimeoutMs) {
        stopWith('idle');
      } else {
        armIdle(idleTimeoutMs - idleFor);
      }
    }, ms);
  };
  armIdle(idleTimeoutMs);
  try {
    if (stop === undefined) {
      for await (const value of body) {
        if (stop !== undefined) break;
        lastByteAt = clock.now();
        parser.feed(decoder.decode(value, STREAM));
        if (stop !== undefined) break;
      }
    }
    if (stop === undefined) {
      const tail = decoder.decode();
      if (tail.length > 0) parser.feed(tail);
    }
    return end(stop, undefined);
  } catch (error) {
    return end(stop, error);
  } finally {
    clock.clearTimeout(timer);
    signal?.offAbort(onAbort);
  }
}

const STREAM: TextDecodeOptions = { stream: true };

function end(stop: 'idle' | 'too-large' | 'aborted' | undefined, error: unknown): SseEnd {
  if (stop === 'aborted') return { kind: 'error', error: new Error('aborted') };
  if (stop !== undefined) return { kind: stop };
  return error === undefined ? { kind: 'eof' } : { kind: 'error', error };
}

/**
 * Reads a whole body as UTF-8 text, refusing more than `limit` bytes (returns undefined then, after
 * cancelling the body). The fetch adapter's `text(limit, silenceMs)`; a hostile server cannot make it
 * buffer gigabytes, nor hold the read open by sending nothing for `silenceMs` (the body is cancelled,
 * which ends the pending read as done, and the read rejects with `BodySilenceError`).
 */
export async function readTextLimited(
  body: HttpBody | null,
  limit: number,
  silenceMs: number,
): Promise<string | undefined> {
  if (body === null) return '';
  const decoder = new TextDecoder('utf-8');
  let size = 0;
  let text = '';
  let silent = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      silent = true;
      void body.cancel();
    }, silenceMs);
  };
  try {
    arm();
    for await (const value of body) {
      size += value.byteLength;
      if (size > limit) {
        await body.cancel();
        return undefined;
      }
      text += decoder.decode(value, STREAM);
      arm();
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
  if (silent) throw new BodySilenceError(silenceMs);
  return text + decoder.decode();
}
