/**
 * A refused modern request: HTTP status plus a JSON-RPC error that echoes the request's id when it
 * could be read. Modern clients tell a modern server from a legacy one by this body (MCP 2026-07-28
 * basic/transports/streamable-http §"Backward Compatibility"), so every modern refusal has one.
 */
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { errorResponse, type RequestId } from '../jsonrpc/message.js';
import { MODERN_VERSIONS, ModernCode } from './constants.js';

export interface ModernRefusal {
  status: number;
  code: number;
  message: string;
  data?: Record<string, unknown> | undefined;
  id: RequestId | null;
}

function make(
  status: number,
  code: number,
  message: string,
  id: RequestId | null,
  data?: Record<string, unknown>,
): ModernRefusal {
  return data === undefined ? { status, code, message, id } : { status, code, message, id, data };
}

/** The wire body of a refusal. */
export function refusalBody(r: ModernRefusal): string {
  return JSON.stringify(errorResponse(r.id, r.code, r.message, r.data));
}

export const ModernRefusals = {
  headerMismatch: (id: RequestId | null, detail: string) =>
    make(400, ModernCode.HeaderMismatch, `Header mismatch: ${detail}`, id),
  unsupportedVersion: (
    id: RequestId | null,
    requested: string,
    supported: readonly string[] = MODERN_VERSIONS,
  ) =>
    make(400, ModernCode.UnsupportedProtocolVersion, 'Unsupported protocol version', id, {
      supported: [...supported],
      requested,
    }),
  invalidMeta: (id: RequestId | null, detail: string) =>
    make(400, JsonRpcCode.InvalidParams, `Invalid params: ${detail}`, id),
  methodNotFound: (id: RequestId | null, method: string) =>
    make(404, JsonRpcCode.MethodNotFound, `Method not found: ${method.slice(0, 128)}`, id),
  missingCapability: (id: RequestId | null, required: Record<string, unknown>) =>
    make(
      400,
      ModernCode.MissingRequiredClientCapability,
      `Missing required client capability: ${Object.keys(required).join(', ')}`,
      id,
      { requiredCapabilities: required },
    ),
  modernInBatch: () =>
    make(
      400,
      JsonRpcCode.InvalidRequest,
      'Invalid Request: a batch cannot carry a 2026-07-28 request (per-request _meta)',
      null,
    ),
} as const;
