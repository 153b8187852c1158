/**
 * The wire form of partial tool output (docs/partial-results.md). One place knows it: the server's
 * framer, the coalescing queue and the client's reader all use these names.
 *
 * Two forms, chosen per call:
 * - default: a `notifications/progress` on the request's progress token whose `message` is the delta
 *   text (MCP 2025-11-25 basic/utilities/progress), marked in `_meta` under {@link PARTIAL_META_KEY};
 *   a client that knows nothing of Sluice still sees ordinary progress with text in `message`;
 * - negotiated: `notifications/tools/partial_result` from the draft "Partial Tool Results" SEP, only
 *   when the client declared its `partialResults` capability and the call carries a
 *   `partialResultToken`.
 *
 * Both carry the same marker `{ seq, n }`: the frame holds deltas seq … seq+n-1 of its request
 * (zero-based). A frame that merges several queued deltas has n > 1, so a reader checks
 * `seq === expected` and advances by n: a gap or reordering is visible, merging is not.
 */
import { type JsonRpcMessage, progressTokenOf } from './message.js';

import { PARTIAL_META_KEY } from './meta-keys.js';

export { PARTIAL_META_KEY };

/**
 * The coalescing key of an outbound message: its progress token for ordinary progress (newest per
 * token wins on a blocked socket; 1 and "1" are different tokens), undefined for everything else —
 * including progress that carries partial output (marked with PARTIAL_META_KEY), which is data,
 * not status, and must never be replaced.
 */
export function coalesceKeyOf(m: JsonRpcMessage): string | undefined {
  const token = progressTokenOf(m);
  if (token === undefined) return undefined;
  const meta = 'params' in m ? (m.params?.['_meta'] as Record<string, unknown> | undefined) : undefined;
  if (meta?.[PARTIAL_META_KEY] !== undefined) return undefined;
  return tokenKey(token);
}

/** The coalescing key of a progress token: a number and its string never share one. */
export function tokenKey(token: string | number): string {
  return typeof token === 'number' ? `n${token}` : `s${token}`;
}
/** The draft SEP's notification method. */
export const PARTIAL_RESULT_METHOD = 'notifications/tools/partial_result';
/** The draft SEP's client capability (a bare `ClientCapabilities` field). */
export const PARTIAL_CAPABILITY = 'partialResults';
/** The draft SEP's per-call opt-in token, in the request's `_meta`. */
export const PARTIAL_TOKEN_META = 'partialResultToken';

/** The marker of one frame: deltas `seq` … `seq + n - 1`. */
export interface PartialMarker {
  seq: number;
  n: number;
  /** A non-text content block (progress form only; the SEP form has its own `content`). */
  content?: unknown[];
}

export type PartialForm = 'progress' | 'sep';

/**
 * The constant parts of one request's text frames, built once per request (the token is serialized
 * once), so a delta costs one string escape and one template, never a message object.
 */
export class PartialTemplate {
  readonly form: PartialForm;
  readonly #head: string;

  constructor(form: PartialForm, token: string | number) {
    this.form = form;
    const t = JSON.stringify(token);
    this.#head =
      form === 'progress'
        ? `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${t},"progress":`
        : `{"jsonrpc":"2.0","method":"${PARTIAL_RESULT_METHOD}","params":{"${PARTIAL_TOKEN_META}":${t},"seq":`;
  }

  /**
   * The JSON text of a frame holding deltas first … first+n-1 whose concatenated text, already
   * JSON-escaped (no quotes), is `escaped`. Progress is the count of deltas so far: it increases with
   * every notification, as 2025-11-25 basic/utilities/progress requires. The SEP's `seq` is the last
   * delta's index.
   */
  text(first: number, n: number, escaped: string): string {
    const marker = `"_meta":{"${PARTIAL_META_KEY}":{"seq":${first},"n":${n}}}}}`;
    return this.form === 'progress'
      ? `${this.#head}${first + n},"message":"${escaped}",${marker}`
      : `${this.#head}${first + n - 1},"content":[{"type":"text","text":"${escaped}"}],${marker}`;
  }

  /** A frame holding one non-text content block (slow path: built as an object). */
  block(seq: number, token: string | number, block: unknown): string {
    // Progress has no field for content: the block rides in the marker, which a plain client ignores.
    return JSON.stringify(
      this.form === 'progress'
        ? {
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: {
              progressToken: token,
              progress: seq + 1,
              _meta: { [PARTIAL_META_KEY]: { seq, n: 1, content: [block] } },
            },
          }
        : {
            jsonrpc: '2.0',
            method: PARTIAL_RESULT_METHOD,
            params: {
              [PARTIAL_TOKEN_META]: token,
              seq,
              content: [block],
              _meta: { [PARTIAL_META_KEY]: { seq, n: 1 } },
            },
          },
    );
  }
}

/** JSON-escapes a string without its quotes (JSON.stringify is the native escaper). */
export function escapeJsonText(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

/** The marker of a received message, if it is partial output. */
export function partialMarkerOf(params: unknown): PartialMarker | undefined {
  const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const m = meta?.[PARTIAL_META_KEY] as { seq?: unknown; n?: unknown } | undefined;
  if (m === undefined || m === null || typeof m !== 'object') return undefined;
  const { seq, n } = m;
  if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(n)) return undefined;
  if ((seq as number) < 0 || (n as number) < 1) return undefined;
  const content = (m as { content?: unknown }).content;
  return Array.isArray(content)
    ? { seq: seq as number, n: n as number, content }
    : { seq: seq as number, n: n as number };
}
