/**
 * Names and numbers of the 2026-07-28 ("modern") revision, spelled once. Modern requests carry
 * their protocol version, client info and capabilities in `params._meta` under reserved keys
 * (MCP 2026-07-28 basic/index §"_meta"); the error codes come from the -32020..-32099 range the
 * spec reserves for itself (schema 2026-07-28 §"MCP error codes").
 */

/** Revisions served statelessly, per request. Every one is also listed by `server/discover`. */
export const MODERN_VERSIONS: readonly string[] = ['2026-07-28'];
export { FIRST_MODERN_VERSION } from '../http/standard-headers.js';

export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION } from '../jsonrpc/meta-keys.js';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

export const ModernCode = {
  /** HTTP headers missing, malformed, or not matching the body (always HTTP 400). */
  HeaderMismatch: -32020,
  /** The server needs a client capability the request did not declare (HTTP 400). */
  MissingRequiredClientCapability: -32021,
  /** The request's protocol version is not served here (HTTP 400, data.supported/requested). */
  UnsupportedProtocolVersion: -32022,
} as const;

/**
 * Methods the 2026-07-28 revision removed. A modern request for one of them is an unknown method
 * (404/-32601, MCP 2026-07-28 basic/transports/streamable-http §"Protocol Version Header"), even
 * though a v1 SDK server would happily answer `ping` or `logging/setLevel`.
 */
export const REMOVED_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
]);

export { NAMED_METHODS } from '../http/standard-headers.js';

/** Results that MUST carry `ttlMs` and `cacheScope` (schema 2026-07-28 `CacheableResult`). */
export const CACHEABLE_METHODS: ReadonlySet<string> = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'server/discover',
]);

/** Syslog severities of `notifications/message`, lowest first (MCP server/utilities/logging). */
export const LOG_LEVELS: readonly string[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];
