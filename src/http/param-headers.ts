/**
 * `Mcp-Param-{Name}` headers, one owner for both sides (MCP 2026-07-28 basic/transports/streamable-http
 * §"Custom Headers from Tool Parameters", SEP-2243): which `x-mcp-header` declarations of a tool's
 * `inputSchema` are in force, how an argument becomes a header value (§"Value Encoding", the Base64 sentinel
 * `=?base64?…?=`), and how a server checks a header against the body (§"Server Validation"). The client
 * mirrors with these rules and the server checks with the same ones, so a tool either has its headers sent and
 * checked, or (its declarations being invalid) neither.
 *
 * Browser-safe: no `node:*`, no `Buffer` (`btoa`/`atob`, `TextEncoder`/`TextDecoder` exist in Node and browsers).
 */

/** One `x-mcp-header` declaration in force: the header's `{Name}` and the `properties` path of its argument. */
export interface ParamHeaderDecl {
  readonly name: string;
  readonly path: readonly string[];
}

/** A tool's declarations: in force, or the whole tool definition invalid (and why). */
export type ParamHeaderDecls =
  | { readonly ok: true; readonly decls: readonly ParamHeaderDecl[] }
  | { readonly ok: false; readonly reason: string };

/** RFC 9110 §5.6.2 `token` (1*tchar): what a header name may be made of. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** The primitive types an annotated property may have (`number` is excluded by the spec). */
const PRIMITIVE = new Set(['string', 'integer', 'boolean']);
/** Keywords whose values are instance data, not subschemas: an `x-mcp-header` key inside them is no annotation. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);
/** Schemas nested deeper than this make the definition invalid (bounds the walk on untrusted input). */
const MAX_DEPTH = 32;

/**
 * The declarations of one tool's `inputSchema`. A declaration counts only on a property reached from the root
 * through a chain of `properties` keys, typed `string`, `integer` or `boolean` (a `type` array may add
 * `"null"`), named by a non-empty RFC 9110 token unique regardless of case. One annotation that breaks a rule
 * anywhere (under `items`, a composition or conditional keyword, `$ref`'s neighbours, `$defs`) makes the whole
 * tool definition invalid: clients exclude such a tool, so its declarations are in force nowhere.
 */
export function paramHeaderDecls(inputSchema: unknown): ParamHeaderDecls {
  const decls: ParamHeaderDecl[] = [];
  const seen = new Set<string>();
  let reason: string | undefined;
  /** `path` is the `properties` chain to `node`, or undefined once the chain passed through anything else. */
  const walk = (node: unknown, path: string[] | undefined, depth: number): void => {
    if (reason !== undefined) return;
    if (depth > MAX_DEPTH) {
      reason = `the input schema nests deeper than ${MAX_DEPTH}`;
      return;
    }
    if (Array.isArray(node)) {
      for (const item of node) walk(item, undefined, depth + 1);
      return;
    }
    if (!isObject(node)) return;
    if (Object.hasOwn(node, 'x-mcp-header')) {
      reason = annotationProblem(node, path, seen);
      if (reason !== undefined) return;
      decls.push({ name: node['x-mcp-header'] as string, path: path as string[] });
    }
    for (const [keyword, value] of Object.entries(node)) {
      if (keyword === 'x-mcp-header' || DATA_KEYWORDS.has(keyword)) continue;
      if (keyword === 'properties' && isObject(value)) {
        for (const [prop, sub] of Object.entries(value)) {
          walk(sub, path === undefined ? undefined : [...path, prop], depth + 1);
        }
      } else {
        walk(value, undefined, depth + 1);
      }
    }
  };
  walk(inputSchema, [], 0);
  return reason === undefined ? { ok: true, decls } : { ok: false, reason };
}

/** What is wrong with the `x-mcp-header` annotation on `node` (reached by `path`), or undefined; records its name. */
function annotationProblem(
  node: Record<string, unknown>,
  path: readonly string[] | undefined,
  seen: Set<string>,
): string | undefined {
  const name = node['x-mcp-header'];
  if (path === undefined || path.length === 0) {
    return 'an x-mcp-header annotation is not on a property reached through properties keys only';
  }
  const where = path.join('.');
  if (typeof name !== 'string' || !TOKEN.test(name)) {
    return `x-mcp-header of ${where} is not a non-empty RFC 9110 token`;
  }
  if (!isPrimitiveType(node['type'])) {
    return `x-mcp-header ${name} is on ${where}, which is not typed string, integer or boolean`;
  }
  const key = name.toLowerCase();
  if (seen.has(key)) return `x-mcp-header ${name} is declared twice (names are case-insensitive)`;
  seen.add(key);
  return undefined;
}

