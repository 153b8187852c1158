/**
 * Every error the Sluice client raises, in one catalogue. Each class has a stable string `code`
 * (never reused, never renamed) so callers can branch on `err.code` instead of message text.
 *
 * Where an error fails a request asynchronously (a stream died and could not be resumed), the
 * transport delivers a JSON-RPC error response for that request id to the SDK `Protocol`, whose
 * pending promise rejects with an `McpError` carrying `{ code: -32000, data: { sluiceCode } }`,
 * and it also reports the typed error itself to `onerror`.
 */

/**
 * An impossible constructor option is the one error shared with the server side: the same
 * `InvalidOptionError` class (code `SLUICE_INVALID_OPTION`, a `SluiceError`), owned by src/errors.ts,
 * which imports nothing and so is safe in the browser bundle.
 */
export { InvalidOptionError } from '../errors.js';

/** The stable codes of {@link SluiceClientError}. */
export type SluiceClientErrorCode =
  | 'SLUICE_CLIENT_NOT_STARTED'
  | 'SLUICE_CLIENT_ALREADY_STARTED'
  | 'SLUICE_CLIENT_CLOSED'
  | 'SLUICE_CLIENT_NETWORK'
  | 'SLUICE_CLIENT_HTTP_STATUS'
  | 'SLUICE_CLIENT_UNAUTHORIZED'
  | 'SLUICE_CLIENT_FORBIDDEN'
  | 'SLUICE_CLIENT_UNEXPECTED_CONTENT_TYPE'
  | 'SLUICE_CLIENT_MALFORMED_MESSAGE'
  | 'SLUICE_CLIENT_EVENT_TOO_LARGE'
  | 'SLUICE_CLIENT_IDLE_TIMEOUT'
  | 'SLUICE_CLIENT_SESSION_EXPIRED'
  | 'SLUICE_CLIENT_RESUME_DECLINED'
  | 'SLUICE_CLIENT_RESUME_IMPOSSIBLE'
  | 'SLUICE_CLIENT_RESUME_EXHAUSTED'
  | 'SLUICE_CLIENT_NO_RESPONSE'
  | 'SLUICE_CLIENT_NOT_IDEMPOTENT'
  | 'SLUICE_CLIENT_PARTIAL_SEQUENCE'
  | 'SLUICE_CLIENT_REQUEST_LOST'
  | 'SLUICE_CLIENT_INPUT_ROUNDS_EXCEEDED'
  | 'SLUICE_CLIENT_INPUT_UNSUPPORTED'
  | 'SLUICE_CLIENT_AUTHORIZATION'
  | 'SLUICE_CLIENT_TASK_FAILED'
  | 'SLUICE_CLIENT_TASK_CANCELLED'
  | 'SLUICE_CLIENT_TASK_EXPIRED'
  | 'SLUICE_CLIENT_TASK_NOT_FOUND'
  | 'SLUICE_CLIENT_TASK_UNREACHABLE'
  | 'SLUICE_CLIENT_TASK_INPUT_REQUIRED';

/**
 * JSON-RPC error code used for the synthetic error responses the transport delivers when it has
 * to fail a request (the SDK's `ErrorCode.ConnectionClosed`, in the legacy -32000..-32019 range).
 */
export const TRANSPORT_FAILURE_JSONRPC_CODE = -32000;

