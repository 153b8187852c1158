/**
 * Partial tool output for SDK tool handlers (docs/partial-results.md):
 *
 *   const out = partialResults(extra);
 *   await out.text('delta');          // streamed as it is produced
 *   await out.content(imageBlock);    // a whole content block
 *   return { content: [{ type: 'text', text: fullText }] };   // the result stays authoritative
 *
 * Form per call (jsonrpc/partial.ts): the draft SEP's `notifications/tools/partial_result` when the
 * client declared `partialResults` (in initialize, or in the request's own capabilities `_meta`) and
 * the call carries a `partialResultToken`; otherwise `notifications/progress` on the call's progress
 * token, with the delta as `message`. A call with neither token gets no partial output at all:
 * progress notifications need a token (2025-11-25 basic/utilities/progress), so the deltas go
 * nowhere (`form === 'none'`, every send resolves at once) and the final result carries the text.
 *
 * Served by Sluice, each delta is escaped into a prepared frame and handed straight to the request's
 * stream (no message object, no SDK round trip); elsewhere it goes through `extra.sendNotification`
 * in the same wire form, so a handler runs unchanged on any transport. Awaiting each send is how a
 * handler follows the reader's pace: it resolves when the stream has room again.
 *
 * Once the call is cancelled (the SDK aborts `extra.signal`: a `notifications/cancelled`, a
 * 2026-07-28 client closing its response, `orphanTimeoutMs`, shutdown), every send, and a send still
 * waiting for room, rejects with PartialCancelledError, so a tool that only awaits its sends stops
 * instead of producing for nobody. The rejection is marked handled: a tool that does not await its
 * sends gets no unhandled rejection.
 */

import { requestHandleOf } from '../core/era-2025/request-handle.js';
import { PartialCancelledError } from '../errors.js';
import { PartialFrame } from '../flow/partial-frame.js';
import { META_CLIENT_CAPABILITIES } from '../jsonrpc/meta-keys.js';
import {
  escapeJsonText,
  PARTIAL_CAPABILITY,
  PARTIAL_META_KEY,
  PARTIAL_RESULT_METHOD,
  PARTIAL_TOKEN_META,
  type PartialForm,
  PartialTemplate,
} from '../jsonrpc/partial.js';

/** What partialResults() reads from an SDK handler's `extra` (v1 RequestHandlerExtra has all of it). */
export interface PartialResultsExtra {
  _meta?: Record<string, unknown> | undefined;
  /** Typed `never` so any SDK's narrower notification union fits; only well-formed messages are passed. */
  sendNotification?: ((notification: never) => Promise<void>) | undefined;
  closeSSEStream?: (() => void) | undefined;
  /** Aborted when the call is cancelled; sends reject from then on. */
  signal?: AbortSignal | undefined;
}

/** A content block as in CallToolResult.content. */
export interface PartialContentBlock {
  type: string;
  [k: string]: unknown;
}

export interface PartialResults {
  /** How deltas travel for this call; 'none' when the client gave no token to send them on. */
  readonly form: PartialForm | 'none';
  /** Deltas sent so far (text and blocks). */
  readonly sent: number;
  /**
   * Sends one delta of text (empty strings are skipped). Await it: it resolves when there is room,
   * and rejects with PartialCancelledError once the call is cancelled.
   */
  text(delta: string): Promise<void>;
  /** Sends one content block; a text block is the same as text(block.text). Rejects as text() does. */
  content(block: PartialContentBlock): Promise<void>;
}

const DONE: Promise<void> = Promise.resolve();
const ignore = (): void => {};

/** A rejected promise already marked handled: awaiting it throws, dropping it reports nothing. */
function rejected(signal: AbortSignal): Promise<void> {
  const p = Promise.reject(new PartialCancelledError({ cause: signal.reason }));
  p.catch(ignore);
  return p;
}

