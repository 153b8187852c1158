/**
 * A task hook's answer as an SSE stream (`TaskOffer.openStream`): the same connection a plain call's
 * answer upgrades to (call.ts), so it has the era's SSE headers, the endpoint's shared keepalive
 * timer and a blocked socket's queue, under 'wait-for-room' (closing the response would be
 * cancellation, 2026-07-28 "Cancellation").
 */
import { encodeJsonFrame } from '../../sse/encode.js';
import { type ConnectionShared, SseConnection } from '../answer/connection.js';
import type { Headers, ResponseSink } from '../pipeline/sink.js';
import { SSE_HEADERS } from '../stream/stream-context.js';
import type { OfferStream } from './task-hook.js';

export function openOfferStream(sink: ResponseSink, shared: ConnectionShared, headers: Headers): OfferStream {
  const c = new SseConnection(sink, shared, 'wait-for-room');
  shared.counters.add('responsesSse');
  c.open(200, { ...SSE_HEADERS, ...headers }, '');
  return {
    notify: (json, key) => {
      // Counted as a plain call's events are; keyed, it coalesces while the socket is blocked, so
      // nothing waits for room (the promise is only for an unkeyed frame over the high-water mark).
      c.send(encodeJsonFrame(undefined, json), key)?.catch(() => undefined);
    },
    // A plain call's unkeyed frame: it waits for room rather than being dropped (it never rejects).
    send: (json) => c.send(encodeJsonFrame(undefined, json)),
    finish: (json) => {
      // After what is queued; waits for room when the socket is blocked (it never rejects).
      c.finish(encodeJsonFrame(undefined, json))?.catch(() => undefined);
    },
  };
}
