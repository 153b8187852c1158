/**
 * GET: the standalone stream for server-initiated messages, or the resumption of any stream of the
 * session after Last-Event-ID (2025-11-25 basic/transports §"Listening for Messages from the
 * Server" and §"Resumability and Redelivery"). A second GET replaces the older connection instead
 * of answering 409 (peers.md §3 E.22); a message is still delivered on exactly one connection.
 * A cursor that cannot be honoured is declined with its reason — never an empty 200, never a
 * replay from the beginning.
 */
import type { ReplayResult } from '../events/event-store.js';
import { RESUMED_COMMENT } from '../sse/encode.js';
import { parseEventId } from '../sse/event-id.js';
import type { Endpoint } from './endpoint.js';
import { SSE_HEADERS } from './event-stream.js';
import type { AuthResult } from './options.js';
import { Refusals, sendRefusal } from './refusal.js';
import { Session } from './session.js';
import type { Headers, RequestHead, ResponseSink } from './sink.js';
import type { StreamGuard } from './stream-guard.js';

export async function handleGet(
  ep: Endpoint,
  head: RequestHead,
  auth: AuthResult | undefined,
  sink: ResponseSink,
  headers: Headers,
  guard?: StreamGuard,
): Promise<void> {
  const found = ep.lookup(head, auth);
  if (!(found instanceof Session)) return sendRefusal(sink, found, headers);
  const session = found;
  const sseHeaders = { ...SSE_HEADERS, ...headers };
  const lastEventId = head.header('last-event-id');
  const declined = ep.counters.replaysDeclined;

  if (lastEventId === undefined) {
    if (!session.standalone.attached && session.openStreams >= ep.options.maxStreamsPerSession) {
      return sendRefusal(sink, Refusals.tooManyStreams(ep.options.maxStreamsPerSession), headers);
    }
    const r = await session.standalone.resume(sink, sseHeaders, undefined, guard);
    if (r === 'evicted' || r === 'unknown') sendRefusal(sink, Refusals.resumeDeclined(r), headers);
    else if (r === 'ended') sendRefusal(sink, Refusals.sessionNotFound(), headers);
    else if (r === 'unavailable') sendRefusal(sink, Refusals.storeUnavailable(), headers);
    return;
  }

  const cursor = parseEventId(lastEventId);
  if (cursor === undefined) {
    declined.malformed++;
    return sendRefusal(sink, Refusals.resumeDeclined('malformed'), headers);
  }
  if (cursor.tag !== session.tag) {
    declined.foreign++;
    return sendRefusal(sink, Refusals.resumeDeclined('foreign'), headers);
  }
  const stream = cursor.stream === 0 ? session.standalone : session.postStreams.get(cursor.stream);
  if (stream !== undefined) {
    const r = await stream.resume(sink, sseHeaders, cursor.seq, guard);
    if (r === 'ok') ep.counters.replaysServed++;
    else if (r === 'evicted' || r === 'unknown') {
      declined[r]++;
      sendRefusal(sink, Refusals.resumeDeclined(r), headers);
    } else if (r === 'ended') sendRefusal(sink, Refusals.sessionNotFound(), headers);
    else if (r === 'unavailable') sendRefusal(sink, Refusals.storeUnavailable(), headers);
    return;
  }
  // A finished POST stream: its events (and its response) are in the store for the grace period.
  let r: ReplayResult;
  try {
    r = await ep.store.replay(session.sessionKey, cursor.stream, cursor.seq);
  } catch {
    // Counted and logged by the guarded store; the client may retry the resume.
    if (session.ended) return sendRefusal(sink, Refusals.sessionNotFound(), headers);
    return sendRefusal(sink, Refusals.storeUnavailable(), headers);
  }
  if (session.ended) return sendRefusal(sink, Refusals.sessionNotFound(), headers);
  if (r.status !== 'ok') {
    declined[r.status]++;
    return sendRefusal(sink, Refusals.resumeDeclined(r.status), headers);
  }
  ep.counters.replaysServed++;
  let body = '';
  for (const e of r.events) body += e.frame;
  sink.head(200, sseHeaders);
  sink.end(body.length > 0 ? body : RESUMED_COMMENT);
}
