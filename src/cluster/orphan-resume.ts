/**
 * A resume (GET with Last-Event-ID) for a POST stream whose owner cannot be reached, served from the
 * stream's Redis copy by whichever instance received it:
 *
 * - a **finished** stream is replayed from the copy (its answer is in it), whatever the owner's state;
 * - an **unfinished** stream whose owner's lease has lapsed (the owner is dead) is replayed, then
 *   ended with a JSON-RPC error (-32603, `data.reason: "owner-lost"`) for each request it was
 *   answering and had not answered: the client gets a definite outcome at once instead of waiting
 *   for a response that will never come (MCP 2025-11-25 basic/transports §"Resumability and
 *   Redelivery" leaves a lost stream to the server; this makes the loss explicit);
 * - an unfinished stream whose owner may still be alive is not touched (the caller answers 503): the
 *   owner could still answer it.
 */

import { Refusals, sendRefusal } from '../core/pipeline/refusal.js';
import type { Headers, ResponseSink } from '../core/pipeline/sink.js';
import { SSE_HEADERS } from '../core/stream/stream-context.js';
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { errorResponse, type RequestId } from '../jsonrpc/message.js';
import { encodeJsonFrame, RESUMED_COMMENT } from '../sse/encode.js';
import { encodeEventId, parseEventId } from '../sse/event-id.js';
import type { EventReplica } from './replica.js';

export type OrphanOutcome = 'served' | 'owner-lost' | 'not-here';

/** Ids of the JSON-RPC responses among the frames (`data:` lines of messages with result or error). */
function answeredIds(frames: readonly string[]): Set<string> {
  const ids = new Set<string>();
  for (const f of frames) {
    for (const line of f.split('\n')) {
      if (!line.startsWith('data: ') || !line.includes('"id"')) continue;
      try {
        const m = JSON.parse(line.slice(6)) as {
          id?: unknown;
          method?: unknown;
          result?: unknown;
          error?: unknown;
        };
        if (m.method === undefined && (m.result !== undefined || m.error !== undefined))
          ids.add(JSON.stringify(m.id));
      } catch {
        // Not JSON (a multi-line data field): it cannot be a response Sluice wrote.
      }
    }
  }
  return ids;
}

/**
 * Serves the resume from the copy when that is right (see above). 'not-here': nothing was written,
 * the caller answers (503 or 404).
 */
export async function resumeFromCopy(
  replica: EventReplica,
  sink: ResponseSink,
  headers: Headers,
  sessionId: string,
  tag: string,
  lastEventId: string,
  ownerAlive: boolean | undefined,
): Promise<OrphanOutcome> {
  const cursor = parseEventId(lastEventId);
  if (cursor === undefined || cursor.tag !== tag || cursor.stream === 0) return 'not-here';
  let r: Awaited<ReturnType<EventReplica['replay']>>;
  try {
    r = await replica.replay(sessionId, cursor.stream, cursor.seq);
  } catch {
    return 'not-here';
  }
  if (r.status === 'evicted') {
    sendRefusal(sink, Refusals.resumeDeclined('evicted'), headers);
    return 'served';
  }
  if (r.status === 'unknown') return 'not-here';
  // The client holds frames the copy never got: only an unfinished stream of a dead owner can be
  // ended (with the errors); anything else is left to the caller.
  if (r.status === 'ahead' && (r.finished || ownerAlive !== false)) return 'not-here';
  if (!r.finished && ownerAlive !== false) return 'not-here';
  const events = r.status === 'ok' ? r.events : [];
  let body = '';
  for (const e of events) body += e.frame;
  let outcome: OrphanOutcome = 'served';
  if (!r.finished) {
    let ids: RequestId[] = [];
    try {
      const parsed: unknown = r.requests === '' ? [] : JSON.parse(r.requests);
      if (Array.isArray(parsed))
        ids = parsed.filter((x): x is RequestId => typeof x === 'string' || typeof x === 'number');
    } catch {
      ids = [];
    }
    const answered = answeredIds(events.map((e) => e.frame));
    let seq = events.at(-1)?.seq ?? cursor.seq;
    for (const id of ids) {
      if (answered.has(JSON.stringify(id))) continue;
      const err = errorResponse(
        id,
        JsonRpcCode.InternalError,
        'The server instance running this request stopped',
        {
          reason: 'owner-lost',
        },
      );
      body += encodeJsonFrame(encodeEventId(tag, cursor.stream, ++seq), JSON.stringify(err));
    }
    outcome = 'owner-lost';
  }
  sink.head(200, { ...SSE_HEADERS, ...headers });
  sink.end(body.length > 0 ? body : RESUMED_COMMENT);
  return outcome;
}
