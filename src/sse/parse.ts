/**
 * Server-Sent Events parser (WHATWG HTML §9.2.6 "Interpreting an event stream"), incremental: text is
 * fed in arbitrary pieces (a CRLF pair may be split across two), and callbacks fire as blocks complete.
 *
 * Sluice's own, instead of `eventsource-parser`: its v4 needs Node >= 22.12 (Sluice supports 20), and
 * its v3 mis-parses a CR that ends one piece when the next does not start with LF.
 *
 * - Lines end with CRLF, LF or CR. A line starting with `:` is a comment. `field: value` loses one
 *   space after the colon; a line without a colon is a field with an empty value.
 * - `data` lines are joined with LF; a blank line dispatches the block. A block without `data`
 *   dispatches no event (its `id`, if any, still counts).
 * - `id` containing NUL is ignored; `retry` counts only when it is ASCII digits; other fields are ignored.
 * - `maxBufferSize` bounds what is held between pieces (a partial line plus a pending block's data),
 *   in UTF-16 code units; beyond it, `onError` fires once and the parser ignores all further input.
 * - Linear in its input however it is cut: each character is searched and copied a bounded number
 *   of times.
 */

export interface SseMessage {
  data: string;
  /** The `event:` field, undefined when absent or empty. */
  event: string | undefined;
  /** The last event id in force when the block was dispatched (undefined if none was ever set). */
  id: string | undefined;
  /** The block's own `id:` field (undefined when it had none and inherited `id`). */
  ownId: string | undefined;
}

export interface SseParserConfig {
  onEvent?(message: SseMessage): void;
  /** A block carried an `id:` field (valid, no NUL): its value, `''` meaning "reset". Before its onEvent. */
  onId?(id: string): void;
  onRetry?(ms: number): void;
  onComment?(text: string): void;
  onError?(error: { type: 'max-buffer-size-exceeded'; message: string }): void;
  maxBufferSize?: number;
}

export interface SseParser {
  feed(text: string): void;
}

const LF = 10;
const CR = 13;

export function createSseParser(config: SseParserConfig): SseParser {
  const max = config.maxBufferSize ?? Number.POSITIVE_INFINITY;
  /**
   * The unfinished line, as the pieces it came in (none holds a CR or LF). Kept apart rather than
   * prepended to each new piece: a long line (a large result in one `data:` line) arriving in small
   * pieces would otherwise be copied and searched again from its start with every piece, O(n²):
   * 1.4 MB in 4 KB pieces took 0.78 s.
   */
  let held: string[] = [];
  let heldLength = 0;
  let skipLf = false;
  let first = true;
  let dead = false;
  let data = '';
  let hasData = false;
  let event: string | undefined;
  let lastId: string | undefined;
  let blockId: string | undefined;

  const dispatch = (): void => {
    const ownId = blockId;
    if (blockId !== undefined) {
      config.onId?.(blockId);
      blockId = undefined;
    }
    if (hasData) config.onEvent?.({ data, event, id: lastId, ownId });
    data = '';
    hasData = false;
    event = undefined;
  };

  const line = (text: string, start: number, end: number): void => {
    if (start === end) {
      dispatch();
      return;
    }
    const colon = text.indexOf(':', start);
    if (colon === start) {
      const from = text.charCodeAt(start + 1) === 32 ? start + 2 : start + 1;
      config.onComment?.(text.slice(Math.min(from, end), end));
      return;
    }
    let field: string;
    let value: string;
    if (colon === -1 || colon >= end) {
      field = text.slice(start, end);
      value = '';
    } else {
      field = text.slice(start, colon);
      const from = text.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1;
      value = text.slice(Math.min(from, end), end);
    }
    switch (field) {
      case 'data':
        data = hasData ? `${data}\n${value}` : value;
        hasData = true;
        break;
      case 'event':
        event = value === '' ? undefined : value;
        break;
      case 'id':
        if (!value.includes('\0')) {
          lastId = value;
          blockId = value;
        }
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) config.onRetry?.(Number.parseInt(value, 10));
        break;
      default:
        // Unknown fields are ignored (WHATWG).
        break;
    }
  };

  return {
    feed(piece: string): void {
      if (dead || piece.length === 0) return;
      let text = piece;
      if (first) {
        first = false;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      let i = 0;
      if (skipLf) {
        skipLf = false;
        if (text.charCodeAt(0) === LF) i = 1;
      }
      const n = text.length;
      let lf = text.indexOf('\n', i);
      let cr = text.indexOf('\r', i);
      while (i < n) {
        if (lf !== -1 && lf < i) lf = text.indexOf('\n', i);
        if (cr !== -1 && cr < i) cr = text.indexOf('\r', i);
        let end: number;
        if (lf === -1 && cr === -1) break;
        if (cr === -1 || (lf !== -1 && lf < cr)) end = lf;
        else end = cr;
        if (held.length > 0) {
          // The line began in earlier pieces: joined once, now that it is whole.
          held.push(text.slice(i, end));
          const whole = held.join('');
          held = [];
          heldLength = 0;
          line(whole, 0, whole.length);
        } else line(text, i, end);
        if (dead) return;
        if (text.charCodeAt(end) === CR) {
          if (end + 1 === n) {
            skipLf = true;
            i = n;
            break;
          }
          i = text.charCodeAt(end + 1) === LF ? end + 2 : end + 1;
        } else {
          i = end + 1;
        }
      }
      if (i < n) {
        const rest = i === 0 ? text : text.slice(i);
        held.push(rest);
        heldLength += rest.length;
      }
      if (heldLength + data.length > max) {
        dead = true;
        held = [];
        heldLength = 0;
        data = '';
        hasData = false;
        config.onError?.({
          type: 'max-buffer-size-exceeded',
          message: `buffered SSE data exceeded ${max} characters`,
        });
      }
    },
  };
}
