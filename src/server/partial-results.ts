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
 */

import { requestHandleOf } from '../core/era-2025/request-handle.js';
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
  /** Sends one delta of text (empty strings are skipped). Await it: it resolves when there is room. */
  text(delta: string): Promise<void>;
  /** Sends one content block; a text block is the same as text(block.text). */
  content(block: PartialContentBlock): Promise<void>;
}

const DONE: Promise<void> = Promise.resolve();

type Token = string | number;

function tokenOf(v: unknown): Token | undefined {
  return typeof v === 'string' || typeof v === 'number' ? v : undefined;
}

class Output implements PartialResults {
  readonly form: PartialForm | 'none';
  sent = 0;
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
    const t = this.#template;
    if (t === undefined || typeof delta !== 'string' || delta.length === 0) return DONE;
    const seq = this.sent++;
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
    const t = this.#template;
    const token = this.#token;
    if (t === undefined || token === undefined) return DONE;
    const seq = this.sent++;
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
