/**
 * The JSON-RPC answers of the tasks extension's own methods (SEP-2663), built for `TaskService` to
 * send: results, the one "unknown task" error every unreadable id gets, the missing-capability
 * refusal, the store's refusals, and `server/discover` with the extension named.
 */
import type { TaskOffer } from '../core/era-2026/task-hook.js';
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { isPlainObject } from '../jsonrpc/message.js';
import { TASKS_EXTENSION } from '../jsonrpc/meta-keys.js';
import { ModernCode } from '../modern/constants.js';
import { CaptureSink } from './capture-sink.js';

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

/** The store could not be reached: the client may retry shortly. */
export function storeUnreachable(o: TaskOffer): Answer {
  return {
    ...rpcError(o, 503, JsonRpcCode.ServerError, 'Service Unavailable: the task store is unreachable'),
    retryAfter: 1,
  };
}

/** The client has `max` unfinished tasks already (tasks.maxLivePerClient). */
export function clientLimit(o: TaskOffer, max: number, pollIntervalMs: number): Answer {
  return {
    ...rpcError(
      o,
      429,
      JsonRpcCode.ServerError,
      `Too Many Requests: this client already has ${max} unfinished tasks (tasks.maxLivePerClient)`,
    ),
    retryAfter: Math.max(1, Math.ceil(pollIntervalMs / 1000)),
  };
}

export function storeFull(o: TaskOffer): Answer {
  return {
    ...rpcError(o, 503, JsonRpcCode.ServerError, 'Service Unavailable: the task store is full'),
    retryAfter: 5,
  };
}

/** `server/discover` served as usual, its `capabilities.extensions` naming the extension. */
export async function discoverAnswer(o: TaskOffer): Promise<Answer> {
  const sink = new CaptureSink(1024 * 1024, () => undefined);
  await o.serve(o.req, sink);
  const c = await sink.done;
  if (c.kind !== 'response') return rpcError(o, 500, JsonRpcCode.InternalError, 'discover failed');
  const result = c.message['result'];
  if (isPlainObject(result)) {
    const caps = isPlainObject(result['capabilities']) ? result['capabilities'] : {};
    const ext = isPlainObject(caps['extensions']) ? caps['extensions'] : {};
    result['capabilities'] = { ...caps, extensions: { ...ext, [TASKS_EXTENSION]: {} } };
  }
  return { status: 'error' in c.message ? 400 : 200, body: c.message };
}
