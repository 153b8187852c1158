/**
 * The 2026-07-28 era on the client side (MCP 2026-07-28 basic/transports/streamable-http §"Standard headers",
 * §"Custom parameter headers"): a request is modern when its `params._meta` carries
 * `io.modelcontextprotocol/protocolVersion` naming a 2026-07-28-or-later revision. Such a request is sent
 * without a session id, with `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (tools/call, prompts/get,
 * resources/read) and one `Mcp-Param-{Name}` header per `x-mcp-header` property of the called tool. Values
 * that are not safe as a plain header value travel as the Base64 sentinel `=?base64?…?=`.
 *
 * Pure functions and one small catalogue; no I/O, no node:* (this file is in the browser bundle).
 */
import type { WireMessage } from './wire.js';

/** The `_meta` key that carries the revision of a modern request. */
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/** The first revision of the modern (stateless, `_meta`-enveloped) era. */
export const FIRST_MODERN_REVISION = '2026-07-28';

/** Header names the transport derives itself; a caller's per-request headers cannot override them. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'content-type',
  'accept',
  'last-event-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'mcp-session-id',
]);

/** Revisions are `YYYY-MM-DD`, so a string comparison orders them. */
export function isModernRevision(version: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= FIRST_MODERN_REVISION;
}

/** The modern revision a request or notification declares in its `_meta` envelope, if any. */
export function modernRevisionOf(message: WireMessage): string | undefined {
  const params = message.params;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return undefined;
  const meta = (params as { _meta?: unknown })._meta;
  if (meta === null || typeof meta !== 'object') return undefined;
  const version = (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY];
  return typeof version === 'string' && isModernRevision(version) ? version : undefined;
}

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';

/**
 * True when `value` cannot travel as a plain field value (RFC 9110 §5.5): empty, a byte outside visible
 * ASCII/space/tab, leading or trailing whitespace (field parsing strips it), or already shaped like the
 * sentinel (which the receiver would decode).
 */
function needsSentinel(value: string): boolean {
  if (value.length === 0 || value !== value.trim()) return true;
  if (value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX)) return true;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c !== 0x09 && (c < 0x20 || c > 0x7e)) return true;
  }
  return false;
}

/** Canonical RFC 4648 Base64 (with padding) of the UTF-8 bytes of `value`; `btoa` exists in Node and browsers. */
function base64Utf8(value: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** A header value for `value`: itself when safe, else `=?base64?{base64 of its UTF-8}?=`. */
export function encodeHeaderValue(value: string): string {
  return needsSentinel(value) ? `${SENTINEL_PREFIX}${base64Utf8(value)}${SENTINEL_SUFFIX}` : value;
}

/** Which body field `Mcp-Name` mirrors, per method. */
const NAME_SOURCE: Readonly<Record<string, 'name' | 'uri'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

/** The standard headers of one modern message (names lower-case). */
export function standardHeaders(message: WireMessage, revision: string): Record<string, string> {
  const h: Record<string, string> = { 'mcp-protocol-version': revision };
  const method = message.method;
  if (typeof method !== 'string') return h;
  h['mcp-method'] = method;
  const field = Object.hasOwn(NAME_SOURCE, method) ? NAME_SOURCE[method] : undefined;
  const params = message.params as Record<string, unknown> | undefined;
  const name = field !== undefined ? params?.[field] : undefined;
  if (typeof name === 'string') h['mcp-name'] = encodeHeaderValue(name);
  return h;
}

/** One `x-mcp-header` declaration: where the value sits in `arguments`, and the header's `{Name}`. */
interface ParamDeclaration {
  readonly path: readonly string[];
  readonly header: string;
}

/** RFC 9110 token characters: what a header name may be made of. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The `x-mcp-header` declarations of the tools seen in `tools/list` results, so that a `tools/call` gets its
 * `Mcp-Param-{Name}` headers even when the caller (an SDK v1 Client, a hand-built request) does not add them.
 * Declarations count only on string, integer or boolean properties reached through `properties` keys from the
 * schema root, with RFC 9110 token names unique regardless of case, as the spec requires; a tool whose
 * declarations are malformed gets none (the server then rejects the call, visibly). Excluding such a tool from
 * the Client's tool list is the Client's job (SDK v2 does it).
 */
export class ParamHeaderCatalog {
  readonly #byTool = new Map<string, readonly ParamDeclaration[]>();
  /** Bounds the memory a hostile server can make the client hold. */
  static readonly MAX_TOOLS = 10_000;

  /** Learns from one `tools/list` result; untrusted input, so every shape is checked. */
  learn(result: unknown): void {
    const tools = (result as { tools?: unknown } | null)?.tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools) {
      if (tool === null || typeof tool !== 'object') continue;
      const { name, inputSchema } = tool as { name?: unknown; inputSchema?: unknown };
      if (typeof name !== 'string') continue;
      const found: ParamDeclaration[] = [];
      const ok = scan(inputSchema, [], found, 0);
      if (ok && found.length > 0) {
        if (this.#byTool.size >= ParamHeaderCatalog.MAX_TOOLS && !this.#byTool.has(name)) continue;
        this.#byTool.set(name, found);
      } else {
        this.#byTool.delete(name);
      }
    }
  }

  /** `Mcp-Param-*` headers (lower-case names) for a `tools/call` message, from what was learned. */
  headersFor(message: WireMessage): Record<string, string> {
    const out: Record<string, string> = {};
    if (message.method !== 'tools/call') return out;
    const params = message.params as { name?: unknown; arguments?: unknown } | undefined;
    if (typeof params?.name !== 'string') return out;
    const declarations = this.#byTool.get(params.name);
    if (declarations === undefined) return out;
    for (const d of declarations) {
      let node: unknown = params.arguments;
      for (const key of d.path) {
        node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
      }
      const text = primitiveText(node);
      if (text !== undefined) out[`mcp-param-${d.header.toLowerCase()}`] = encodeHeaderValue(text);
    }
    return out;
  }
}

/** Strings as they are, booleans lower-case, finite numbers in decimal; anything else gets no header. */
function primitiveText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) {
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? undefined : String(value);
  }
  return undefined;
}

/** Collects declarations under `properties` chains; false when one is malformed (then the tool gets none). */
function scan(schema: unknown, path: string[], out: ParamDeclaration[], depth: number): boolean {
  if (schema === null || typeof schema !== 'object' || depth > 32) return true;
  const properties = (schema as { properties?: unknown }).properties;
  if (properties === null || typeof properties !== 'object') return true;
  for (const [key, sub] of Object.entries(properties as Record<string, unknown>)) {
    if (sub === null || typeof sub !== 'object') continue;
    const header = (sub as Record<string, unknown>)['x-mcp-header'];
    if (header !== undefined) {
      if (typeof header !== 'string' || !TOKEN.test(header)) return false;
      // Only string, integer and boolean properties may be mirrored (`number` is excluded by the spec too).
      const type = (sub as { type?: unknown }).type;
      if (type !== 'string' && type !== 'integer' && type !== 'boolean') return false;
      if (out.some((d) => d.header.toLowerCase() === header.toLowerCase())) return false;
      out.push({ path: [...path, key], header });
    }
    if (!scan(sub, [...path, key], out, depth + 1)) return false;
  }
  return true;
}
