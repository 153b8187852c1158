/**
 * GET: the standalone stream for server-initiated messages, or the resumption of any stream of the
 * session after Last-Event-ID (2025-11-25 basic/transports §"Listening for Messages from the
 * Server" and §"Resumability and Redelivery"). A cursor that cannot be honoured is declined with
 * its reason — never an empty 200, never a replay from the beginning.
 *
 * A GET for a stream that already has a live connection (see {@link takeover}): the spec lets a
 * client hold several streams (§"Multiple Connections") but a message goes out on one connection
 * only, so one stream has one connection. Always refusing the newcomer (409, as the official SDKs
 * do) strands a client whose old connection a proxy killed without the server noticing: every
 * reconnect is refused until a keepalive write fails. Always replacing lets a client with two
 * reconnect loops (the SDK client does this when a resuming GET ends before its first event: it
 * forgets the cursor and opens a second standalone GET) displace itself forever, one GET per
 * `retry:`. So a newcomer takes over at once, unless the live connection itself took over another
 * one less than {@link takeoverAfterMs} ago and is not stalled: then it gets 409 + Retry-After. At
 * most one takeover per stream per that window, whatever the client does; the loop's losing side
 * sees 409s and gives up (the SDK client after two).
 */
import type { ReplayResult } from '../../events/event-store.js';
import { RESUMED_COMMENT } from '../../sse/encode.js';
import { encodeEventId, parseEventId } from '../../sse/event-id.js';
import type { AuthResult } from '../options.js';
import { type Refusal, Refusals, sendRefusal } from '../pipeline/refusal.js';
import type { Headers, RequestHead, ResponseSink } from '../pipeline/sink.js';
import type { EventStream } from '../stream/event-stream.js';
import { resumePrimer } from '../stream/resume-primer.js';
import { SSE_HEADERS } from '../stream/stream-context.js';
import type { StreamGuard } from '../stream/stream-guard.js';
import { Session } from './session.js';
import type { Sessions } from './sessions.js';

export async function handleGet(
  reg: Sessions,
  head: RequestHead,
  auth: AuthResult | undefined,
  sink: ResponseSink,
  headers: Headers,
  guard?: StreamGuard,
): Promise<void> {
  const found = reg.lookup(head, auth);
  if (!(found instanceof Session)) return sendRefusal(sink, found, headers);
  const session = found;
  const sseHeaders = { ...SSE_HEADERS, ...headers };
  const lastEventId = head.header('last-event-id');
  const declined = reg.core.counters.replaysDeclined;

  if (lastEventId === undefined) {
    if (!session.standalone.attached && session.openStreams >= reg.core.options.maxStreamsPerSession) {
      return sendRefusal(sink, Refusals.tooManyStreams(reg.core.options.maxStreamsPerSession), headers);
    }
    const conflict = takeover(reg, session.standalone);
    if (conflict !== undefined) return sendRefusal(sink, conflict, headers);
    const replacing = session.standalone.attached;
    const r = await session.standalone.resume(sink, sseHeaders, undefined, guard);
    if (r === 'ok' && replacing) tookOver(reg, session.standalone);
    if (r === 'evicted' || r === 'unknown') sendRefusal(sink, Refusals.resumeDeclined(r), headers);
    else if (r === 'ended') sendRefusal(sink, Refusals.sessionNotFound(), headers);
    else if (r === 'unavailable') sendRefusal(sink, Refusals.storeUnavailable(), headers);
    return;
  }

  const cursor = parseEventId(lastEventId);
  if (cursor === undefined) {
    declined.add('malformed');
    return sendRefusal(sink, Refusals.resumeDeclined('malformed'), headers);
  }
  if (cursor.tag !== session.tag) {
    declined.add('foreign');
    return sendRefusal(sink, Refusals.resumeDeclined('foreign'), headers);
  }
  const stream = cursor.stream === 0 ? session.standalone : session.postStreams.get(cursor.stream);
  if (stream !== undefined) {
    const conflict = takeover(reg, stream);
    if (conflict !== undefined) return sendRefusal(sink, conflict, headers);
    const replacing = stream.attached;
    const r = await stream.resume(sink, sseHeaders, cursor.seq, guard);
    if (r === 'ok' && replacing) tookOver(reg, stream);
    if (r === 'ok') reg.core.counters.add('replaysServed');
    else if (r === 'evicted' || r === 'unknown') {
      declined.add(r);
      sendRefusal(sink, Refusals.resumeDeclined(r), headers);
    } else if (r === 'ended') sendRefusal(sink, Refusals.sessionNotFound(), headers);
    else if (r === 'unavailable') sendRefusal(sink, Refusals.storeUnavailable(), headers);
    return;
  }
  // A finished POST stream: its events (and its response) are in the store for the grace period.
  let r: ReplayResult;
  try {
    r = await reg.core.store.replay(session.sessionKey, cursor.stream, cursor.seq);
  } catch {
    // Counted and logged by the guarded store; the client may retry the resume.
    if (session.ended) return sendRefusal(sink, Refusals.sessionNotFound(), headers);
    return sendRefusal(sink, Refusals.storeUnavailable(), headers);
  }
  if (session.ended) return sendRefusal(sink, Refusals.sessionNotFound(), headers);
  if (r.status !== 'ok') {
    declined.add(r.status);
    return sendRefusal(sink, Refusals.resumeDeclined(r.status), headers);
  }
  reg.core.counters.add('replaysServed');
  let body = resumePrimer(session.priming, false, r.events.length, () =>
    encodeEventId(cursor.tag, cursor.stream, cursor.seq),
  );
  for (const e of r.events) body += e.frame;
  sink.head(200, sseHeaders);
  sink.end(body.length > 0 ? body : RESUMED_COMMENT);
}

/**
 * How long a connection that took over another one is protected from being taken over in turn:
 * five `retry:` intervals (a client reconnecting as told tries about five times meanwhile), at
 * least 1 s.
 */
export function takeoverAfterMs(retryMs: number): number {
  return Math.max(1000, 5 * retryMs);
}

/** A 409 when a new GET may not take over `stream`'s live connection yet; undefined when it may. */
function takeover(reg: Sessions, stream: EventStream): Refusal | undefined {
  const w = stream.writer;
  const since = stream.tookOverAt;
  if (w === undefined || w.blocked || since === undefined) return undefined;
  const age = reg.core.options.now() - since;
  const hold = takeoverAfterMs(reg.core.options.retryMs);
  if (age >= hold) return undefined;
  reg.core.counters.add('streamConflicts');
  return Refusals.streamConflict(Math.max(1, Math.ceil((hold - age) / 1000)));
}

function tookOver(reg: Sessions, stream: EventStream): void {
  reg.core.counters.add('streamsReplaced');
  stream.tookOver(reg.core.options.now());
}
