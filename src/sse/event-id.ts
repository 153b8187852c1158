/**
 * The one place that knows the SSE event-id format. An id names its session, its stream and its
 * position: `<tag>.<stream>.<seq>`, where `tag` is a random per-session token (so ids from one
 * session are useless in another and say so), and `stream` and `seq` are base-36 integers.
 * Spec 2025-11-25 basic/transports §"Resumability": ids MUST be unique across all streams of the
 * session and SHOULD identify the originating stream. The alphabet ([0-9a-zA-Z.]) cannot carry
 * CR/LF, so ids are safe in an SSE `id:` field and an HTTP header.
 */

export interface EventCursor {
  tag: string;
  stream: number;
  seq: number;
}

/** Length of the per-session tag (62^10 ≈ 8e17 values). */
export const TAG_LENGTH = 10;
const TAG = /^[0-9A-Za-z]{10}$/;
/** Canonical base 36: no leading zeros, at most 11 digits (stays below 2^53). */
const NUM = /^(0|[1-9a-z][0-9a-z]{0,10})$/;

export function encodeEventId(tag: string, stream: number, seq: number): string {
  return `${tag}.${stream.toString(36)}.${seq.toString(36)}`;
}

/**
 * The part of every id of one stream that does not change, for the per-event hot path:
 * `eventIdPrefix(tag, stream) + encodeSeq(seq) === encodeEventId(tag, stream, seq)`.
 */
export function eventIdPrefix(tag: string, stream: number): string {
  return `${tag}.${stream.toString(36)}.`;
}

export function encodeSeq(seq: number): string {
  return seq.toString(36);
}

/** Parses an id; undefined when it is not one of ours (malformed). */
export function parseEventId(id: string): EventCursor | undefined {
  if (id.length > 40) return undefined;
  const a = id.indexOf('.');
  const b = id.indexOf('.', a + 1);
  if (a < 0 || b < 0 || id.indexOf('.', b + 1) >= 0) return undefined;
  const tag = id.slice(0, a);
  const s = id.slice(a + 1, b);
  const q = id.slice(b + 1);
  if (!TAG.test(tag) || !NUM.test(s) || !NUM.test(q)) return undefined;
  const stream = Number.parseInt(s, 36);
  const seq = Number.parseInt(q, 36);
  if (!Number.isSafeInteger(stream) || !Number.isSafeInteger(seq)) return undefined;
  return { tag, stream, seq };
}
