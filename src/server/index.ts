/**
 * `sluice/server`: the MCP Streamable HTTP endpoint for node:http, serving official SDK servers.
 * @module
 */

export { AuthServerUnavailableError, InvalidTokenError, type InvalidTokenReason } from '../auth/errors.js';
export type { MetadataAnswer } from '../auth/metadata-answer.js';
export type { IntrospectionClient, OAuthResourceServerOptions } from '../auth/options.js';
export { OAUTH_DEFAULTS } from '../auth/options.js';
export type { ProofReplayStore, ProofRequest } from '../auth/proof-replays.js';
export type { AuthRequest, OAuthAuthResult } from '../auth/resource-server.js';
export { OAuthResourceServer, oauthResourceServer } from '../auth/resource-server.js';
export type { TokenVerifier, VerifiedToken } from '../auth/verified-token.js';
export type { ClusterStats, RedisClusterOptions } from '../cluster/cluster.js';
export { RedisCluster, redisCluster } from '../cluster/cluster.js';
export { proofReplaysOf } from '../cluster/proof-replays.js';
export type { RedisLink, RedisReply } from '../cluster/redis-link.js';
export { RedisReplyError } from '../cluster/redis-link.js';
export { sharedLinkOf } from '../cluster/shared-link.js';
// 2026-07-28 (modern era): listen-stream publishing, MRTR helpers, JSON-RPC errors from v1 tools.
export type { ChangeBus, ChangeEvent, Notifier } from '../core/change-bus.js';
export type { CloseReport } from '../core/endpoint.js';
export { statelessSafe } from '../core/era-2026/shared-server.js';
export type { TaskHook, TaskOffer } from '../core/era-2026/task-hook.js';
export type { TracingOptions } from '../core/observe/operations.js';
export type { EndpointStats, StreamStats } from '../core/observe/stats.js';
export type {
  AuthDenial,
  AuthResult,
  Logger,
  ResponseMode,
  ServerOptions,
  SessionContext,
  SessionInfo,
} from '../core/options.js';
export { DEFAULTS } from '../core/options.js';
export type { BodyResult, RequestView, ViewHeaders } from '../core/pipeline/request-view.js';
export type { CreateServer } from '../core/sdk/server-like.js';
export {
  AlreadyRegisteredError,
  BodyConsumedError,
  InvalidOptionError,
  PartialCancelledError,
  SdkTaskStoreError,
  SessionWakeError,
  SharedRecordError,
  SharedToolError,
  SluiceError,
  type SluiceErrorCode,
  UnsupportedServerError,
} from '../errors.js';
export type { EventStore, ReplayResult, StoredEvent } from '../events/event-store.js';
export {
  DEFAULT_REPLAY_BUDGET,
  DEFAULT_REPLAY_LIMITS,
  MemoryEventStore,
} from '../events/memory-event-store.js';
export { encodeHeaderValue } from '../http/param-headers.js';
export { MODERN_VERSIONS } from '../modern/constants.js';
export type { MrtrInput } from '../modern/mrtr.js';
export { mrtrInput } from '../modern/mrtr.js';
export { toolError } from '../modern/tool-error.js';
export { MemoryTaskStore, type MemoryTaskStoreOptions } from '../tasks/memory-store.js';
export { OWNER_LOST, type TaskError, type TaskRecord, type TaskStatus } from '../tasks/model.js';
export { TASK_DEFAULTS, type TaskOptions, type TaskPolicy, taskTools } from '../tasks/options.js';
export { connectRedisTaskStore } from '../tasks/redis-connect.js';
export { RedisTaskStore, type RedisTaskStoreOptions } from '../tasks/redis-store.js';
export {
  SDK_TASK_STORE_DEFAULTS,
  type SdkTaskStoreOptions,
  SluiceSdkTaskStore,
  sdkTaskStore,
} from '../tasks/sdk-store.js';
export { createTasks, TASKS_EXTENSION, TaskService, type TaskServiceStats } from '../tasks/service.js';
export type { AnswerOutcome, CreateOutcome, Settlement, TaskPage, TaskStore } from '../tasks/store.js';
export type { OtelApiLike } from '../trace/otel-like.js';
export type { McpHandler, McpHandlerOptions } from './create-handler.js';
export { createMcpHandler } from './create-handler.js';
export { CHANNELS as DIAGNOSTICS_CHANNELS } from './diagnostics.js';
export { jsonLogger } from './json-logger.js';
export { type NodeRequestView, nodeObjectsOf } from './node-view.js';
export type { PartialContentBlock, PartialResults, PartialResultsExtra } from './partial-results.js';
export {
  PARTIAL_CAPABILITY,
  PARTIAL_META_KEY,
  PARTIAL_RESULT_METHOD,
  PARTIAL_TOKEN_META,
  partialResults,
} from './partial-results.js';
export type { RequestStateCodec } from './request-state.js';
export { createRequestStateCodec } from './request-state.js';
export type { Served, ServeOptions } from './serve.js';
export { serve } from './serve.js';
export {
  registerSharedPrompts,
  type SharedPrompt,
  type SharedPromptConfig,
  sharedPrompt,
} from './shared-prompts.js';
export { registerSharedResources, type SharedResource, sharedResource } from './shared-resources.js';
export { registerSharedTools, type SharedTool, type SharedToolConfig, sharedTool } from './shared-tools.js';
export { sharedJsonSchemaValidator } from './shared-validator.js';
export { staticBearer } from './static-bearer.js';
