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
import {
  encodeHeaderValue,
  type ParamHeaderDecl,
  paramHeaderDecls,
  paramHeadersFor,
} from '../http/param-headers.js';
import { FIRST_MODERN_VERSION, NAMED_METHODS } from '../http/standard-headers.js';
import { META_PROTOCOL_VERSION } from '../jsonrpc/meta-keys.js';
import type { WireMessage } from './wire.js';

/** The `_meta` key that carries the revision of a modern request (spelled once, in jsonrpc/meta-keys.ts). */
export const PROTOCOL_VERSION_META_KEY = META_PROTOCOL_VERSION;

/** The first revision of the modern (stateless, `_meta`-enveloped) era. */
export const FIRST_MODERN_REVISION = FIRST_MODERN_VERSION;

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

/** The shared sentinel encoder (http/param-headers.ts), re-exported as part of `sluice/client`. */
export { encodeHeaderValue };

/** The standard headers of one modern message (names lower-case). */
export function standardHeaders(message: WireMessage, revision: string): Record<string, string> {
  const h: Record<string, string> = { 'mcp-protocol-version': revision };
  const method = message.method;
  if (typeof method !== 'string') return h;
  h['mcp-method'] = method;
  const field = Object.hasOwn(NAMED_METHODS, method) ? NAMED_METHODS[method] : undefined;
  const params = message.params as Record<string, unknown> | undefined;
  const name = field !== undefined ? params?.[field] : undefined;
  if (typeof name === 'string') h['mcp-name'] = encodeHeaderValue(name);
  return h;
}

/**
 * The `x-mcp-header` declarations of the tools seen in `tools/list` results, so that a `tools/call` gets its
 * `Mcp-Param-{Name}` headers even when the caller (an SDK v1 Client, a hand-built request) does not add them.
 * The declaration rules and the value encoding are the server's own (http/param-headers.ts): a tool whose
 * declarations break a rule gets no headers, and Sluice's server expects none for it. Excluding such a tool
 * from the Client's tool list is the Client's job (SDK v2 does it).
 */
export class ParamHeaderCatalog {
  readonly #byTool = new Map<string, readonly ParamHeaderDecl[]>();
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
      const found = paramHeaderDecls(inputSchema);
      if (found.ok && found.decls.length > 0) {
        if (this.#byTool.size >= ParamHeaderCatalog.MAX_TOOLS && !this.#byTool.has(name)) continue;
        this.#byTool.set(name, found.decls);
      } else {
        this.#byTool.delete(name);
      }
    }
  }

  /** `Mcp-Param-*` headers (lower-case names) for a `tools/call` message, from what was learned. */
  headersFor(message: WireMessage): Record<string, string> {
    if (message.method !== 'tools/call') return {};
    const params = message.params as { name?: unknown; arguments?: unknown } | undefined;
    if (typeof params?.name !== 'string') return {};
    const declarations = this.#byTool.get(params.name);
    if (declarations === undefined) return {};
    return paramHeadersFor(declarations, params.arguments);
  }
}
