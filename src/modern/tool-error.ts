/**
 * A JSON-RPC error from inside a v1 tool. The v1 McpServer turns every exception a tool throws into
 * an `isError` result, so a tool cannot answer -32602 (a tampered `requestState`, MCP 2026-07-28
 * basic/patterns/mrtr §"Security") or -32021 itself. `toolError()` builds an `isError` result that
 * also names the error under a Sluice `_meta` key; on a modern request Sluice answers with that
 * JSON-RPC error instead (legacy sessions see the plain `isError` result).
 */
import type { JsonRpcError, RequestId } from '../jsonrpc/message.js';

import { META_TOOL_ERROR } from '../jsonrpc/meta-keys.js';

export { META_TOOL_ERROR };

export interface ToolErrorResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError: true;
  _meta: Record<string, unknown>;
}

export function toolError(code: number, message: string, data?: unknown): ToolErrorResult {
  const error = data === undefined ? { code, message } : { code, message, data };
  return { content: [{ type: 'text', text: message }], isError: true, _meta: { [META_TOOL_ERROR]: error } };
}

/** The error a result names (see toolError), or undefined. */
export function toolErrorOf(result: Record<string, unknown>, id: RequestId): JsonRpcError | undefined {
  const meta = result['_meta'];
  if (typeof meta !== 'object' || meta === null) return undefined;
  const e = (meta as Record<string, unknown>)[META_TOOL_ERROR];
  if (typeof e !== 'object' || e === null) return undefined;
  const { code, message, data } = e as { code?: unknown; message?: unknown; data?: unknown };
  if (!Number.isInteger(code) || typeof message !== 'string') return undefined;
  return data === undefined
    ? { jsonrpc: '2.0', id, error: { code: code as number, message } }
    : { jsonrpc: '2.0', id, error: { code: code as number, message, data } };
}
