/**
 * The JSON-RPC answers of the tasks extension's own methods (SEP-2663), built for `TaskService` to
 * send: results, the one "unknown task" error every unreadable id gets, and the missing-capability
 * refusal.
 */
import type { TaskOffer } from '../core/era-2026/task-hook.js';
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { TASKS_EXTENSION } from '../jsonrpc/meta-keys.js';
import { ModernCode } from '../modern/constants.js';

export interface Answer {
  status: number;
  /** The JSON-RPC message, or its JSON text when it was built as text. */
  body: Record<string, unknown> | string;
  retryAfter?: number;
}

export function ok(o: TaskOffer, result: Record<string, unknown>): Answer {
  return { status: 200, body: { jsonrpc: '2.0', id: o.req.id, result } };
}

/** A result already serialized (the id is serialized here, as JSON.stringify would). */
export function okJson(o: TaskOffer, result: string): Answer {
  return { status: 200, body: `{"jsonrpc":"2.0","id":${JSON.stringify(o.req.id)},"result":${result}}` };
}

export function rpcError(
  o: TaskOffer,
  status: number,
  code: number,
  message: string,
  data?: unknown,
): Answer {
  const error = data === undefined ? { code, message } : { code, message, data };
  return { status, body: { jsonrpc: '2.0', id: o.req.id, error } };
}

/** Unknown, malformed, expired and another principal's ids are all the same answer. */
export function unknownTask(o: TaskOffer): Answer {
  return rpcError(o, 200, JsonRpcCode.InvalidParams, 'Invalid params: unknown taskId');
}

/** SEP-2575 §"Missing Required Capabilities", SEP-2663 §"Required Capabilities". */
export function missingExtension(o: TaskOffer): Answer {
  return rpcError(
    o,
    400,
    ModernCode.MissingRequiredClientCapability,
    `Missing required client capability: extensions["${TASKS_EXTENSION}"]`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}