/** `wait`, or the cancellation if the signal aborts first (a wait for room may never end then). */
function untilAborted(wait: Promise<void>, signal: AbortSignal): Promise<void> {
  if (wait === DONE) return wait;
  const p = new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(new PartialCancelledError({ cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    wait.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
  p.catch(ignore);
  return p;
}

type Token = string | number;

function tokenOf(v: unknown): Token | undefined {
  return typeof v === 'string' || typeof v === 'number' ? v : undefined;
}

class Output implements PartialResults {
  readonly form: PartialForm | 'none';
  #sent = 0;
  get sent(): number {
    return this.#sent;
  }
  readonly #template: PartialTemplate | undefined;
  readonly #token: Token | undefined;
  readonly #extra: PartialResultsExtra;
  readonly #handle: ReturnType<typeof requestHandleOf>;

  constructor(extra: PartialResultsExtra) {
    this.#extra = extra;
    const handle = requestHandleOf(extra.closeSSEStream);
    this.#handle = handle;
    const meta = extra._meta;
    const sepToken = tokenOf(meta?.[PARTIAL_TOKEN_META]);
    const perRequestCaps = meta?.[META_CLIENT_CAPABILITIES] as Record<string, unknown> | undefined;
    const declared =
      handle?.session.partialResultsCapable === true ||
      (typeof perRequestCaps?.[PARTIAL_CAPABILITY] === 'object' &&
        perRequestCaps[PARTIAL_CAPABILITY] !== null);
    const progressToken = tokenOf(meta?.['progressToken']);
    if (sepToken !== undefined && declared) {
      this.form = 'sep';
      this.#token = sepToken;
    } else if (progressToken !== undefined) {
      this.form = 'progress';
      this.#token = progressToken;
    } else {
      this.form = 'none';
      this.#token = undefined;
    }
    this.#template =
      this.#token === undefined || this.form === 'none'
        ? undefined
        : new PartialTemplate(this.form, this.#token);
  }

  text(delta: string): Promise<void> {
    const signal = this.#extra.signal;
    if (signal === undefined) return this.#text(delta);
    if (signal.aborted) return rejected(signal);
    return untilAborted(this.#text(delta), signal);
  }

  #text(delta: string): Promise<void> {
    const t = this.#template;
    if (t === undefined || typeof delta !== 'string' || delta.length === 0) return DONE;
    const seq = this.#sent++;
    const h = this.#handle;
    if (h !== undefined) {
      return (
        h.session.routePartial(h.id, new PartialFrame(t, this, undefined, seq, 1, escapeJsonText(delta))) ??
        DONE
      );
    }
    return this.#notify(
      JSON.parse(t.text(seq, 1, escapeJsonText(delta))) as {
        method: string;
        params: Record<string, unknown>;
      },
    );
  }

  content(block: PartialContentBlock): Promise<void> {
    if (block.type === 'text' && typeof block['text'] === 'string') return this.text(block['text']);
    const signal = this.#extra.signal;
    if (signal === undefined) return this.#content(block);
    if (signal.aborted) return rejected(signal);
    return untilAborted(this.#content(block), signal);
  }

  #content(block: PartialContentBlock): Promise<void> {
    const t = this.#template;
    const token = this.#token;
    if (t === undefined || token === undefined) return DONE;
    const seq = this.#sent++;
    const json = t.block(seq, token, block);
    const h = this.#handle;
    if (h !== undefined) return h.session.routeRelatedJson(h.id, json) ?? DONE;
    return this.#notify(JSON.parse(json) as { method: string; params: Record<string, unknown> });
  }

  #notify(m: { method: string; params: Record<string, unknown> }): Promise<void> {
    const send = this.#extra.sendNotification;
    return send === undefined ? DONE : send(m as never);
  }
}

/** The partial-output channel of the tool call behind `extra` (see the module comment). */
export function partialResults(extra: PartialResultsExtra): PartialResults {
  return new Output(extra);
}

export { PARTIAL_CAPABILITY, PARTIAL_META_KEY, PARTIAL_RESULT_METHOD, PARTIAL_TOKEN_META };
