/**
 * What a 2026-07-28 request's final answer becomes on the way out, and with which HTTP status while
 * the answer is still uncommitted: a tool error named in `_meta` becomes a JSON-RPC error
 * (tool-error.ts); an error is mapped to its successor code and status (stamp.ts); a result is
 * stamped (resultType, serverInfo, cache fields); an `input_required` result is allowed only from
 * the methods that may return one and only with inputs the client declared it can answer (MCP
 * 2026-07-28 multi-round-trip requests), else it becomes an error (-32021 is HTTP 400 while
 * nothing was committed; on a stream it stays in-band). Also which log messages a request asked for.
 */
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc/message.js';
import { LOG_LEVELS, ModernCode } from './constants.js';
import { INPUT_REQUIRED_METHODS, missingCapabilities } from './mrtr.js';
import { ModernRefusals } from './refusal.js';
import { mapError, stampResult } from './stamp.js';
import { toolErrorOf } from './tool-error.js';

export interface FinalAnswer {
  /** The HTTP status when the answer is sent as JSON. */
  status: number;
  out: JsonRpcResponse;
}

export function finalAnswer(
  message: JsonRpcResponse,
  req: JsonRpcRequest,
  clientCapabilities: Record<string, unknown>,
  serverInfo: { name: string; version: string } | undefined,
): FinalAnswer {
  const named = 'result' in message ? toolErrorOf(message.result, req.id) : undefined;
  if (named !== undefined) message = named;
  if ('error' in message) {
    const m = mapError(message, req);
    return { status: m.status, out: m.error };
  }
  const out = stampResult(message, req.method, serverInfo);
  const gate = gateInputRequired(out.result, req, clientCapabilities);
  if (gate === undefined) return { status: 200, out };
  return {
    status: gate.code === ModernCode.MissingRequiredClientCapability ? 400 : 200,
    out: errorResponse(req.id, gate.code, gate.message, gate.data),
  };
}

/** MRTR duties: input_required only where allowed, and only with inputs the client can answer. */
function gateInputRequired(
  result: Record<string, unknown>,
  req: JsonRpcRequest,
  clientCapabilities: Record<string, unknown>,
): { code: number; message: string; data?: unknown } | undefined {
  if (result['resultType'] !== 'input_required') return undefined;
  if (!INPUT_REQUIRED_METHODS.has(req.method)) {
    return {
      code: JsonRpcCode.InternalError,
      message: `Internal error: ${req.method} cannot return input_required`,
    };
  }
  const missing = missingCapabilities(result, clientCapabilities);
  if (missing === undefined) return undefined;
  const r = ModernRefusals.missingCapability(req.id, missing);
  return { code: r.code, message: r.message, data: r.data };
}

/**
 * Whether a `notifications/message` at `level` goes to a request that asked for `wanted`
 * (`_meta` logLevel): only at or above it, never without one.
 */
export function levelAllowed(wanted: string | undefined, level: unknown): boolean {
  if (wanted === undefined) return false;
  const l = typeof level === 'string' ? LOG_LEVELS.indexOf(level) : -1;
  return l >= 0 && l >= LOG_LEVELS.indexOf(wanted);
}
