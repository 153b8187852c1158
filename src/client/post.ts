/**
 * The POST path: one message POSTed, and its answer routed by the response's media type (JSON body, SSE stream
 * handed to the stream runner, or 202), including the transparent re-initialization after a 404.
 */

import { mediaType } from '../http/media-type.js';
import type { MessageKind } from '../jsonrpc/message.js';
import type { PendingRequest, TransportContext } from './context.js';
import {
  EventTooLargeError,
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
  const isInitialize = wire.method === 'initialize';
  const sentWithSession = isInitialize ? undefined : t.session.sessionId;
  const headers = await t.headers(POST_ACCEPT, !isInitialize, undefined);
  headers['content-type'] = 'application/json';
  const controller = new Canceller();
  t.inflight.add(controller);
  let response: HttpResponse;
  try {
    response = await t.request('POST', headers, JSON.stringify(wire), controller);
  } catch (error) {
    t.inflight.delete(controller);
    if (t.closed) throw new TransportClosedError();
    throw new NetworkError(`POST ${t.url.href} failed: ${describe(error)}`, error);
  }
  let handedOff = false;
  try {
    if (!isOk(response)) {
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
