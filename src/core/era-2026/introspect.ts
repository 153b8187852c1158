/**
 * What a 2026-07-28 request learns from the served server by asking it internally (requests of
 * Sluice's own, never seen by the client): the tools' `x-mcp-header` declarations (read with
 * tools/list, cached per principal in the era's state until a tool list change), and for
 * server/discover the server's initialize result, reshaped into the discover result.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { JsonRpcResponse } from '../../jsonrpc/message.js';
import { MODERN_VERSIONS } from '../../modern/constants.js';
import { type HeaderDecl, headerDeclsOf } from '../../modern/param-headers.js';
import type { ModernMeta } from '../../modern/validate.js';
import type { ModernState } from './state.js';

export type ServerInfo = { name: string; version: string };

/** A request to the served server; undefined when it was not answered (the call ended). */
export type Ask = (method: string, params: Record<string, unknown>) => Promise<JsonRpcResponse | undefined>;

/** Pages of tools/list read to learn `x-mcp-header` declarations, at most. */
const MAX_TOOL_PAGES = 32;

export function serverInfoOf(server: unknown): ServerInfo | undefined {
  // The SDK keeps it on the low-level Server (McpServer wraps one as `.server`).
  const inner = (server as { server?: unknown }).server ?? server;
  const info = (inner as { _serverInfo?: unknown })._serverInfo;
  if (typeof info !== 'object' || info === null) return undefined;
  const { name, version } = info as Record<string, unknown>;
  return typeof name === 'string' && typeof version === 'string' ? { name, version } : undefined;
}

/**
 * The principal's tools' header declarations, by tool name: cached, else read page by page with
 * tools/list and cached. Undefined when the call ended while reading; `unanswered` when the served
 * server did not answer a page within the ask's deadline (nothing is cached then: the declarations
 * are unknown, not empty).
 */
export async function toolHeaderDecls(
  ask: Ask,
  state: ModernState,
  principal: string | undefined,
  now: () => number,
  done: () => boolean,
): Promise<Map<string, HeaderDecl[]> | 'unanswered' | undefined> {
  const cached = state.decls(principal, now());
  if (cached !== undefined) return cached;
  const tools = new Map<string, HeaderDecl[]>();
  let cursor: unknown;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const r = await ask('tools/list', cursor === undefined ? {} : { cursor });
    if (done()) return undefined;
    if (r === undefined) return 'unanswered';
    if (!('result' in r)) break;
    const list = r.result['tools'];
    if (Array.isArray(list)) {
      for (const t of list as { name?: unknown; inputSchema?: unknown }[]) {
        if (typeof t?.name !== 'string') continue;
        const decls = headerDeclsOf(t.inputSchema);
        if (decls.length > 0) tools.set(t.name, decls);
      }
    }
    cursor = r.result['nextCursor'];
    if (typeof cursor !== 'string') break;
  }
  state.setDecls(principal, now(), tools);
  return tools;
}

/** The internal initialize that asks the served server to describe itself (server/discover). */
export function describeParams(meta: ModernMeta): Record<string, unknown> {
  return {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: meta.clientCapabilities,
    clientInfo: meta.clientInfo ?? { name: 'unknown', version: '0' },
  };
}

/**
 * server/discover's result (MCP 2026-07-28 server/discover): what the served server reports to an
 * initialize, with the modern versions this endpoint serves.
 */
export function discoverResult(described: Record<string, unknown>): {
  result: Record<string, unknown>;
  info: ServerInfo | undefined;
} {
  const init = described as { capabilities?: unknown; serverInfo?: unknown; instructions?: unknown };
  const served = init.serverInfo as ServerInfo | undefined;
  const info = served === undefined ? undefined : { name: served.name, version: served.version };
  const result: Record<string, unknown> = {
    supportedVersions: [...MODERN_VERSIONS],
    capabilities: init.capabilities ?? {},
    ...(served === undefined ? {} : { serverInfo: served }),
    ...(typeof init.instructions === 'string' ? { instructions: init.instructions } : {}),
  };
  return { result, info };
}
