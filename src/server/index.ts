/**
 * `sluice/server`: the MCP Streamable HTTP endpoint for node:http, serving official SDK servers.
 * @module
 */

export type { ClusterStats, RedisClusterOptions } from '../cluster/cluster.js';
export { RedisCluster, redisCluster } from '../cluster/cluster.js';
export type { RedisLink, RedisReply } from '../cluster/redis-link.js';
export { RedisReplyError } from '../cluster/redis-link.js';
export type { CloseReport, CreateServer, EndpointStats, StreamStats } from '../core/endpoint.js';
export type {
  AuthResult,
  Logger,
  ResponseMode,
  ServerOptions,
  SessionContext,
  SessionInfo,
} from '../core/options.js';
export { DEFAULTS } from '../core/options.js';
export { InvalidOptionError, SluiceError } from '../errors.js';
export type { EventStore, ReplayResult, StoredEvent } from '../events/event-store.js';
export { DEFAULT_REPLAY_LIMITS, MemoryEventStore } from '../events/memory-event-store.js';
export type { McpHandler, McpHandlerOptions } from './create-handler.js';
export { createMcpHandler } from './create-handler.js';
export { CHANNELS as DIAGNOSTICS_CHANNELS } from './diagnostics.js';
export { jsonLogger } from './json-logger.js';
export type { Served, ServeOptions } from './serve.js';
export { serve } from './serve.js';
export { sharedJsonSchemaValidator } from './shared-validator.js';
export { staticBearer } from './static-bearer.js';
