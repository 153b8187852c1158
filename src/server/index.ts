/**
 * `sluice/server`: the MCP Streamable HTTP endpoint for node:http, serving official SDK servers.
 * @module
 */
export { createMcpHandler } from './create-handler.js';
export type { McpHandler, McpHandlerOptions } from './create-handler.js';
export { serve } from './serve.js';
export type { ServeOptions, Served } from './serve.js';
export type {
  AuthResult,
  Logger,
  ResponseMode,
  ServerOptions,
  SessionContext,
  SessionInfo,
} from '../core/options.js';
export { DEFAULTS } from '../core/options.js';
export type { CloseReport, CreateServer, EndpointStats } from '../core/endpoint.js';
export type { EventStore, ReplayResult, StoredEvent } from '../events/event-store.js';
export { MemoryEventStore, DEFAULT_REPLAY_LIMITS } from '../events/memory-event-store.js';
export { SluiceError, InvalidOptionError } from '../errors.js';
