// sluice/client: the MCP Streamable HTTP client transport. Named exports only.

export { SluiceError, type SluiceErrorCode } from '../errors.js';
export type { OtelApiLike } from '../trace/otel-like.js';
export type { TokenAuthProvider, UnauthorizedContext } from './auth/token-provider.js';
export {
  type CallToolStreamParams,
  callToolStream,
  PartialSequenceError,
  type ToolStreamPart,
} from './call-tool-stream.js';
export {
  type CallWithInputOptions,
  callWithInput,
  DEFAULT_MAX_INPUT_ROUNDS,
  INPUT_REQUEST_CAPABILITIES,
  type InputHandler,
  type InputHandlers,
  type InputRequestMethod,
  InputRoundsExceededError,
  InputUnsupportedError,
} from './call-with-input.js';
export {
  AlreadyStartedError,
  AuthorizationError,
  type AuthorizationRefusal,
  EventTooLargeError,
  ForbiddenError,
  HttpStatusError,
  IdleTimeoutError,
  InvalidOptionError,
  MalformedMessageError,
  NetworkError,
  NoResponseError,
  NotIdempotentError,
  NotStartedError,
  RequestLostError,
  ResumeDeclinedError,
  ResumeExhaustedError,
  ResumeImpossibleError,
  SessionExpiredError,
  SluiceClientError,
  type SluiceClientErrorCode,
  TRANSPORT_FAILURE_JSONRPC_CODE,
  TransportClosedError,
  UnauthorizedError,
  type UnauthorizedReason,
  UnexpectedContentTypeError,
} from './errors.js';
export { DEFAULT_IDEMPOTENT_METHODS, hasIdempotencyKey, idempotencyMeta } from './idempotency.js';
export {
  encodeHeaderValue,
  FIRST_MODERN_REVISION,
  isModernRevision,
  PROTOCOL_VERSION_META_KEY,
} from './modern.js';
export {
  type ClientClock,
  type FetchLike,
  type HeadersOption,
  IDEMPOTENCY_KEY_META,
  type OutgoingRequest,
  type StreamableHttpClientOptions,
  type TokenOption,
} from './options.js';
export type { RedirectPolicy } from './redirect.js';
export {
  TaskCancelledError,
  TaskExpiredError,
  TaskFailedError,
  TaskInputRequiredError,
  TaskNotFoundError,
  type TaskState,
  type TaskStatusName,
  TaskUnreachableError,
} from './task-state.js';
export { type CallToolAsTaskOptions, callToolAsTask, callToolDurably, type TaskHandle } from './tasks.js';
export type { ClientTracingOptions } from './tracing.js';
export {
  type SessionResetEvent,
  type SluiceSendOptions,
  StreamableHttpClientTransport,
  type TransportSnapshot,
} from './transport.js';
