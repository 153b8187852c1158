/**
 * JSON-RPC error codes Sluice puts on the wire, named once so no call site carries a magic number.
 * The -32700..-32600 range is JSON-RPC 2.0's own; -32000/-32001 follow the official SDK's use for
 * transport-level refusals (its clients and the conformance suite recognise them).
 */
export const JsonRpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Transport-level refusal: bad header, missing session id, unsupported version, limits. */
  ServerError: -32000,
  /** The session id is unknown or ended (always with HTTP 404). */
  SessionNotFound: -32001,
  /** A request was cancelled or its session ended before it completed. */
  RequestCancelled: -32800,
} as const;
