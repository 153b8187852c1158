// The client transport's options, each with its documented default. Resolved and validated once, in
// resolve-options.ts.
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { IDEMPOTENCY_KEY_META } from '../jsonrpc/meta-keys.js';
import type { TokenAuthProvider } from './auth/token-provider.js';
import type { ClientClock, FetchLike } from './http-client.js';
import type { RedirectPolicy } from './redirect.js';
import type { ClientTracingOptions } from './tracing.js';

export type { ClientClock, FetchLike };

/** Extra request headers: a fixed record, or a (possibly async) function called before every HTTP request. */
export type HeadersOption =
  | Readonly<Record<string, string>>
  | (() => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>);

/** A bearer token, or a (possibly async) function called before every HTTP request (so refreshed tokens are used). */
export type TokenOption = string | (() => string | undefined | Promise<string | undefined>);

/** What a JSON-RPC request looks like to {@link StreamableHttpClientOptions.isIdempotent}. */
export interface OutgoingRequest {
  readonly method: string;
  readonly id: string | number;
  readonly params?: { readonly _meta?: Readonly<Record<string, unknown>> } & Readonly<
    Record<string, unknown>
  >;
}

/** Options of `new StreamableHttpClientTransport(url, options)`. Every field is optional. */
export interface StreamableHttpClientOptions {
  /**
   * The `fetch` used for every HTTP request. When it is set, the transport goes through `fetch` (the fetch
   * adapter) on every runtime.
   * @defaultValue on Node, `node:http`/`node:https` with a keep-alive agent per transport (no `fetch`); elsewhere
   *   `globalThis.fetch`
   */
  fetch?: FetchLike;
  /**
   * Extra headers sent on every request (POST, GET, DELETE). A function is called per request.
   * The transport's own headers (`Accept`, `Content-Type`, `Mcp-Session-Id`, `MCP-Protocol-Version`,
   * `Last-Event-ID`) win over these.
   * @defaultValue `{}`
   */
  headers?: HeadersOption;
  /**
   * Sent as `Authorization: Bearer <token>` on every request. A function is called per request, so a
   * token refreshed by your own code is picked up by the next reconnect. 401 and 403 surface as
   * `UnauthorizedError` / `ForbiddenError`; OAuth flows are out of scope.
   * @defaultValue none
   */
  token?: TokenOption;
  /**
   * OAuth 2.1 for servers that require it (MCP basic/authorization), exactly as the SDK's
   * `StreamableHTTPClientTransport` takes it: an `OAuthClientProvider` from `@modelcontextprotocol/sdk/client/auth.js`
   * that stores tokens, client information and the PKCE verifier and sends the user to the authorization URL. On a
   * 401 the transport discovers the authorization server, registers if needed, refreshes or authorizes (one flow at
   * a time) and re-sends the request once; tokens are refreshed before they expire; a 403 `insufficient_scope`
   * re-authorizes with the challenged scopes at most {@link maxStepUps} times. Without
   * {@link waitForAuthorizationResponse}, a request that needs the user fails with `UnauthorizedError` (reason
   * `authorization-required`) after `redirectToAuthorization`; call `transport.finishAuth(…)`, then retry. Not
   * together with `token`. SDK v2's `OAuthClientProvider` is taken the same way, and so is its minimal
   * `AuthProvider` (`{ token(), onUnauthorized? }`): `token()` before every request, `onUnauthorized` once per 401
   * however many requests hit it, then the request once more. See docs/authorization.md.
   * @defaultValue none (401 surfaces as `UnauthorizedError`, reason `no-auth-provider`)
   */
  authProvider?: OAuthClientProvider | TokenAuthProvider;
  /**
   * Called after `authProvider.redirectToAuthorization(url)`; resolves to the redirect URI the authorization server
   * sent the user agent back to (with `code`, `state`, `iss`). The transport then checks it (state, RFC 9207 `iss`),
   * exchanges the code and re-sends the request that needed authorization, so the caller never sees the 401. A
   * loopback listener (`sluice login`) or a headless test supplies it.
   * @defaultValue none (see {@link authProvider})
   */
  waitForAuthorizationResponse?: () => Promise<URL | string>;
  /**
   * Re-authorizations for one request answered 403 `insufficient_scope` before it fails with
   * `AuthorizationError` (reason `step-up-exhausted`).
   * @defaultValue `2`
   */
  maxStepUps?: number;
  /**
   * Ask for DPoP-bound tokens (RFC 9449) when the authorization server and the resource server both take them.
   * The proof key lives as long as the transport, so set `false` when the provider stores tokens for another
   * process to use (`sluice login` does): a bound token is useless without its key.
   * @defaultValue `true`
   */
  dpop?: boolean;
  /**
   * Which redirects of the transport's requests are followed. `'same-origin'`: those that keep the method and stay
   * within the origin (or only upgrade `http:` to `https:` on the same host); any other fails the request with
   * `HttpStatusError` naming the target. `'follow'`: also those to another origin, except from `https:` to
   * `http:`, without `Authorization`, `DPoP` and `Cookie` (as fetch drops them) but with the session id and your
   * `headers`. The SDK's option of the same name; unlike its `'follow'`, a 301/302/303 of a POST is never
   * followed (it would become a GET without the message). The OAuth client's own requests never follow one.
   * @defaultValue `'same-origin'`
   */
  redirectPolicy?: RedirectPolicy;
  /**
   * Lift the OAuth client's URL policy, for development against an authorization server without TLS or on an
   * internal address. By default every URL the OAuth client fetches or sends the user to — the challenge's
   * `resource_metadata`, the authorization server, its endpoints — must be `https:` (`http:` only on a loopback
   * host), and may name a loopback, private or link-local address literal only when the MCP server's own URL
   * names one of the same kind; URLs on the MCP server's own origin are always allowed. A refused URL fails the
   * flow with `AuthorizationError` (reason `url-refused`) before anything is sent to it (MCP security best
   * practices §"Server-Side Request Forgery"; OAuth 2.1 §1.5).
   * @defaultValue `false`
   */
  insecureOAuthUrls?: boolean;
  /**
   * An existing session id to resume (the SDK `Client.connect()` then skips `initialize`).
   * @defaultValue none
   */
  sessionId?: string;
  /**
   * The largest SSE event (or JSON body) accepted, in bytes. A larger one fails the requests its
   * stream owed with `EventTooLargeError` and the stream is not resumed (it would replay the same event).
   * @defaultValue `16 * 1024 * 1024`
   */
  maxEventBytes?: number;
  /**
   * An open SSE stream on which no byte arrives (keep-alive comments count) for this long is treated as
   * dead and resumed. Must exceed the server's keep-alive interval (15 s for Sluice and the SDK). It also bounds
   * the silence of every other answer the transport reads: a JSON body, and each answer of an authorization
   * server during an OAuth flow (its head, then each part of its body).
   * @defaultValue `60_000`
   */
  idleTimeoutMs?: number;
  /**
   * First reconnection delay when the server gave no `retry:`. Later ones grow ×2 up to
   * {@link maxReconnectDelayMs}, each drawn uniformly from [delay/2, delay] ("equal jitter"); a server's
   * `retry:` is the first delay and the floor of the later ones, at most {@link maxReconnectDelayMs}.
   * @defaultValue `1_000`
   */
  initialReconnectDelayMs?: number;
  /**
   * Cap of the backoff delay, and of a server's `retry:` (a hostile one could otherwise overflow the timer into
   * an immediate reconnect, or park a stream for weeks).
   * @defaultValue `30_000`
   */
  maxReconnectDelayMs?: number;
  /**
   * Consecutive reconnection attempts of one stream before giving up. An attempt counts as long as the
   * stream makes no progress: the counter resets only when a reconnected stream delivers a message under an
   * event id it has not seen (any message, from a server that gives no ids) or stays open for
   * {@link stableConnectionMs} — a server that keeps closing streams gracefully without sending anything
   * new, or that replays the same events on every resume, cannot keep the client looping forever. With
   * the default delays five attempts span at least 15.5 s (16 s under Sluice's `retry: 1000`), longer
   * than a Sluice cluster's default owner lease (10 s), so a resume of a stream whose owner was killed
   * gets the definite owner-lost answer.
   * @defaultValue `5`
   */
  maxReconnectAttempts?: number;
  /**
   * A connection that stays open this long counts as healthy and resets its stream's attempt counter.
   * @defaultValue `30_000`
   */
  stableConnectionMs?: number;
  /**
   * Bound of the `DELETE` sent by `close()`, building its headers included.
   * @defaultValue `5_000`
   */
  closeTimeoutMs?: number;
  /**
   * On HTTP 404 to a request that carried the session id: re-initialize transparently (replaying the
   * original `initialize` params), send `notifications/initialized`, then retry the request once.
   * @defaultValue `true`
   */
  reinitializeOnSessionExpiry?: boolean;
  /**
   * A POST answered 503 with `Retry-After` was refused before dispatch (session cap, shutdown), so it is sent
   * again once after that wait, whatever the method, when the wait is at most this many ms; a longer one fails
   * at once with `HttpStatusError` (503). `0` turns the retry off.
   * @defaultValue `10_000`
   */
  maxRetryAfterMs?: number;
  /**
   * Open the standalone GET stream for server-initiated messages once `notifications/initialized` is accepted.
   * @defaultValue `true`
   */
  openStandaloneStream?: boolean;
  /**
   * While the standalone GET stream is being opened, later messages wait for its answer (its headers, a refusal
   * or an error), for at most this many ms. A server that sends a request or notification on the GET stream
   * as soon as a tool runs (the SDK v1 server's `server.request()` outside a request context) drops it when no
   * GET stream is open yet: the spec lets it (2025-11-25 basic/transports §"Listening for Messages from the
   * Server"), and the client would wait forever for a request it never saw. `0` sends at once.
   * @defaultValue `500`
   */
  standaloneReadyWaitMs?: number;
  /**
   * Methods that are always safe to re-send when a stream is lost and cannot be resumed. Any other request
   * is re-sent only when its `params._meta` carries {@link IDEMPOTENCY_KEY_META}.
   * @defaultValue `['ping', 'tools/list', 'resources/list', 'resources/templates/list', 'resources/read',
   *   'prompts/list', 'prompts/get', 'completion/complete']`
   */
  idempotentMethods?: readonly string[];
  /**
   * Overrides the idempotency decision entirely.
   * @defaultValue method in {@link idempotentMethods}, or an idempotency key in `params._meta`
   */
  isIdempotent?: (request: OutgoingRequest) => boolean;
  /**
   * Opt-in fast dispatch: the SDK `Client` (or any `Protocol`) this transport is connected to. When it
   * exposes `_onresponse`, `_onnotification` and `_onrequest` and is connected to this transport, incoming
   * messages (already classified here with plain property checks) are handed straight to those methods,
   * skipping `Protocol._onmessage`, which runs two or three *failing* zod guards (`isJSONRPCResultResponse ||
   * isJSONRPCErrorResponse`, then `isJSONRPCRequest`) on every notification — tens of µs each. Falls back to
   * `onmessage` whenever the methods are missing or the protocol is attached to another transport. A wrapper
   * installed on `transport.onmessage` before `connect()` is bypassed on this path.
   * @defaultValue none (every message goes through `onmessage`)
   */
  protocol?: object;
  /**
   * OpenTelemetry (docs/tracing.md): your `@opentelemetry/api` module (`{ api }`; optionally a tracer and a
   * meter). A CLIENT span per request, its context injected into `params._meta` and the `traceparent` header,
   * and the `mcp.client.*.duration` metrics. With no tracer provider registered it does nothing.
   * @defaultValue off
   */
  tracing?: ClientTracingOptions | false;
  /**
   * Clock and timers.
   * @defaultValue `Date.now`, `globalThis.setTimeout`, `globalThis.clearTimeout`
   */
  clock?: ClientClock;
  /**
   * Source of randomness for backoff jitter, in [0, 1).
   * @defaultValue `Math.random`
   */
  random?: () => number;
}

/** The `_meta` key that marks a request as safe to re-send: `"io.sluice/idempotencyKey": "<non-empty string>"`. */
export { IDEMPOTENCY_KEY_META };
