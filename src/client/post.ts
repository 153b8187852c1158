/**
 * The POST path: one message POSTed, and its answer routed by the response's media type (JSON body, SSE stream
 * handed to the stream runner, or 202), including the transparent re-initialization after a 404.
 */

import { mediaType } from '../http/media-type.js';
import type { MessageKind } from '../jsonrpc/message.js';
import { answerChallenge } from './auth/answer.js';
import type { PendingRequest, TransportContext } from './context.js';
import {
  HttpStatusError,
  NetworkError,
  NoResponseError,
  NotIdempotentError,
  SessionExpiredError,
  TransportClosedError,
  UnexpectedContentTypeError,
} from './errors.js';
import { answeredSessionId, describe, discard, POST_ACCEPT, readJsonBody, statusError } from './http.js';
import {
  Canceller,
  type HttpResponse,
  isOk,
  MAX_STALE_RESENDS,
  StaleConnectionError,
} from './http-client.js';
import { receiveMessage } from './inbound.js';
import { modernRevisionOf, standardHeaders } from './modern.js';
import type { RequestId, WireMessage } from './wire.js';

/** Re-initializations a message waits for in a row before it goes out as it is (see sessionHeaders). */
const MAX_REINIT_WAITS = 3;

/** How often this message was already sent again, and why. */
export interface PostAttempt {
  /** Re-sent once after a 404 and a re-initialization. */
  readonly afterReinit: boolean;
  /** Re-sent after a 503 with Retry-After (at most once). */
  readonly afterRetryAfter: boolean;
  /** Re-sent (under a new wire id) after a stale connection. */
  readonly stale: number;
  /** Re-sent after a 401 and an authorization (at most once: a 401 means the request did not run). */
  readonly afterAuth: boolean;
  /** Re-sent after this many 403 `insufficient_scope` step-ups. */
  readonly stepUps: number;
  /** Re-sent with a resource server's new DPoP nonce. */
  readonly afterNonce: boolean;
}

const FIRST: PostAttempt = {
  afterReinit: false,
  afterRetryAfter: false,
  stale: 0,
  afterAuth: false,
  stepUps: 0,
  afterNonce: false,
};

/**
 * A copy of `entry`'s request under a new wire id, mapped back to the id the Client knows: the old id may
 * still be known to the server (R1–R3 forbid reusing an id in a session, and a copy still running there
 * would get the re-send refused as a duplicate).
 */
export function aliasedCopy(t: TransportContext, entry: PendingRequest): WireMessage {
  const id = entry.message.id;
  const wireId = `${String(id)}.sluice-resend-${t.nextResendNumber()}`;
  t.aliases.set(wireId, id);
  return { ...entry.message, id: wireId };
}

/**
 * POSTs one message and routes the answer by its media type (never by the method).
 */
