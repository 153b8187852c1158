/**
 * JSON-RPC 2.0 message shapes and the one structural classifier, shared by the server core and the
 * client (it imports nothing, so the browser client can use it).
 *
 * Classification uses plain property checks, never a schema library: the official SDK spends about
 * a quarter of its CPU per echo building zod errors in type guards that fail on the normal path
 * (measured against the official transport; see docs/benchmarks.md). What is checked here is exactly
 * what a transport needs to route a message; the SDK's Protocol validates method params against its
 * schemas afterwards.
 */

export type RequestId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: Record<string, unknown> | undefined;
}
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown> | undefined;
}
export interface JsonRpcResult {
  jsonrpc: '2.0';
  id: RequestId;
  result: Record<string, unknown>;
}
export interface JsonRpcError {
  jsonrpc: '2.0';
  id?: RequestId | null | undefined;
  error: { code: number; message: string; data?: unknown };
}
export type JsonRpcResponse = JsonRpcResult | JsonRpcError;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** The classifier's verdict; `invalid` carries a reason fit for an error message. */
export type Classified =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: JsonRpcResponse; id: RequestId }
  | { kind: 'invalid'; reason: string };

export type MessageKind = Classified['kind'];

/** Longest string id accepted; longer ids are refused rather than stored as map keys. */
export const MAX_ID_LENGTH = 256;

/** A JSON object (not null, not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A usable request id: a safe integer or a bounded string (MCP forbids null ids). */
export function isRequestId(v: unknown): v is RequestId {
  if (typeof v === 'string') return v.length <= MAX_ID_LENGTH;
  return typeof v === 'number' && Number.isSafeInteger(v);
}

/** Classifies one parsed JSON value as a JSON-RPC message (JSON-RPC 2.0 §4–§5, MCP basic/index). */
export function classify(v: unknown): Classified {
  if (!isPlainObject(v)) return { kind: 'invalid', reason: 'message is not a JSON object' };
  if (v['jsonrpc'] !== '2.0') return { kind: 'invalid', reason: 'jsonrpc must be "2.0"' };
  const method = v['method'];
  const hasId = 'id' in v;
  if (method !== undefined) {
    if (typeof method !== 'string' || method.length === 0) {
      return { kind: 'invalid', reason: 'method must be a non-empty string' };
    }
    const params = v['params'];
    if (params !== undefined && !isPlainObject(params)) {
      return { kind: 'invalid', reason: 'params must be an object' };
    }
    if ('result' in v || 'error' in v)
      return { kind: 'invalid', reason: 'a request cannot carry result or error' };
    if (!hasId) return { kind: 'notification', message: v as unknown as JsonRpcNotification };
    if (!isRequestId(v['id'])) {
      return { kind: 'invalid', reason: 'id must be a string (at most 256 chars) or a safe integer' };
    }
    return { kind: 'request', message: v as unknown as JsonRpcRequest };
  }
  const hasResult = 'result' in v;
  const hasError = 'error' in v;
  if (hasResult === hasError) {
    return { kind: 'invalid', reason: 'expected a method, or exactly one of result and error' };
  }
  const id = v['id'];
  if (!isRequestId(id)) return { kind: 'invalid', reason: 'a response needs a string or integer id' };
  if (hasResult && !isPlainObject(v['result']))
    return { kind: 'invalid', reason: 'result must be an object' };
  if (hasError) {
    const e = v['error'];
    if (!isPlainObject(e) || !Number.isInteger(e['code']) || typeof e['message'] !== 'string') {
      return { kind: 'invalid', reason: 'error must be an object with an integer code and a string message' };
    }
  }
  return { kind: 'response', message: v as unknown as JsonRpcResponse, id };
}

/** A JSON-RPC error object, optionally tied to a request id (null when the id could not be read). */
export function errorResponse(
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcError {
  return data === undefined
    ? { jsonrpc: '2.0', id, error: { code, message } }
    : { jsonrpc: '2.0', id, error: { code, message, data } };
}

/** Returns the progress token of a `notifications/progress`, or undefined for any other message. */
export function progressTokenOf(m: JsonRpcMessage): RequestId | undefined {
  // A property load, not `'method' in m`: this runs once per outgoing event, and the compare rejects
  // every other message at once (responses have no method, so it reads undefined).
  if ((m as { method?: unknown }).method !== 'notifications/progress' || 'id' in m) return undefined;
  const token = (m as JsonRpcNotification).params?.['progressToken'];
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}
