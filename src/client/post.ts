/**
 * The POST path: one message POSTed, and its answer routed by the response's media type (JSON body, SSE stream
 * handed to the stream runner, or 202), including the transparent re-initialization after a 404.
 */

import { mediaType } from '../http/media-type.js';
import type { MessageKind } from '../jsonrpc/message.js';
import type { PendingRequest, TransportContext } from './context.js';
import {
  EventTooLargeError,
  HttpStatusError,
  MalformedMessageError,
  NetworkError,
  NoResponseError,
  SessionExpiredError,
  TransportClosedError,
  UnexpectedContentTypeError,
} from './errors.js';
import { describe, discard, POST_ACCEPT, statusError } from './http.js';
import { Canceller, type HttpResponse, isOk } from './http-client.js';
import { receiveMessage } from './inbound.js';
import { modernRevisionOf, standardHeaders } from './modern.js';
import type { RequestId, WireMessage } from './wire.js';

/**
 * POSTs one message and routes the answer by its media type (never by the method).
 */
export async function postMessage(
  t: TransportContext,
  wire: WireMessage,
  kind: MessageKind,
  entry: PendingRequest | undefined,
  onresumptiontoken?: (token: string) => void,
  retriedAfterReinit = false,
): Promise<void> {
  // A 2026-07-28-era message (its `_meta` names the revision) carries no session id: that era has none.
  const modern = entry !== undefined ? entry.modern : modernRevisionOf(wire);
  const isInitialize = wire.method === 'initialize' && modern === undefined;
  const sentWithSession = isInitialize || modern !== undefined ? undefined : t.session.sessionId;
  const headers = await t.headers(POST_ACCEPT, !isInitialize && modern === undefined, undefined);
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
    response = await t.request('POST', headers, JSON.stringify(wire), controller);
  } catch (error) {
    t.inflight.delete(controller);
    if (entry !== undefined) entry.connection = undefined;
    if (t.closed) throw new TransportClosedError();
    // A modern request the caller aborted (its cancellation): nothing failed, nothing to report.
    if (modern !== undefined && entry !== undefined && t.pending.get(entry.message.id) !== entry) return;
    throw new NetworkError(`POST ${t.url.href} failed: ${describe(error)}`, error);
  }
  if (entry !== undefined) entry.connection = undefined;
  let handedOff = false;
  try {
    if (!isOk(response)) {
      if (modern !== undefined && entry !== undefined && isModernRejection(response.status)) {
        return await receiveModernRejection(t, response, entry);
      }
      if (response.status === 404 && sentWithSession !== undefined) {
        await discard(response);
        return await onSessionNotFound(t, wire, kind, entry, sentWithSession, retriedAfterReinit);
      }
      throw await statusError('POST', response);
    }
    if (isInitialize) {
      t.session.initialized(response.header('mcp-session-id'));
    }
    if (response.status === 202 || kind !== 'request' || entry === undefined) {
      await discard(response);
      if (wire.method === 'notifications/initialized' && response.status < 300) t.runner.openStandalone();
      // A request answered 202 gets its response later on the standalone GET stream; it stays pending.
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

async function onSessionNotFound(
  t: TransportContext,
  wire: WireMessage,
  kind: MessageKind,
  entry: PendingRequest | undefined,
  sentWithSession: string,
  retriedAfterReinit: boolean,
): Promise<void> {
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
  await postMessage(t, wire, kind, entry, undefined, true);
}

async function receiveJsonBody(
  t: TransportContext,
  response: HttpResponse,
  requestId: RequestId,
): Promise<void> {
  const text = await response.text(t.options.maxEventBytes);
  if (text === undefined) throw new EventTooLargeError(t.options.maxEventBytes);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new MalformedMessageError('the JSON response body is not valid JSON', error);
  }
  if (Array.isArray(parsed)) {
    for (const item of parsed) receiveMessage(t, item as WireMessage);
  } else {
    receiveMessage(t, parsed as WireMessage);
  }
  if (t.pending.has(requestId)) {
    t.pending.delete(requestId);
    throw new NoResponseError(requestId);
  }
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
  const text = (await response.text(t.options.maxEventBytes).catch(() => undefined)) ?? '';
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