export async function postMessage(
  t: TransportContext,
  wire: WireMessage,
  kind: MessageKind,
  entry: PendingRequest | undefined,
  onresumptiontoken?: (token: string) => void,
  attempt: PostAttempt = FIRST,
): Promise<void> {
  // A 2026-07-28-era message (its `_meta` names the revision) carries no session id: that era has none.
  const modern = entry !== undefined ? entry.modern : modernRevisionOf(wire);
  const isInitialize = wire.method === 'initialize' && modern === undefined;
  const withSession = !isInitialize && modern === undefined;
  const headers = withSession ? await sessionHeaders(t) : await t.headers(POST_ACCEPT, false, undefined);
  const sentWithSession = withSession ? headers['mcp-session-id'] : undefined;
  if (modern !== undefined) Object.assign(headers, t.paramHeaders.headersFor(wire));
  if (entry?.extraHeaders !== undefined) Object.assign(headers, entry.extraHeaders);
  if (modern !== undefined) Object.assign(headers, standardHeaders(wire, modern));
  headers['content-type'] = 'application/json';
  // Cancelled (requestSignal) while the headers were being built: never send it.
  if (modern !== undefined && entry !== undefined && t.pending.get(entry.message.id) !== entry) return;
  const controller = new Canceller();
  t.inflight.add(controller);
  if (entry !== undefined) entry.connection = controller;
  let response: HttpResponse;
  try {
    // Only a message that is not a request may go again as is after a stale connection; a request is
    // re-sent here, under a new wire id, and only when idempotent (RFC 9110 §9.2.2).
    response = await t.request('POST', headers, JSON.stringify(wire), controller, kind !== 'request');
  } catch (error) {
    t.inflight.delete(controller);
    if (entry !== undefined) entry.connection = undefined;
    if (t.closed) throw new TransportClosedError();
    // A modern request the caller aborted (its cancellation): nothing failed, nothing to report.
    if (modern !== undefined && entry !== undefined && t.pending.get(entry.message.id) !== entry) return;
    if (error instanceof StaleConnectionError && entry !== undefined) {
      if (!entry.idempotent) throw new NotIdempotentError(String(wire.method), entry.message.id, error.cause);
      if (attempt.stale < MAX_STALE_RESENDS) {
        // A 2026-07-28 request has no session, and the lost connection's close cancelled the first
        // copy on the server: it goes again under its own id, so a rejection body (which echoes the
        // id) is still recognised.
        const copy = modern !== undefined ? wire : aliasedCopy(t, entry);
        try {
          return await postMessage(t, copy, kind, entry, onresumptiontoken, {
            ...attempt,
            stale: attempt.stale + 1,
          });
        } catch (again) {
          t.aliases.delete(copy.id as RequestId);
          throw again;
        }
      }
    }
    throw new NetworkError(`POST ${t.url.href} failed: ${describe(error)}`, error);
  }
  if (entry !== undefined) entry.connection = undefined;
  let handedOff = false;
  // RFC 9449 §9 (as §8.2): a resource server may hand out its next DPoP nonce on any answer; taken
  // here, the next proof carries it and the server's `use_dpop_nonce` refusal is not met again.
  if (isOk(response)) t.auth?.rememberNonce(t.url, response.header('dpop-nonce'));
  try {
    if (!isOk(response)) {
      if (modern !== undefined && entry !== undefined && isModernRejection(response.status)) {
        return await receiveModernRejection(t, response, entry);
      }
      if ((response.status === 401 || response.status === 403) && t.auth !== undefined) {
        const next = await answerChallenge(t, 'POST', response, headers['authorization'], attempt);
        if (next !== undefined) {
          t.inflight.delete(controller);
          return await postMessage(t, wire, kind, entry, onresumptiontoken, next);
        }
      }
      if (response.status === 404 && sentWithSession !== undefined) {
        await discard(response);
        return await onSessionNotFound(t, wire, kind, entry, sentWithSession, attempt);
      }
      const wait = attempt.afterRetryAfter ? undefined : retryAfterWait(t, response);
      if (wait !== undefined) {
        // 503 + Retry-After: refused before dispatch (session cap, shutdown, an owner out of reach), so
        // sending it again is safe whatever the method (RFC 9110 §15.6.4, §10.2.3). Once, and only when the
        // server asks for at most maxRetryAfterMs.
        await discard(response);
        t.inflight.delete(controller);
        await pause(t, wait);
        return await postMessage(t, wire, kind, entry, onresumptiontoken, {
          ...attempt,
          afterRetryAfter: true,
        });
      }
      throw await statusError('POST', response, t.options.idleTimeoutMs);
    }
    if (isInitialize) {
      t.session.initialized(await answeredSessionId(response));
    }
    if (response.status === 202 || kind !== 'request' || entry === undefined) {
      await discard(response);
      if (wire.method === 'notifications/initialized' && response.status < 300) t.runner.openStandalone();
      // A request answered 202 gets its response later on the standalone GET stream; it stays pending.
      return;
    }
    if (t.pending.get(entry.message.id) !== entry) {
      // Cancelled while the POST was in flight (the Client has sent notifications/cancelled): its answer
      // is read by nobody, and a stream of it must not be adopted, or its end would be resumed.
      controller.abort();
      return;
    }
    const type = mediaType(response.header('content-type'));
    if (type === 'text/event-stream' && response.body !== null) {
      handedOff = true;
      t.runner.adoptPostStream(entry, response, controller, onresumptiontoken);
      return;
    }
    if (type === 'application/json') {
      await receiveJsonBody(t, response, entry.message.id);
      return;
    }
    await discard(response);
    throw new UnexpectedContentTypeError(response.header('content-type'));
  } finally {
    if (!handedOff) t.inflight.delete(controller);
  }
}

/**
 * Headers for a message of the session, built when no re-initialization is in progress: one clears the
 * session id until the new session is there, and a message sent meanwhile (a re-send after a lost stream,
 * a retry) would carry none and be refused (400). It waits for the new session and goes out with its id
 * (MCP 2025-11-25 basic/transports §"Session Management"). Building headers may await (a token provider),
 * during which a re-initialization may start: then they are built again.
 */
async function sessionHeaders(t: TransportContext): Promise<Record<string, string>> {
  for (let round = 1; ; round++) {
    // A re-initialization failed earlier and left no session: this request tries again (after the backoff)
    // rather than going out without a session id.
    const replacing = t.session.reinitializing ?? (t.session.lost ? t.reinitialize() : undefined);
    if (replacing !== undefined) {
      try {
        await replacing;
      } catch (error) {
        throw new SessionExpiredError(
          `session expired and re-initializing failed: ${describe(error)}`,
          error,
        );
      }
    }
    const headers = await t.headers(POST_ACCEPT, true, undefined);
    if (headers['mcp-session-id'] === undefined && t.session.lost) {
      throw new SessionExpiredError(
        'no session: re-initializing failed and is retried with the next request',
      );
    }
    if (t.session.reinitializing === undefined || round >= MAX_REINIT_WAITS) return headers;
  }
}

/**
 * The wait a 503 asks for with `Retry-After` (delta-seconds or an HTTP-date, RFC 9110 §10.2.3), when it is
 * within `maxRetryAfterMs`; undefined when the POST is not to be re-sent.
 */
