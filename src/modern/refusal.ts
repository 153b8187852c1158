/**
 * A refused modern request: HTTP status plus a JSON-RPC error that echoes the request's id when it
 * could be read. Modern clients tell a modern server from a legacy one by this body (MCP 2026-07-28
 * basic/transports/streamable-http §"Backward Compatibility"), so every modern refusal has one.
 */
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { errorResponse, type RequestId } from '../jsonrpc/message.js';
import { META_PROTOCOL_VERSION, MODERN_VERSIONS, ModernCode } from './constants.js';

export interface ModernRefusal {
  status: number;
  code: number;
  message: string;
  data?: Record<string, unknown> | undefined;
  id: RequestId | null;
  /** Seconds to wait before trying again, sent as `Retry-After` (a limit that will clear). */
  retryAfter?: number | undefined;
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

/** The HTTP headers of a refusal: JSON, `Retry-After` when it has one, then the answer's own (CORS). */
export function refusalHeaders(r: ModernRefusal, headers: Record<string, string>): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...(r.retryAfter === undefined ? {} : { 'retry-after': String(r.retryAfter) }),
    ...headers,
  };
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
  /**
   * The client (principal, else address) already has `limit` requests in flight
   * (clientLimits.maxConcurrentRequests). Requests are short, so one second is a fair wait.
   */
  tooManyRequests: (id: RequestId | null, limit: number): ModernRefusal => ({
    ...make(
      429,
      JsonRpcCode.ServerError,
      `Too Many Requests: this client already has ${limit} requests in flight (clientLimits.maxConcurrentRequests)`,
      id,
    ),
    retryAfter: 1,
  }),
  /**
   * subscriptions/listen over the listen stream caps. Those streams are long-lived, so a slot is
   * not expected to free within a second: five, as for a client's session limit in the 2025 era.
   */
  tooManyListenStreams: (id: RequestId | null): ModernRefusal => ({
    ...make(429, JsonRpcCode.ServerError, 'Too Many Requests: listen stream limit reached', id),
    retryAfter: 5,
  }),
  modernInBatch: () =>
    make(
      400,
      JsonRpcCode.InvalidRequest,
      'Invalid Request: a batch cannot carry a 2026-07-28 request (per-request _meta)',
      null,
    ),
  /**
   * An era-routing refusal (a 2026-07-28 header or field the body does not bear out) of a request
   * that carries `Mcp-Session-Id`: most likely a 2025 session's client sending the wrong version
   * header. It keeps the revision's code and says so, with a stable `data.reason` as the 2025
   * era's refusals have, since such a client matches on that.
   */
  onSession: (r: ModernRefusal): ModernRefusal => ({
    ...r,
    message: `${r.message} (the request carries Mcp-Session-Id: a 2025 session sends the MCP-Protocol-Version its initialize negotiated; a 2026-07-28 request carries params._meta["${META_PROTOCOL_VERSION}"] and no session)`,
    data: { ...r.data, reason: 'modern-request-on-session' },
  }),
} as const;
