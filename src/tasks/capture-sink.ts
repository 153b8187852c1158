/**
 * The response a task's tool answers into instead of a client's connection: a `ResponseSink` that
 * keeps the one JSON-RPC response (a JSON body, or the last event of an SSE answer), reports
 * progress notifications and frames of partial output as they pass, and bounds what it holds. Closing it (`abort`) is what a
 * client closing its response would be: the tool's AbortSignal fires (call.ts #onClose).
 * While a call is held (task-after.ts) its notifications also go to a `HeldRelay`, the client's
 * own response; while that one is full, `write` says so and the tool waits (backpressure).
 */
import type { Headers, ResponseSink } from '../core/pipeline/sink.js';
import { isPlainObject } from '../jsonrpc/message.js';
import { PARTIAL_META_KEY } from '../jsonrpc/meta-keys.js';
import { PARTIAL_RESULT_METHOD } from '../jsonrpc/partial.js';

/** What the tool's run produced: its response message, or why there is none. */
export type Captured =
  | { kind: 'response'; message: Record<string, unknown> }
  /**
   * A plain result's JSON text, cut from a JSON answer without parsing it (see `resultOf`): only
   * for a sink given the request's id, and never for an `input_required` result.
   */
  | { kind: 'result'; text: string }
  | { kind: 'aborted' }
  | { kind: 'too-large' }
  | { kind: 'malformed'; status: number };

/**
 * Where a held call's notifications go as well (held-stream.ts): what a plain call of the
 * 2026-07-28 era would have sent the client on its response. The era already dropped what the
 * client did not ask for (log messages below its `_meta` logLevel, call.ts).
 */
export interface HeldRelay {
  /** The client's own `progressToken`, if its call carried one; the run's progress may carry the task's. */
  readonly token: unknown;
  /** A progress notification for `token` (not partial output): only the newest need wait for room. */
  progress(json: string): void;
  /**
   * Any other notification: a frame of partial output for the client, a log message. Each must
   * arrive, so a full response slows the tool: the promise resolves once there is room.
   */
  event(json: string): Promise<void> | undefined;
}

export class CaptureSink implements ResponseSink {
  readonly #maxBytes: number;
  readonly #onProgress: (message: string) => void;
  readonly #onPartial: (delta: string) => void;
  readonly #closeListeners: (() => void)[] = [];
  /** `{"jsonrpc":"2.0","id":<id>,"result":` when the run's request id is known. */
  readonly #resultPrefix: string | undefined;
  #buffer = '';
  #status = 200;
  #closed = false;
  #outcome: Captured | undefined;
  #relay: HeldRelay | undefined;
  /** The relay's wait for room, while its response is full: `write` returns false meanwhile. */
  #room: Promise<void> | undefined;
  readonly #drainListeners: (() => void)[] = [];
  #resolve!: (c: Captured) => void;
  /** Settles once, when the run is over. */
  readonly done: Promise<Captured>;