function isPrimitiveType(type: unknown): boolean {
  if (typeof type === 'string') return PRIMITIVE.has(type);
  if (!Array.isArray(type)) return false;
  const kinds = type.filter((t) => t !== 'null');
  return kinds.length === 1 && typeof kinds[0] === 'string' && PRIMITIVE.has(kinds[0]);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The argument at a declaration's path, or undefined when absent. */
export function argumentAt(args: unknown, path: readonly string[]): unknown {
  let node: unknown = args;
  for (const key of path) {
    if (!isObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/**
 * The header text of an argument (§"Value Encoding", "Type conversion"): a string as it is, a boolean as
 * `true`/`false`, a number in decimal (an integer exactly, digit for digit, even beyond the safe range, so
 * that the server's numeric comparison finds the same value). Undefined when no header is sent: `null`, absent,
 * or not a primitive (the schema check refuses such arguments anyway).
 */
export function paramHeaderText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) {
    return Number.isInteger(value) ? BigInt(value).toString() : String(value);
  }
  return undefined;
}

const PREFIX = '=?base64?';
const SUFFIX = '?=';
/** Canonical RFC 4648 §4 Base64 with padding. */
const CANONICAL = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** What RFC 9110 §5.5 allows in a received field value: visible ASCII, space and tab. */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;
/** An integer as `paramHeaderText` writes it, or as `42.0`, which the spec says equals 42. */
const INTEGER = /^-?\d+(?:\.0+)?$/;
/** A non-integer as `String(number)` writes it (an integer-typed argument that is not one; schema checks refuse it). */
const DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:e[+-]\d+)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function isSentinelShaped(v: string): boolean {
  return v.startsWith(PREFIX) && v.endsWith(SUFFIX) && v.length >= PREFIX.length + SUFFIX.length;
}

/**
 * Whether `value` travels as it is: non-empty, visible ASCII and interior spaces only. Anything else — empty
 * (some HTTP stacks drop an empty field), a control character (tab included), non-ASCII, leading or trailing
 * whitespace (field parsing strips it), or the sentinel's own shape — goes as the sentinel.
 */
export function isPlainHeaderValue(value: string): boolean {
  return (
    value.length > 0 &&
    /^[\x20-\x7e]*$/.test(value) &&
    value.charCodeAt(0) !== 0x20 &&
    value.charCodeAt(value.length - 1) !== 0x20 &&
    !isSentinelShaped(value)
  );
}

/** A header value for `value`: itself when plain, else `=?base64?{Base64 of its UTF-8}?=`. Also for `Mcp-Name`. */
export function encodeHeaderValue(value: string): string {
  if (isPlainHeaderValue(value)) return value;
  let binary = '';
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `${PREFIX}${btoa(binary)}${SUFFIX}`;
}

export type Decoded =
  | { readonly ok: true; readonly value: string }
  | { readonly ok: false; readonly reason: string };

/** Strips the optional whitespace around a field value (RFC 9110 §5.5 OWS). */
export function trimOws(v: string): string {
  return v.replace(/^[\t ]+|[\t ]+$/g, '');
}

/**
 * Decodes one received header value: the sentinel strictly (canonical padded Base64 with zero pad bits, valid
 * UTF-8, so two different headers never name one value), anything else literally after OWS.
 */
export function decodeHeaderValue(raw: string): Decoded {
  const v = trimOws(raw);
  if (!FIELD_VALUE.test(v)) return { ok: false, reason: 'contains characters not allowed in a header value' };
  if (!isSentinelShaped(v)) return { ok: true, value: v };
  const b64 = v.slice(PREFIX.length, v.length - SUFFIX.length);
  if (!CANONICAL.test(b64)) return { ok: false, reason: 'is not canonical padded Base64' };
  const binary = atob(b64);
  // Non-zero pad bits decode to the same bytes as the canonical spelling: refuse them.
  if (btoa(binary) !== b64) return { ok: false, reason: 'is not canonical padded Base64' };
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  try {
    return { ok: true, value: utf8.decode(bytes) };
  } catch {
    return { ok: false, reason: 'does not decode to UTF-8' };
  }
}

/** The `Mcp-Param-*` headers (lower-case names) a client sends for `args` under `decls`. */
export function paramHeadersFor(decls: readonly ParamHeaderDecl[], args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of decls) {
    const text = paramHeaderText(argumentAt(args, d.path));
    if (text !== undefined) out[`mcp-param-${d.name.toLowerCase()}`] = encodeHeaderValue(text);
  }
  return out;
}

/** Why a call's `Mcp-Param-*` headers do not fit its arguments (the server answers 400 / -32020). */
export interface ParamHeaderProblem {
  /** The header as declared, `Mcp-Param-{Name}`. */
  readonly header: string;
  /** The argument's path, dot-joined. */
  readonly argument: string;
  readonly problem: 'missing' | 'malformed' | 'mismatch';
  /** For `malformed`: what is wrong with the value. */
  readonly detail?: string;
}

/**
 * Checks the `Mcp-Param-*` headers of one `tools/call` against its arguments (§"Server Validation"): an
 * argument with a header text needs its header; a `null`, absent or non-primitive one needs none. Strings and
 * booleans compare exactly after decoding, numbers numerically (`42.0` equals 42).
 */
export function checkParamHeaderValues(
  decls: readonly ParamHeaderDecl[],
  args: unknown,
  header: (lowerCaseName: string) => string | undefined,
): ParamHeaderProblem | undefined {
  for (const d of decls) {
    const value = argumentAt(args, d.path);
    const expected = paramHeaderText(value);
    if (expected === undefined) continue;
    const where = { header: `Mcp-Param-${d.name}`, argument: d.path.join('.') };
    const raw = header(`mcp-param-${d.name.toLowerCase()}`);
    if (raw === undefined) return { ...where, problem: 'missing' };
    const decoded = decodeHeaderValue(raw);
    if (!decoded.ok) return { ...where, problem: 'malformed', detail: decoded.reason };
    const same =
      typeof value === 'number'
        ? (Number.isInteger(value) ? INTEGER : DECIMAL).test(decoded.value) && Number(decoded.value) === value
        : decoded.value === expected;
    if (!same) return { ...where, problem: 'mismatch' };
  }
  return undefined;
}
