import { mediaType } from '../http/media-type.js';
import type { TransportContext } from './context.js';
import { MalformedMessageError, SessionExpiredError } from './errors.js';
import { answeredSessionId, discard, POST_ACCEPT, readJsonBody, statusError } from './http.js';
import { Canceller, type HttpResponse, isOk } from './http-client.js';
import { parseRetryAfter, pause } from './post.js';
import { readSse } from './sse-reader.js';
import type { WireMessage } from './wire.js';

/**
 * Replaces an expired session (HTTP 404): replays the Client's original `initialize` params without a session
 * header, adopts the new `Mcp-Session-Id` and protocol version, and sends `notifications/initialized`. The
 * InitializeResult is consumed here and never reaches the Client (it already has one, and a second would be
 * an unknown response id to the SDK `Protocol`).
 *
 * A replacement that fails (a 503 from a cluster still settling the dead owner's lease, a network error)
 * leaves the session lost (`ClientSession.lost`): the next request of the session runs this again, after a
 * backoff, instead of going out without a session id (2025-11-25 basic/transports §"Session Management").
 */
export async function reinitialize(t: TransportContext): Promise<void> {
  const session = t.session;
  if (session.initializeParams === undefined) {
    throw new SessionExpiredError('session expired before any initialize was sent; nothing to replay');
  }
  const wait = session.replaceDelay(t.options.clock.now());
  if (wait > 0) await pause(t, wait);
  let retryAfterMs: number | undefined;
  try {
    await handshake(t, (response) => {
      const ms = parseRetryAfter(response.header('retry-after'), t.options.clock.now());
      if (ms !== undefined) retryAfterMs = Math.min(ms, t.options.maxRetryAfterMs);
    });
  } catch (error) {
    session.replaceFailed(t.options.clock.now(), retryAfterMs);
    throw error;
  }
}

async function handshake(t: TransportContext, onRefused: (response: HttpResponse) => void): Promise<void> {
  const session = t.session;
  const id = session.beginReinit();
  const init = { jsonrpc: '2.0', id, method: 'initialize', params: session.initializeParams };
  const response = await postJson(t, init, false);
  if (!isOk(response)) {
    onRefused(response);
    throw await statusError('POST', response, t.options.idleTimeoutMs);
  }
  session.reinitialized(await answeredSessionId(response));
  const answer = await readAnswer(t, response, id);
  if (answer.error !== undefined || typeof answer.result !== 'object' || answer.result === null) {
    throw new SessionExpiredError(
      `re-initialize was refused: ${JSON.stringify(answer.error ?? answer.result)}`,
    );
  }
  const version = (answer.result as { protocolVersion?: unknown }).protocolVersion;
  if (typeof version === 'string') session.negotiated(version);
  const initialized = await postJson(t, { jsonrpc: '2.0', method: 'notifications/initialized' }, true);
  await discard(initialized);
  if (!isOk(initialized)) {
    onRefused(initialized);
    throw await statusError('POST', initialized, t.options.idleTimeoutMs);
  }
  session.replaced();
}

async function postJson(t: TransportContext, body: unknown, withSession: boolean): Promise<HttpResponse> {
  const headers = await t.headers(POST_ACCEPT, withSession, undefined);
  headers['content-type'] = 'application/json';
  const controller = new Canceller();
  t.inflight.add(controller);
  try {
    // The re-initialize request is not re-sent on a stale socket (it would open a second session);
    // notifications/initialized may be.
    const resendable = (body as { id?: unknown }).id === undefined;
    return await t.request('POST', headers, JSON.stringify(body), controller, resendable);
  } finally {
    t.inflight.delete(controller);
  }
}

/** Reads the response with `id` from a JSON or SSE body; other messages (e.g. log notifications) are dropped. */
async function readAnswer(t: TransportContext, response: HttpResponse, id: string): Promise<WireMessage> {
  const { maxEventBytes, idleTimeoutMs, clock } = t.options;
  const type = mediaType(response.header('content-type'));
  if (type === 'application/json') {
    const parsed = await readJsonBody(
      response,
      maxEventBytes,
      idleTimeoutMs,
      'the JSON body of the re-initialize answer',
    );
    const list = (Array.isArray(parsed) ? parsed : [parsed]) as WireMessage[];
    const found = list.find((m) => m !== null && typeof m === 'object' && m.id === id);
    if (found === undefined) throw new MalformedMessageError('re-initialize: no response in the JSON body');
    return found;
  }
  if (type === 'text/event-stream' && response.body !== null) {
    let found: WireMessage | undefined;
    const reader = response.body;
    // The read ends at the response: a server SHOULD close the stream after it but need not (MCP 2025-11-25
    // basic/transports §"Sending Messages to the Server"), and one that keeps it open with keep-alives would
    // otherwise hold the re-initialization, and every request waiting for it, forever.
    const done = new Canceller();
    await readSse(
      reader,
      {
        onId: () => {},
        onRetry: () => {},
        onEvent: (data) => {
          try {
            const m = JSON.parse(data) as WireMessage;
            if (m !== null && typeof m === 'object' && m.id === id) {
              found = m;
              done.abort();
            }
          } catch {
            // A malformed event during the re-initialize handshake is skipped like any other.
          }
        },
      },
      { maxEventBytes, idleTimeoutMs, clock, signal: done },
    );
    if (found === undefined)
      throw new MalformedMessageError('re-initialize: the SSE stream ended without a response');
    return found;
  }
  await discard(response);
  throw new MalformedMessageError(
    `re-initialize: unexpected Content-Type ${String(response.header('content-type'))}`,
  );
}
