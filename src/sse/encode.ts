/**
 * Server-Sent Events encoder (WHATWG HTML §9.2 "Server-sent events", event stream format).
 *
 * Pure functions from values to the exact text of one frame. The fast path is JSON-RPC data, which
 * `JSON.stringify` never spreads over lines; arbitrary data is split on every line terminator
 * (CRLF, LF or CR) into one `data:` field per line, which a conforming parser joins back with LF.
 * `id` and `event` must not contain CR, LF or NUL: a newline there would let the value inject new
 * fields or frames, and the parser ignores ids containing NUL.
 */
import { SluiceError } from '../errors.js';

export interface SseEvent {
  id?: string | undefined;
  event?: string | undefined;
  data: string;
  retry?: number | undefined;
}

const UNSAFE_FIELD = /[\r\n\0]/;
const LINE_BREAK = /\r\n|\r|\n/;

function checkField(name: 'id' | 'event', value: string): void {
  if (UNSAFE_FIELD.test(value)) {
    throw new SluiceError('SLUICE_SSE_INVALID_FIELD', `SSE ${name} must not contain CR, LF or NUL`);
  }
}

/** Encodes one event; the trailing blank line dispatches it. */
export function encodeEvent(ev: SseEvent): string {
  let out = '';
  if (ev.id !== undefined) {
    checkField('id', ev.id);
    out += `id: ${ev.id}\n`;
  }
  if (ev.event !== undefined) {
    checkField('event', ev.event);
    out += `event: ${ev.event}\n`;
  }
  if (ev.retry !== undefined) {
    if (!Number.isSafeInteger(ev.retry) || ev.retry < 0) {
      throw new SluiceError('SLUICE_SSE_INVALID_FIELD', 'SSE retry must be a non-negative integer');
    }
    out += `retry: ${ev.retry}\n`;
  }
  const data = ev.data;
  if (data.indexOf('\n') < 0 && data.indexOf('\r') < 0) return `${out}data: ${data}\n\n`;
  for (const line of data.split(LINE_BREAK)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/**
 * The hot-path frame for a JSON-RPC message that is already serialized: JSON text holds no raw
 * line breaks (RFC 8259 §7 requires them escaped), so no splitting is needed. `id` comes from the
 * event-id codec, whose alphabet cannot contain line breaks.
 */
export function encodeJsonFrame(id: string | undefined, json: string, retry?: number): string {
  if (id === undefined) return `data: ${json}\n\n`;
  return retry === undefined
    ? `id: ${id}\ndata: ${json}\n\n`
    : `id: ${id}\nretry: ${retry}\ndata: ${json}\n\n`;
}

/**
 * The first frame of a resumed connection: the cursor's own id with empty data (no message, so
 * nothing is repeated), so the client holds an id on this connection at once. The official SDK 1.x
 * client gives a POST stream up when its resumed connection dies before an event, and a replay
 * may open with a long frame (a result, merged partial output). Sent to 2025-11-25+ sessions only,
 * as priming events are (older clients choke on empty data).
 */
export function encodeResumePrimer(cursorId: string): string {
  return `id: ${cursorId}\ndata: \n\n`;
}

/** A frame holding only a reconnection delay: parsers apply it and dispatch nothing. */
export function encodeRetry(ms: number): string {
  return `retry: ${ms}\n\n`;
}

/** A comment line; parsers discard it. Used for keepalive and to flush headers through proxies. */
export function encodeComment(text: string): string {
  if (UNSAFE_FIELD.test(text))
    throw new SluiceError('SLUICE_SSE_INVALID_FIELD', 'SSE comment must be one line');
  return `: ${text}\n\n`;
}

/** The comments Sluice sends: liveness on a quiet stream, and first bytes that carry no event. */
export const KEEPALIVE_COMMENT = encodeComment('keepalive');
export const OPEN_COMMENT = encodeComment('stream');
export const RESUMED_COMMENT = encodeComment('resumed');
