/**
 * The Base64 sentinel of `Mcp-Name` and `Mcp-Param-*` header values (MCP 2026-07-28
 * basic/transports/streamable-http §"Value Encoding"): a value that is not plain header-safe ASCII
 * travels as `=?base64?{Base64 of its UTF-8}?=`. Decoding is strict, because the decoded value is
 * compared with the body and a lenient decoder would let two different headers name one value:
 * canonical RFC 4648 §4 Base64 with padding and zero pad bits, and valid UTF-8. A value without
 * both markers is taken literally.
 */

const PREFIX = '=?base64?';
const SUFFIX = '?=';
const CANONICAL = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Visible ASCII, space and tab: what RFC 9110 §5.5 allows in a field value. */
const HEADER_SAFE = /^[\t\x20-\x7e]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export type Decoded = { ok: true; value: string } | { ok: false; reason: string };

/** Strips the optional whitespace around a field value (RFC 9110 §5.5 OWS). */
export function trimOws(v: string): string {
  return v.replace(/^[\t ]+|[\t ]+$/g, '');
}

/** Decodes one header value: a sentinel strictly, anything else literally (after OWS). */
export function decodeHeaderValue(raw: string): Decoded {
  const v = trimOws(raw);
  if (!HEADER_SAFE.test(v)) return { ok: false, reason: 'contains characters not allowed in a header value' };
  if (!(v.startsWith(PREFIX) && v.endsWith(SUFFIX) && v.length >= PREFIX.length + SUFFIX.length)) {
    return { ok: true, value: v };
  }
  const b64 = v.slice(PREFIX.length, v.length - SUFFIX.length);
  if (!CANONICAL.test(b64)) return { ok: false, reason: 'is not canonical padded Base64' };
  const bytes = Buffer.from(b64, 'base64');
  // Non-zero pad bits decode to the same bytes as the canonical spelling: refuse them.
  if (bytes.toString('base64') !== b64) return { ok: false, reason: 'is not canonical padded Base64' };
  try {
    return { ok: true, value: utf8.decode(bytes) };
  } catch {
    return { ok: false, reason: 'does not decode to UTF-8' };
  }
}

/** Whether a string can travel as a plain header value (no sentinel needed). */
export function isPlainHeaderValue(s: string): boolean {
  return (
    /^[\x20-\x7e]*$/.test(s) &&
    trimOws(s) === s &&
    !(s.startsWith(PREFIX) && s.endsWith(SUFFIX) && s.length >= PREFIX.length + SUFFIX.length)
  );
}

/** Encodes a value the way a client must (plain when safe, the sentinel otherwise). */
export function encodeHeaderValue(s: string): string {
  if (isPlainHeaderValue(s)) return s;
  return `${PREFIX}${Buffer.from(s, 'utf8').toString('base64')}${SUFFIX}`;
}