  constructor(
    maxBytes: number,
    onProgress: (message: string) => void,
    onPartial: (delta: string) => void = () => undefined,
    requestId?: string,
  ) {
    this.#resultPrefix =
      requestId === undefined ? undefined : `{"jsonrpc":"2.0","id":${JSON.stringify(requestId)},"result":`;
    this.#maxBytes = maxBytes;
    this.#onProgress = onProgress;
    this.#onPartial = onPartial;
    this.done = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The HTTP status the answer was given (of its head, for an SSE answer). */
  get status(): number {
    return this.#status;
  }

  respond(status: number, _headers: Headers, body: string): void {
    if (this.#closed) return;
    this.#status = status;
    const text = this.#resultPrefix === undefined ? undefined : resultOf(body, this.#resultPrefix);
    if (text !== undefined) {
      this.#finish({ kind: 'result', text });
      return;
    }
    const m = parse(body);
    this.#finish(m === undefined ? { kind: 'malformed', status } : { kind: 'response', message: m });
  }

  head(status: number): void {
    if (!this.#closed) this.#status = status;
  }

  write(chunk: string): boolean {
    if (this.#closed) return true;
    this.#buffer += chunk;
    let cut = this.#buffer.indexOf('\n\n');
    while (cut >= 0 && !this.#closed) {
      this.#event(this.#buffer.slice(0, cut));
      this.#buffer = this.#buffer.slice(cut + 2);
      cut = this.#buffer.indexOf('\n\n');
    }
    // One event (the answer, or a notification) is bounded, not the run: a long task may report
    // progress for hours, and each event is read and let go as it completes.
    if (this.#buffer.length > this.#maxBytes) this.#finish({ kind: 'too-large' });
    return this.#closed || this.#room === undefined;
  }

  end(last?: string): void {
    if (last !== undefined) this.write(last.endsWith('\n\n') ? last : `${last}\n\n`);
    this.#finish({ kind: 'aborted' });
  }

  destroy(): void {
    this.#finish({ kind: 'aborted' });
  }

  /** Cancels the run: the handler's AbortSignal fires; nothing it sends afterwards is kept. */
  abort(): void {
    this.#finish({ kind: 'aborted' });
  }

  onDrain(listener: () => void): void {
    this.#drainListeners.push(listener);
  }

  /**
   * Passes the run's notifications to `r` as well, until called again with undefined: a held call's
   * client sees what a plain call's would (held-stream.ts). Progress and its frames of partial
   * output only for the client's own token: a call without one runs with the task's token, which
   * the client never sent. Turning it off lets a tool waiting for the relay's room go on.
   */
  relay(r: HeldRelay | undefined): void {
    this.#relay = r;
    if (r === undefined && this.#room !== undefined) {
      this.#room = undefined;
      // Not from inside the caller: the tool's writer flushes into this sink at the drain.
      queueMicrotask(() => this.#drained());
    }
  }

  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#closeListeners.push(listener);
  }

  #event(block: string): void {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '') return;
    const m = parse(data);
    if (m === undefined) return;
    if ('id' in m && ('result' in m || 'error' in m)) {
      this.#finish({ kind: 'response', message: m });
      return;
    }
    const params = m['params'];
    const method = m['method'];
    if (typeof method !== 'string') return;
    if (isPlainObject(params) && isPlainObject(params['_meta']) && PARTIAL_META_KEY in params['_meta']) {
      // A frame of partial output (jsonrpc/partial.ts): the delta in `message` (progress form) or
      // in the text blocks of `content` (the draft SEP's form, under the client's own
      // partialResultToken). Data, not status.
      if (method === PARTIAL_RESULT_METHOD || this.#own(params)) this.#relayEvent(data);
      const delta = partialText(params);
      if (delta !== '') this.#onPartial(delta);
      return;
    }
    if (method !== 'notifications/progress') {
      // A log message, or another notification related to the call: on a plain call's response too.
      this.#relayEvent(data);
      return;
    }
    if (!isPlainObject(params)) return;
    const p = params;
    if (this.#own(p)) this.#relay?.progress(data);
    const text =
      typeof p['message'] === 'string'
        ? p['message']
        : typeof p['progress'] === 'number'
          ? typeof p['total'] === 'number'
            ? `${p['progress']}/${p['total']}`
            : String(p['progress'])
          : undefined;
    if (text !== undefined) this.#onProgress(text.slice(0, 1024));
  }

  /** Whether `p` (a progress notification's params) carries the client's own token. */
  #own(p: Record<string, unknown>): boolean {
    return this.#relay?.token !== undefined && p['progressToken'] === this.#relay.token;
  }

  #relayEvent(json: string): void {
    const room = this.#relay?.event(json);
    if (room === undefined) return;
    this.#room = room;
    const drained = () => {
      // Only the newest wait: every wait of one response ends at the same drain.
      if (this.#room !== room) return;
      this.#room = undefined;
      this.#drained();
    };
    room.then(drained, drained);
  }

  #drained(): void {
    if (this.#closed) return;
    for (const l of this.#drainListeners) l();
  }

  #finish(c: Captured): void {
    if (this.#outcome !== undefined) return;
    this.#outcome = c;
    this.#closed = true;
    this.#buffer = '';
    this.#resolve(c);
    // As a socket's 'close' event, after the write that ended it returned: a response is then
    // already the call's answer, not a cancellation.
    const listeners = this.#closeListeners.splice(0);
    queueMicrotask(() => {
      for (const l of listeners) l();
    });
  }
}

function partialText(p: Record<string, unknown>): string {
  if (typeof p['message'] === 'string') return p['message'];
  if (!Array.isArray(p['content'])) return '';
  let out = '';
  for (const b of p['content']) if (isPlainObject(b) && typeof b['text'] === 'string') out += b['text'];
  return out;
}

/**
 * The result's text from a JSON answer of the 2026-07-28 era, as `stampResult` builds it (exactly
 * `jsonrpc`, `id`, `result`, in that order) and `JSON.stringify` writes it: what follows the prefix,
 * less the closing brace. A task's result is kept as JSON text; cutting it out saves parsing the
 * answer and serializing the result again. Anything else (an error, a 2025 answer with its keys in
 * another order, a result that may be `input_required`, which the settlement must read) is parsed.
 */
function resultOf(body: string, prefix: string): string | undefined {
  if (!body.startsWith(prefix) || body.charCodeAt(prefix.length) !== 0x7b /* { */) return undefined;
  if (!body.endsWith('}}') || body.includes('"resultType":"input_required"', prefix.length)) return undefined;
  return body.slice(prefix.length, -1);
}

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return isPlainObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