function retryAfterWait(t: TransportContext, response: HttpResponse): number | undefined {
  if (response.status !== 503) return undefined;
  const ms = parseRetryAfter(response.header('retry-after'), t.options.clock.now());
  if (ms === undefined || ms > t.options.maxRetryAfterMs) return undefined;
  return ms;
}

/** `Retry-After` in ms from `now`, or undefined when absent or malformed. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at) || !/[a-z]/i.test(v)) return undefined;
  return Math.max(0, at - now);
}

/** Waits `ms`, ended early (as TransportClosedError) by close(). */
export function pause(t: TransportContext, ms: number): Promise<void> {
  const controller = new Canceller();
  t.inflight.add(controller);
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      t.options.clock.clearTimeout(timer);
      reject(new TransportClosedError());
    };
    const timer = t.options.clock.setTimeout(() => {
      controller.offAbort(onAbort);
      t.inflight.delete(controller);
      resolve();
    }, ms);
    controller.onAbort(onAbort);
  });
}

async function onSessionNotFound(
  t: TransportContext,
  wire: WireMessage,
  kind: MessageKind,
  entry: PendingRequest | undefined,
  sentWithSession: string,
  attempt: PostAttempt,
): Promise<void> {
  const retriedAfterReinit = attempt.afterReinit;
  if (!t.options.reinitializeOnSessionExpiry || retriedAfterReinit) {
    t.session.markGone();
    throw new SessionExpiredError(
      retriedAfterReinit
        ? `session not found (HTTP 404) again right after re-initializing; giving up on ${String(wire.method ?? 'message')}`
        : 'session not found (HTTP 404) and reinitializeOnSessionExpiry is off',
    );
  }
  // Another request may already be replacing the session (its sessionId is cleared meanwhile) or
  // have replaced it while this one was in flight: join the former, skip only the latter.
  if (t.session.reinitializing !== undefined || t.session.sessionId === sentWithSession) {
    try {
      await t.reinitialize();
    } catch (error) {
      t.session.markGone();
      throw new SessionExpiredError(`session expired and re-initializing failed: ${describe(error)}`, error);
    }
  }
  await postMessage(t, wire, kind, entry, undefined, { ...attempt, afterReinit: true });
}

async function receiveJsonBody(
  t: TransportContext,
  response: HttpResponse,
  requestId: RequestId,
): Promise<void> {
  const { maxEventBytes, idleTimeoutMs } = t.options;
  const parsed = await readJsonBody(response, maxEventBytes, idleTimeoutMs, 'the JSON body of the answer');
  if (Array.isArray(parsed)) {
    for (const item of parsed) receiveMessage(t, item as WireMessage);
  } else {
    receiveMessage(t, parsed as WireMessage);
  }
  // Still pending: the body answered something else. The request stays pending until whoever sent
  // it settles it with this error: send() for a first POST, or the re-send path (resend.ts), which
  // delivers it as the request's failure (deleting it here left a re-sent request settled by nothing).
  if (t.pending.has(requestId)) throw new NoResponseError(requestId);
}

/**
 * A 2026-07-28-era server answers a request it rejects with an HTTP 4xx whose body is the JSON-RPC error
 * (unsupported revision 400/-32022, header mismatch 400/-32020, unknown method 404/-32601 …; MCP 2026-07-28
 * basic/transports/streamable-http §"Error handling"). 401/403 stay transport errors (an auth layer acts on
 * them).
 */
function isModernRejection(status: number): boolean {
  return status >= 400 && status < 500 && status !== 401 && status !== 403;
}

/**
 * Delivers the JSON-RPC error in a modern rejection's body to the Client as the request's response, so an SDK v2
 * Client reads the code and decides (a -32022 names the revisions to retry with; anything else from a server that
 * only speaks the 2025 era — "Mcp-Session-Id required", id null — sends it back to the legacy handshake, as MCP
 * 2026-07-28 basic/transports/streamable-http §"Backwards compatibility" says). The error is delivered under the
 * request's id even when the server could not read it (id null). A body that is no JSON-RPC error fails the
 * request with an `HttpStatusError`, delivered the same way.
 */
async function receiveModernRejection(
  t: TransportContext,
  response: HttpResponse,
  entry: PendingRequest,
): Promise<void> {
  const text =
    (await response.text(t.options.maxEventBytes, t.options.idleTimeoutMs).catch(() => undefined)) ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const id = entry.message.id;
  const message = parsed as WireMessage | null | undefined;
  const error = message !== null && typeof message === 'object' ? message.error : undefined;
  const validError =
    error !== null &&
    typeof error === 'object' &&
    typeof (error as { code?: unknown }).code === 'number' &&
    typeof (error as { message?: unknown }).message === 'string';
  if (validError && (message?.id === id || message?.id === null)) {
    receiveMessage(t, { jsonrpc: '2.0', id, error });
    return;
  }
  t.fail(id, new HttpStatusError('POST', response.status, text));
}
