/**
 * W3C Trace Context (`traceparent`, `tracestate`) and W3C Baggage, validated here rather than by a
 * propagator: MCP 2026-07-28 (SEP-414) reserves the unprefixed `_meta` keys `traceparent`,
 * `tracestate` and `baggage`, with values as the W3C specifications define them, and a value that
 * breaks them is ignored — never an error, never passed on as is. Pure: no `node:*`, no OpenTelemetry.
 */

/** A parsed `traceparent` (W3C Trace Context §3.2). */
export interface TraceParent {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
}

const HEX = /^[0-9a-f]+$/;
const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO_SPAN = '0000000000000000';

/**
 * §3.2.2: `version-traceid-parentid-flags`, lowercase hex; version `ff` is invalid; version 00 is
 * exactly 55 characters; a later version may append fields after a `-` (§3.2.4, "Versioning"), of
 * which only the first four are read. All-zero trace or parent ids are invalid.
 */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim();
  if (v.length < 55 || v.length > 512) return undefined;
  if (v[2] !== '-' || v[35] !== '-' || v[52] !== '-') return undefined;
  const version = v.slice(0, 2);
  if (!HEX.test(version) || version === 'ff') return undefined;
  if (version === '00' ? v.length !== 55 : v.length > 55 && v[55] !== '-') return undefined;
  const traceId = v.slice(3, 35);
  const spanId = v.slice(36, 52);
  const flags = v.slice(53, 55);
  if (!HEX.test(traceId) || !HEX.test(spanId) || !HEX.test(flags)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

/** The version-00 header for a span context (what Sluice sends, whatever version it received). */
export function formatTraceparent(p: TraceParent): string {
  return `00-${p.traceId}-${p.spanId}-${(p.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

// §3.3.1.3: simple-key, or tenant@system for multi-tenant keys.
const TS_KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
// §3.3.1.3.2: 0-255 printable ASCII except ',' and '=', not ending in a space.
const TS_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}$/;
const TS_MAX_MEMBERS = 32;

/**
 * §3.3: a list of at most 32 `key=value` members separated by commas (optional whitespace, empty
 * members allowed), keys unique. Returns the list re-joined without the empty members and the
 * surrounding whitespace, or undefined when any member breaks the grammar: a malformed tracestate
 * is discarded whole (§3.3.1.1 "...the vendor MUST discard the whole tracestate").
 */
export function parseTracestate(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 8192) return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of value.split(',')) {
    const m = raw.trim();
    if (m === '') continue;
    const eq = m.indexOf('=');
    if (eq <= 0) return undefined;
    const key = m.slice(0, eq);
    const val = m.slice(eq + 1);
    if (!TS_KEY.test(key) || !TS_VALUE.test(val) || val.endsWith(' ') || keys.has(key)) return undefined;
    keys.add(key);
    members.push(`${key}=${val}`);
    if (members.length > TS_MAX_MEMBERS) return undefined;
  }
  return members.length === 0 ? undefined : members.join(',');
}

// W3C Baggage §3.3.1: key = token (RFC 7230 tchar); value = baggage-octets, percent-encoding allowed.
const BAGGAGE_KEY = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAGGAGE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/;
const PROPERTY =
  /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:[ \t]*=[ \t]*[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*)?$/;
/** §3.3.2 "Limits": at most 64 list-members and 8192 bytes. */
const BAGGAGE_MAX_MEMBERS = 64;
const BAGGAGE_MAX_BYTES = 8192;

/**
 * A `baggage` value: members `key=value` (with `;property` parts) separated by commas, optional
 * whitespace around each part. Returns it normalized (whitespace removed) or undefined when any
 * member breaks the grammar, a percent escape is malformed, or a limit is exceeded.
 */
export function parseBaggage(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > BAGGAGE_MAX_BYTES) return undefined;
  const out: string[] = [];
  for (const raw of value.split(',')) {
    const parts = raw.split(';').map((p) => p.trim());
    const head = parts[0] ?? '';
    const eq = head.indexOf('=');
    if (eq <= 0) return undefined;
    const key = head.slice(0, eq).trim();
    const val = head.slice(eq + 1).trim();
    if (!BAGGAGE_KEY.test(key) || !BAGGAGE_VALUE.test(val) || !percentOk(val)) return undefined;
    const props = parts.slice(1);
    for (const p of props) if (!PROPERTY.test(p)) return undefined;
    out.push([`${key}=${val}`, ...props.map((p) => p.replace(/[ \t]*=[ \t]*/, '='))].join(';'));
    if (out.length > BAGGAGE_MAX_MEMBERS) return undefined;
  }
  return out.length === 0 ? undefined : out.join(',');
}

function percentOk(v: string): boolean {
  for (let i = v.indexOf('%'); i >= 0; i = v.indexOf('%', i + 1)) {
    if (!/^[0-9A-Fa-f]{2}$/.test(v.slice(i + 1, i + 3))) return false;
  }
  return true;
}

/** The trace context a message or a request carries, every part validated (absent when invalid). */
export interface CarriedContext {
  readonly parent: TraceParent | undefined;
  /** Only kept with a valid parent (§3.3: tracestate without traceparent means nothing). */
  readonly tracestate: string | undefined;
  readonly baggage: string | undefined;
}

/** Reads `traceparent`, `tracestate`, `baggage` from a `_meta` object (MCP 2026-07-28, SEP-414). */
export function carriedByMeta(meta: unknown): CarriedContext | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const m = meta as Record<string, unknown>;
  const tp = m['traceparent'];
  const bg = m['baggage'];
  if (tp === undefined && bg === undefined) return undefined;
  const parent = parseTraceparent(tp);
  const baggage = parseBaggage(bg);
  if (parent === undefined && baggage === undefined) return undefined;
  return { parent, tracestate: parent === undefined ? undefined : parseTracestate(m['tracestate']), baggage };
}

/** Reads the same from HTTP headers (one value each; a repeated traceparent header is invalid). */
export function carriedByHeaders(header: (name: string) => string | undefined): CarriedContext | undefined {
  const tp = header('traceparent');
  const bg = header('baggage');
  if (tp === undefined && bg === undefined) return undefined;
  const parent = parseTraceparent(tp);
  const baggage = parseBaggage(bg);
  if (parent === undefined && baggage === undefined) return undefined;
  return {
    parent,
    tracestate: parent === undefined ? undefined : parseTracestate(header('tracestate')),
    baggage,
  };
}
