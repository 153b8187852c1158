/**
 * HTTP refusals with their JSON-RPC error bodies, named once. The spec lets an HTTP error carry a
 * JSON-RPC error response without id (2025-11-25 basic/transports §"Sending Messages to the
 * Server"); `id: null` is JSON-RPC 2.0's spelling of "could not be determined".
 */
import { JsonRpcCode } from '../../jsonrpc/codes.js';
import { errorResponse } from '../../jsonrpc/message.js';
import type { Headers, ResponseSink } from './sink.js';

export interface Refusal {
  status: number;
  code: number;
  message: string;
  /** Machine-readable reason, sent as error.data.reason. */
  reason: string;
  headers?: Headers;
}

function refusal(status: number, code: number, reason: string, message: string, headers?: Headers): Refusal {
  return headers === undefined
    ? { status, code, reason, message }
    : { status, code, reason, message, headers };
}

/** Sends `r`; `id` is the request's own id when the refusal answers one request whose id is known. */
export function sendRefusal(
  sink: ResponseSink,
  r: Refusal,
  extraHeaders?: Headers,
  id: string | number | null = null,
): void {
  const body = JSON.stringify(errorResponse(id, r.code, r.message, { reason: r.reason }));
  sink.respond(r.status, { 'content-type': 'application/json', ...extraHeaders, ...r.headers }, body);
}

/** A received header value for a message: JSON-quoted (control characters escaped), at most 100 characters. */
function quoted(v: string): string {
  return JSON.stringify(v.length > 100 ? `${v.slice(0, 100)}…` : v);
}

