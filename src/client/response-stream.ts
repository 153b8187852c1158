/**
 * One logical SSE stream of the client as data: what it owes, where it is (its last event id, the
 * server's retry hint, its connection) and the SSE sink that turns its events into JSON-RPC
 * messages for the transport. `StreamRunner` (streams.ts) decides what happens to it.
 */
import type { AuthAttempt } from './auth/answer.js';
import type { TransportContext } from './context.js';
import { MalformedMessageError } from './errors.js';
import { describe } from './http.js';
import type { Canceller } from './http-client.js';
import type { SseSink } from './sse-reader.js';
import type { RequestId, WireMessage } from './wire.js';

/**
 * One logical SSE stream: a POST's response stream, or the standalone GET stream. It outlives the HTTP
 * connections that carry it: when a connection ends before the stream is done it is resumed with
 * `GET` + `Last-Event-ID` (spec 2025-11-25 "Resumability and Redelivery": resumption is always via GET).
 */
export interface ResponseStream {
  readonly kind: 'post' | 'standalone';
  /**
   * A 2026-07-28-era request's stream: never resumed (that era has no `Last-Event-ID` and no replay), so its
   * end before the response loses the request (`RequestLostError`).
   */
  readonly modern: boolean;
  /** POST streams: ids of the requests whose responses this stream still owes. */
  readonly owed: Set<RequestId>;
  /**
   * POST streams: the session they belong to. A resume names it even after a re-initialization (the
   * standalone stream's 404, another request's) replaced the transport's session: a Last-Event-ID
   * belongs to one session, and sent with the new one it is declined (400 `resume-foreign`) where
   * the old session's answer (a replay, or owner-lost from a cluster) was due.
   */
  readonly sessionId: string | undefined;
  lastEventId: string | undefined;
  /**
   * The last event ids received on this stream. An event that comes again under one of them (a server
   * that replays from the start instead of after `Last-Event-ID`, or repeats itself) is not delivered
   * twice and is no progress.
   */
  readonly seenIds: SeenIds;
  /** The `id:` of the block being dispatched, when it was seen before (set by `onId`, read by `onEvent`). */
  replayedId: string | undefined;
  /** The server's last `retry:` on this stream. */
  retryMs: number | undefined;
  /** Consecutive reconnections without progress (see `maxReconnectAttempts`). */
  attempts: number;
  connection: Canceller | undefined;
  connectionIsGet: boolean;
  connectedAt: number;
  /**
   * The current connection moved the stream forward: it delivered a message under a new event id (or
   * any message, on a stream whose server gives no ids). What resets the attempt counter.
   */
  progressed: boolean;
  /** A GET on this stream got 200 at least once. */
  everConnected: boolean;
  /**
   * Where this stream's GETs stand with authorization since the last one that succeeded: a DPoP nonce
   * taken, an authorization run, step-ups (answerChallenge bounds each). Undefined when none was needed.
   */
  authAttempt: AuthAttempt | undefined;
  timer: unknown;
  finished: boolean;
  readonly onresumptiontoken: ((token: string) => void) | undefined;
  readonly sink: SseSink;
}

/**
 * Event ids a stream remembers to recognise a replay (see `ResponseStream.seenIds`). A replay of a
 * stream of at most this many events is recognised whole; of a longer one, its last this-many
 * events. The upkeep per event grows with it: about 80 ns at 256 ids and 230 ns at 4,096 (measured
 * alone), against about 1.5 µs of the whole transport's CPU per progress event (bench section (e)).
 */
const SEEN_IDS = 256;

/**
 * The longest event id a stream keeps, in characters. An id may be as long as an event (`maxEventBytes`), and each new
 * one was kept (the last {@link SEEN_IDS}: up to 256 × 16 MiB for one stream) and sent back in a `Last-Event-ID`
 * header no server takes (nginx's default buffer for a header line is 8 KiB). A longer id resets the cursor, as an
 * empty one does (WHATWG HTML §9.2.6): the stream cannot resume from it, which is what its end then says. Sluice's
 * ids are at most 40 characters, the SDK's a UUID and a number.
 */
export const MAX_EVENT_ID_LENGTH = 4_096;

/** The last {@link SEEN_IDS} ids of a stream: a ring (grown on demand) for eviction, a set for lookup. */
export class SeenIds {
  readonly #set = new Set<string>();
  readonly #ring: string[] = [];
  #next = 0;

  has(id: string): boolean {
    return this.#set.has(id);
  }

  add(id: string): void {
    if (this.#ring.length < SEEN_IDS) this.#ring.push(id);
    else {
      this.#set.delete(this.#ring[this.#next] as string);
      this.#ring[this.#next] = id;
      this.#next = (this.#next + 1) % SEEN_IDS;
    }
    this.#set.add(id);
  }
}

/** A new stream of `kind`: nothing owed yet, no connection; its events go to `t.receive`. */
export function newResponseStream(
  t: TransportContext,
  kind: ResponseStream['kind'],
  onresumptiontoken: ((token: string) => void) | undefined,
  modern: boolean,
): ResponseStream {
  const s: ResponseStream = {
    kind,
    modern,
    owed: new Set(),
    sessionId: kind === 'post' ? t.session.sessionId : undefined,
    lastEventId: undefined,
    seenIds: new SeenIds(),
    replayedId: undefined,
    retryMs: undefined,
    attempts: 0,
    connection: undefined,
    connectionIsGet: false,
    connectedAt: 0,
    progressed: false,
    everConnected: false,
    authAttempt: undefined,
    timer: undefined,
    finished: false,
    onresumptiontoken,
    sink: {
      onId: (id) => {
        s.replayedId = undefined;
        if (id.length === 0 || id.length > MAX_EVENT_ID_LENGTH) {
          s.lastEventId = undefined;
          return;
        }
        // Seen before: a replay. The cursor stays where it is (it must not move back).
        if (s.seenIds.has(id)) {
          s.replayedId = id;
          return;
        }
        s.seenIds.add(id);
        s.lastEventId = id;
        s.onresumptiontoken?.(id);
      },
      onRetry: (ms) => {
        s.retryMs = ms;
      },
      onEvent: (data, event, ownId) => {
        // Only the default event type carries JSON-RPC (spec: "data … a JSON-RPC message").
        if (event !== undefined && event !== 'message') return;
        // Already delivered under this id (WHATWG SSE: the id names the event; MCP 2025-11-25
        // "Resumability and Redelivery": a resume replays what came *after* Last-Event-ID).
        if (ownId !== undefined && ownId === s.replayedId) return;
        let message: unknown;
        try {
          message = JSON.parse(data);
        } catch (error) {
          t.reportError(
            new MalformedMessageError(`an SSE event's data is not JSON: ${describe(error)}`, error),
          );
          return;
        }
        // An over-long id is no cursor, so its event is no progress either: a server replaying it would loop.
        if (
          ownId !== undefined
            ? ownId.length > 0 && ownId.length <= MAX_EVENT_ID_LENGTH
            : s.lastEventId === undefined
        )
          s.progressed = true;
        if (Array.isArray(message)) {
          for (const item of message) t.receive(item as WireMessage, s);
        } else {
          t.receive(message as WireMessage, s);
        }
      },
    },
  };
  return s;
}