/** Base class of every error thrown or reported by the Sluice client. */
export class SluiceClientError extends Error {
  readonly code: SluiceClientErrorCode;
  constructor(code: SluiceClientErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** `send()` was called before `start()` (the SDK `Client.connect()` calls `start()` for you). */
export class NotStartedError extends SluiceClientError {
  constructor() {
    super('SLUICE_CLIENT_NOT_STARTED', 'transport not started: call start() (Client.connect() does) first');
  }
}

/** `start()` was called twice (the SDK `Client.connect()` calls it; do not call it yourself as well). */
export class AlreadyStartedError extends SluiceClientError {
  constructor() {
    super(
      'SLUICE_CLIENT_ALREADY_STARTED',
      'StreamableHttpClientTransport already started (Client.connect() calls start() for you)',
    );
  }
}

/** The transport was closed; nothing more can be sent. */
export class TransportClosedError extends SluiceClientError {
  constructor() {
    super('SLUICE_CLIENT_CLOSED', 'transport is closed');
  }
}

/** `fetch` itself failed (DNS, refused connection, reset before the status line, …). */
export class NetworkError extends SluiceClientError {
  constructor(message: string, cause: unknown) {
    super('SLUICE_CLIENT_NETWORK', message, { cause });
  }
}

/** The server answered with an HTTP status the transport cannot use. */
export class HttpStatusError extends SluiceClientError {
  readonly status: number;
  readonly method: string;
  /** The first 512 characters of the response body, for diagnostics. */
  readonly body: string;
  constructor(
    method: string,
    status: number,
    body: string,
    code: SluiceClientErrorCode = 'SLUICE_CLIENT_HTTP_STATUS',
    /** Why the transport could not use the answer, when the status alone does not say (a redirect not followed). */
    note?: string,
  ) {
    const detail = note !== undefined ? ` (${note})` : body.length > 0 ? `: ${body.slice(0, 200)}` : '';
    super(code, `${method} answered HTTP ${status}${detail}`);
    this.status = status;
    this.method = method;
    this.body = body.slice(0, 512);
  }
}

/**
 * Why a request ended with HTTP 401:
 * - `no-auth-provider`: the transport has no `authProvider`, so it cannot authorize (the challenge is in
 *   `wwwAuthenticate` for a layer above);
 * - `authorization-required`: the user must authorize: `authProvider.redirectToAuthorization` was called; call
 *   `transport.finishAuth(…)` with the result, then retry;
 * - `rejected-after-authorization`: the server refused the token the flow had just obtained.
 */
export type UnauthorizedReason =
  | 'no-auth-provider'
  | 'authorization-required'
  | 'rejected-after-authorization';

/** HTTP 401. `wwwAuthenticate` carries the challenge; `reason` says what the transport did about it. */
export class UnauthorizedError extends HttpStatusError {
  readonly wwwAuthenticate: string | undefined;
  readonly reason: UnauthorizedReason;
  constructor(
    method: string,
    body: string,
    wwwAuthenticate: string | undefined,
    reason: UnauthorizedReason = 'no-auth-provider',
  ) {
    super(method, 401, body, 'SLUICE_CLIENT_UNAUTHORIZED');
    this.wwwAuthenticate = wwwAuthenticate;
    this.reason = reason;
  }
}

/**
 * Why the OAuth client refused to go on (MCP basic/authorization; each names the rule it enforces):
 * - `discovery-failed`: no usable protected resource or authorization server metadata;
 * - `resource-mismatch`: the protected resource metadata is for another resource (RFC 9728 §3.3);
 * - `metadata-issuer-mismatch`: the authorization server metadata names another issuer (RFC 8414 §3.3);
 * - `pkce-unsupported`: the authorization server does not advertise S256 in `code_challenge_methods_supported`;
 * - `no-client`: no pre-registered client, no client ID metadata document support, and no registration endpoint;
 * - `registration-failed`: dynamic client registration (RFC 7591) was refused or answered nonsense;
 * - `authorization-denied`: the authorization response carried an `error` (RFC 6749 §4.1.2.1);
 * - `state-mismatch`: the authorization response's `state` is not the one sent;
 * - `iss-missing`, `iss-mismatch`: the authorization response's `iss` is absent though advertised, or names
 *   another issuer (RFC 9207 §2.4);
 * - `no-pending-authorization`: `finishAuth` was called with no authorization in progress;
 * - `token-request-failed`, `invalid-token-response`, `unsupported-token-type`: the token endpoint refused, or
 *   answered without a usable Bearer token;
 * - `step-up-exhausted`: 403 `insufficient_scope` persisted after the bounded number of re-authorizations;
 * - `redirect-unavailable`: the provider has no `redirectUrl` and no non-interactive grant.
 */
export type AuthorizationRefusal =
  | 'discovery-failed'
  | 'resource-mismatch'
  | 'metadata-issuer-mismatch'
  | 'pkce-unsupported'
  | 'no-client'
  | 'registration-failed'
  | 'authorization-denied'
  | 'state-mismatch'
  | 'iss-missing'
  | 'iss-mismatch'
  | 'no-pending-authorization'
  | 'token-request-failed'
  | 'invalid-token-response'
  | 'unsupported-token-type'
  | 'step-up-exhausted'
  | 'redirect-unavailable'
  | 'url-refused';

/** The OAuth client refused to continue an authorization; `reason` is stable. Never carries a token. */
export class AuthorizationError extends SluiceClientError {
  readonly reason: AuthorizationRefusal;
  constructor(reason: AuthorizationRefusal, message: string, cause?: unknown) {
    super('SLUICE_CLIENT_AUTHORIZATION', `${message} [${reason}]`, { cause });
    this.reason = reason;
  }
}

/** HTTP 403 (insufficient scope, or an Origin/Host the server refuses). */
export class ForbiddenError extends HttpStatusError {
  readonly wwwAuthenticate: string | undefined;
  constructor(method: string, body: string, wwwAuthenticate: string | undefined) {
    super(method, 403, body, 'SLUICE_CLIENT_FORBIDDEN');
    this.wwwAuthenticate = wwwAuthenticate;
  }
}

/** A 2xx answer to a request whose `Content-Type` is neither JSON nor SSE. */
export class UnexpectedContentTypeError extends SluiceClientError {
  readonly contentType: string | null;
  constructor(contentType: string | null) {
    super(
      'SLUICE_CLIENT_UNEXPECTED_CONTENT_TYPE',
      `unexpected response Content-Type: ${String(contentType)}`,
    );
    this.contentType = contentType;
  }
}

/** An SSE `data` payload or JSON body that is not a JSON-RPC message. The message is skipped. */
export class MalformedMessageError extends SluiceClientError {
  constructor(message: string, cause?: unknown) {
    super('SLUICE_CLIENT_MALFORMED_MESSAGE', message, { cause });
  }
}

/** One SSE event (or one JSON body) exceeded `maxEventBytes`. The stream is abandoned, not resumed. */
export class EventTooLargeError extends SluiceClientError {
  readonly limit: number;
  constructor(limit: number) {
    super('SLUICE_CLIENT_EVENT_TOO_LARGE', `an SSE event or JSON body exceeded maxEventBytes (${limit})`);
    this.limit = limit;
  }
}

/** No byte (keep-alive comments included) arrived on an SSE stream for `idleTimeoutMs`. It is resumed. */
export class IdleTimeoutError extends SluiceClientError {
  readonly idleMs: number;
  /** `what`: where the bytes stopped (an SSE stream unless said otherwise). */
  constructor(idleMs: number, what = 'an SSE stream') {
    super('SLUICE_CLIENT_IDLE_TIMEOUT', `no bytes on ${what} for ${idleMs} ms; treating it as dead`);
    this.idleMs = idleMs;
  }
}

/** The session expired (404) and re-initializing plus retrying the request once did not help. */
export class SessionExpiredError extends SluiceClientError {
  constructor(message: string, cause?: unknown) {
    super('SLUICE_CLIENT_SESSION_EXPIRED', message, { cause });
  }
}

/** The server declined to resume a stream (4xx on the GET with `Last-Event-ID`) and the request was not idempotent. */
export class ResumeDeclinedError extends SluiceClientError {
  readonly status: number;
  constructor(status: number, requestId: string | number | undefined) {
    super(
      'SLUICE_CLIENT_RESUME_DECLINED',
      `the server declined to resume the stream (HTTP ${status})${describe(requestId)}; the request is not ` +
        'marked idempotent, so it was not re-sent',
    );
    this.status = status;
  }
}

/** The stream ended before the response and carried no event id, so it cannot be resumed; not idempotent. */
export class ResumeImpossibleError extends SluiceClientError {
  constructor(requestId: string | number | undefined) {
    super(
      'SLUICE_CLIENT_RESUME_IMPOSSIBLE',
      `the stream ended before the response${describe(requestId)} and carried no event id to resume from; ` +
        'the request is not marked idempotent, so it was not re-sent',
    );
  }
}

/** `maxReconnectAttempts` consecutive reconnections failed or made no progress. */
export class ResumeExhaustedError extends SluiceClientError {
  readonly attempts: number;
  constructor(attempts: number, cause?: unknown) {
    super('SLUICE_CLIENT_RESUME_EXHAUSTED', `gave up resuming a stream after ${attempts} attempts`, {
      cause,
    });
    this.attempts = attempts;
  }
}

/** A JSON response body that did not contain the response to the request that was POSTed. */
export class NoResponseError extends SluiceClientError {
  constructor(requestId: string | number) {
    super(
      'SLUICE_CLIENT_NO_RESPONSE',
      `the server's JSON body had no response for request ${String(requestId)}`,
    );
  }
}

/**
 * The connection failed after the request was sent and before any response byte (a proxy that died after
 * forwarding it, a server that went away): the server may already be running it. The request is not marked
 * idempotent, so it was not re-sent (RFC 9110 §9.2.2: only idempotent requests may be retried automatically).
 */
export class NotIdempotentError extends SluiceClientError {
  readonly method: string;
  constructor(method: string, requestId: string | number | undefined, cause: unknown) {
    super(
      'SLUICE_CLIENT_NOT_IDEMPOTENT',
      `the connection failed after ${method}${describe(requestId)} was sent and before any response; the ` +
        'server may have run it, and it is not marked idempotent, so it was not re-sent',
      { cause },
    );
    this.method = method;
  }
}

/**
 * A 2026-07-28-era request's response stream broke before its response. That era has no resumption and no
 * session: "a broken response stream loses the in-flight request" and the client must re-issue it as a new
 * request with a new id (MCP 2026-07-28 basic/transports/streamable-http §"Response streams"). Raised at once,
 * never after a timeout. Whether re-issuing is safe is the caller's call; an idempotency key in `_meta` still
 * lets the server recognise the repeat.
 */
export class RequestLostError extends SluiceClientError {
  constructor(requestId: string | number | undefined, cause?: unknown) {
    super(
      'SLUICE_CLIENT_REQUEST_LOST',
      `the response stream${describe(requestId)} broke before its response; the 2026-07-28 era has no ` +
        'resumption, so the request was lost (re-issue it as a new request if that is safe)',
      { cause },
    );
  }
}

function describe(requestId: string | number | undefined): string {
  return requestId === undefined ? '' : ` for request ${String(requestId)}`;
}