const C = JsonRpcCode;
/** The catalogue of transport refusals; one entry per distinct reason. */
export const Refusals = {
  parseError: (detail: string) => refusal(400, C.ParseError, 'parse-error', `Parse error: ${detail}`),
  invalidRequest: (detail: string) =>
    refusal(400, C.InvalidRequest, 'invalid-request', `Invalid Request: ${detail}`),
  emptyBatch: () => refusal(400, C.InvalidRequest, 'empty-batch', 'Invalid Request: empty batch'),
  /** An `initialize` whose required params are missing or mistyped (jsonrpc/initialize-params.ts). */
  invalidInitialize: (detail: string) =>
    refusal(400, C.InvalidParams, 'invalid-initialize-params', `Invalid params: ${detail}`),
  /** `by`: what named the revision (the session's negotiation, or a stateless request's header). */
  batchNotAllowed: (version: string, by = 'session negotiated') =>
    refusal(
      400,
      C.InvalidRequest,
      'batch-not-allowed',
      `Invalid Request: JSON-RPC batches were removed after 2025-03-26 (${by} ${version})`,
    ),
  initializeInBatch: () =>
    refusal(
      400,
      C.InvalidRequest,
      'initialize-in-batch',
      'Invalid Request: initialize must not be part of a batch',
    ),
  initializeWithSession: () =>
    refusal(
      400,
      C.InvalidRequest,
      'initialize-with-session',
      'Invalid Request: initialize must not carry an Mcp-Session-Id',
    ),
  duplicateId: (id: string | number) =>
    refusal(
      400,
      C.InvalidRequest,
      'duplicate-id',
      `Invalid Request: request id ${JSON.stringify(id)} is already in use in this session`,
    ),
  unexpectedReply: (id: string | number) =>
    refusal(
      400,
      C.InvalidRequest,
      'unexpected-reply',
      `Invalid Request: no server request with id ${JSON.stringify(id)} is awaiting a reply`,
    ),
  missingSession: () =>
    refusal(
      400,
      C.ServerError,
      'missing-session-id',
      'Bad Request: Mcp-Session-Id header is required; send initialize first (without it), then send the Mcp-Session-Id of its answer on every later request',
    ),
  methodNotFound: (method: string) =>
    refusal(404, C.MethodNotFound, 'method-not-found', `Method not found: ${method.slice(0, 64)}`),
  sessionNotFound: () => refusal(404, C.SessionNotFound, 'session-not-found', 'Session not found'),
  badProtocolVersion: (v: string, why: string) =>
    refusal(
      400,
      C.ServerError,
      'unsupported-protocol-version',
      `Bad Request: MCP-Protocol-Version '${v.slice(0, 64)}' ${why}`,
    ),
  unsupportedMediaType: () =>
    refusal(
      415,
      C.ServerError,
      'unsupported-media-type',
      'Unsupported Media Type: Content-Type must be application/json (UTF-8)',
    ),
  notAcceptablePost: () =>
    refusal(
      406,
      C.ServerError,
      'not-acceptable',
      'Not Acceptable: Accept must admit application/json or text/event-stream',
    ),
  notAcceptableGet: () =>
    refusal(406, C.ServerError, 'not-acceptable', 'Not Acceptable: Accept must admit text/event-stream'),
  bodyTooLarge: (limit: number) =>
    refusal(
      413,
      C.ServerError,
      'body-too-large',
      `Payload Too Large: the body exceeds ${limit} bytes (server option maxBodyBytes)`,
      { connection: 'close' },
    ),
  /** A body whose shape crosses `jsonLimits` (jsonrpc/json-shape.ts), refused before it is parsed. */
  jsonTooComplex: (limit: 'depth' | 'keys' | 'values', max: number) =>
    refusal(
      400,
      C.InvalidRequest,
      { depth: 'json-too-deep', keys: 'json-too-many-keys', values: 'json-too-many-values' }[limit],
      `Invalid Request: the body ${
        {
          depth: `nests deeper than ${max} levels`,
          keys: `holds more than ${max} object members`,
          values: `holds more than ${max} values`,
        }[limit]
      } (server option jsonLimits.${{ depth: 'maxDepth', keys: 'maxKeys', values: 'maxValues' }[limit]})`,
    ),
  methodNotAllowed: (allow: string) =>
    refusal(405, C.ServerError, 'method-not-allowed', `Method Not Allowed (allowed: ${allow})`, { allow }),
  tooManySessions: (retryAfterS: number) =>
    refusal(503, C.ServerError, 'too-many-sessions', 'Service Unavailable: session limit reached', {
      'retry-after': String(retryAfterS),
    }),
  tooManyClientSessions: (limit: number, retryAfterS: number) =>
    refusal(
      429,
      C.ServerError,
      'client-session-limit',
      `Too Many Requests: this client already holds ${limit} sessions`,
      { 'retry-after': String(retryAfterS) },
    ),
  initializeRate: (retryAfterS: number) =>
    refusal(429, C.ServerError, 'initialize-rate', 'Too Many Requests: this client opens sessions too fast', {
      'retry-after': String(retryAfterS),
    }),
  shuttingDown: (retryAfterS: number) =>
    refusal(503, C.ServerError, 'shutting-down', 'Service Unavailable: the server is shutting down', {
      'retry-after': String(retryAfterS),
    }),
  /**
   * A request already dispatched and still running when a graceful close hit its deadline. No
   * Retry-After: unlike the other 503s it was not refused before dispatch, so a client must not
   * treat it as safe to re-send (RFC 9110 §9.2.2).
   */
  requestCut: () =>
    refusal(
      503,
      C.ServerError,
      'request-cut',
      'Service Unavailable: the server shut down before this request finished; it may have run',
    ),
  /** Cluster: the session's owner is alive (its lease holds) but cannot be reached now. */
  ownerUnavailable: () =>
    refusal(
      503,
      C.ServerError,
      'owner-unavailable',
      'Service Unavailable: the session owner cannot be reached',
      {
        'retry-after': '1',
      },
    ),
  /** Cluster: a forwarded request reached an instance that does not own the session; never forwarded twice. */
  misdirected: () =>
    refusal(421, C.ServerError, 'misdirected', 'Misdirected Request: this instance does not own the session'),
  /** Cluster: a request claiming to be forwarded whose signature does not verify. */
  forwardForbidden: () =>
    refusal(
      403,
      C.ServerError,
      'forward-forbidden',
      'Forbidden: not a forwarded request from a cluster member',
    ),
  clusterUnavailable: () =>
    refusal(
      503,
      C.ServerError,
      'cluster-unavailable',
      'Service Unavailable: the session directory cannot be reached',
      {
        'retry-after': '1',
      },
    ),
  storeUnavailable: () =>
    refusal(503, C.ServerError, 'store-unavailable', 'Service Unavailable: the event store did not answer', {
      'retry-after': '1',
    }),
  tooManyInflight: (limit: number) =>
    refusal(
      429,
      C.ServerError,
      'too-many-requests',
      `Too Many Requests: at most ${limit} requests in flight per session`,
      { 'retry-after': '1' },
    ),
  tooManyStreams: (limit: number) =>
    refusal(
      429,
      C.ServerError,
      'too-many-streams',
      `Too Many Requests: at most ${limit} open streams per session`,
      { 'retry-after': '1' },
    ),
  streamConflict: (retryAfterS: number) =>
    refusal(
      409,
      C.ServerError,
      'stream-conflict',
      'Conflict: this stream has a live connection that took over another one moments ago',
      { 'retry-after': String(retryAfterS) },
    ),
  /** `origin`, `host`: the values received (quoted and cut to 100 characters). */
  forbiddenOrigin: (origin: string, host: string | undefined) =>
    refusal(
      403,
      C.ServerError,
      'origin-not-allowed',
      `Forbidden: Origin ${quoted(origin)} not allowed${
        host === undefined ? '' : ` (Host ${quoted(host)})`
      }; list it in the server option allowedOrigins (sluice serve --allow-origin ORIGIN); without a list only same-origin pages are served, so behind a reverse proxy forward the client's Host (nginx: proxy_set_header Host $http_host;)`,
    ),
  /** RFC 9112 §3.2: more than one Host field line is a 400, whatever the names. */
  duplicateHost: () =>
    refusal(400, C.InvalidRequest, 'duplicate-host', 'Bad Request: more than one Host header field line'),
  forbiddenHost: (host: string | undefined) =>
    refusal(
      403,
      C.ServerError,
      'host-not-allowed',
      `Forbidden: Host ${
        host === undefined ? '(none)' : quoted(host)
      } not allowed on a loopback-bound server (DNS-rebinding guard); add the name to the server option allowedHosts (sluice serve --allow-host NAME), or behind a reverse proxy forward the client's Host (nginx: proxy_set_header Host $http_host;)`,
    ),
  unauthorized: (challenge: string) =>
    refusal(401, C.ServerError, 'unauthorized', 'Unauthorized', { 'www-authenticate': challenge }),
  /** A refusal `authenticate` or `AuthResult.authorize` decided (status, reason and headers its own). */
  denied: (d: { status: number; reason: string; message: string; headers?: Headers | undefined }) =>
    refusal(
      d.status,
      C.ServerError,
      d.reason,
      d.message,
      d.headers === undefined ? undefined : { ...d.headers },
    ),
  notFound: (endpointPath: string) =>
    refusal(404, C.MethodNotFound, 'not-found', `Not Found: the MCP endpoint is ${endpointPath}`),
  /** `code`: the stable SluiceError code of a misconfiguration, named so whoever sees the 500 knows where to look. */
  internalError: (code?: string) =>
    refusal(
      500,
      C.InternalError,
      'internal-error',
      code === undefined ? 'Internal error' : `Internal error (${code}; see the server log)`,
    ),
  resumeDeclined: (reason: 'malformed' | 'foreign' | 'unknown' | 'evicted') =>
    refusal(
      reason === 'evicted' ? 410 : 400,
      C.ServerError,
      `resume-${reason}`,
      {
        malformed: 'Last-Event-ID is not an event id issued by this server',
        foreign: 'Last-Event-ID belongs to another session',
        unknown: 'Last-Event-ID names no stream or event this session has',
        evicted: 'Gone: the events after Last-Event-ID are no longer buffered; re-send the request',
      }[reason],
    ),
} as const;
