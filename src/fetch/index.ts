/**
 * `sluice/fetch`: the MCP Streamable HTTP endpoint as a web-standard fetch handler
 * (`(request: Request) => Promise<Response>`), for Bun, Deno, Cloudflare Workers, Hono and Next.js.
 * Nothing reachable from this module imports node:* (test/unit/fetch-neutral.test.ts checks).
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
export type { CloseReport } from '../core/endpoint.js';
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
export { InvalidOptionError, SluiceError } from '../errors.js';
export type { EventStore, ReplayResult, StoredEvent } from '../events/event-store.js';
export { DEFAULT_REPLAY_LIMITS, MemoryEventStore } from '../events/memory-event-store.js';
export type { FetchHandler, FetchHandlerOptions } from './create-fetch-handler.js';
export { createFetchHandler } from './create-fetch-handler.js';
export type { FetchInfo } from './fetch-view.js';
