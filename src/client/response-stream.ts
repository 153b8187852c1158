/**
 * One logical SSE stream of the client as data: what it owes, where it is (its last event id, the
 * server's retry hint, its connection) and the SSE sink that turns its events into JSON-RPC
 * messages for the transport. `StreamRunner` (streams.ts) decides what happens to it.
 */
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
  /** The server's last `retry:` on this stream. */
  retryMs: number | undefined;
  /** Consecutive reconnections without progress (see `maxReconnectAttempts`). */
  attempts: number;
  connection: Canceller | undefined;
  connectionIsGet: boolean;
  connectedAt: number;
  /** The current connection delivered at least one message. */
  progressed: boolean;
  /** A GET on this stream got 200 at least once. */
  everConnected: boolean;
  /** The last GET was answered 401/403 and the OAuth client re-authorized; reset when a GET succeeds. */
  authRetried: boolean;
  timer: unknown;
  finished: boolean;
  readonly onresumptiontoken: ((token: string) => void) | undefined;
  readonly sink: SseSink;
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
    retryMs: undefined,
    attempts: 0,
    connection: undefined,
    connectionIsGet: false,
    connectedAt: 0,
    progressed: false,
    everConnected: false,
    authRetried: false,
    timer: undefined,
    finished: false,
    onresumptiontoken,
    sink: {
      onId: (id) => {
        s.lastEventId = id.length > 0 ? id : undefined;
        if (id.length > 0) s.onresumptiontoken?.(id);
      },
      onRetry: (ms) => {
        s.retryMs = ms;
      },
      onEvent: (data, event) => {
        // Only the default event type carries JSON-RPC (spec: "data … a JSON-RPC message").
        if (event !== undefined && event !== 'message') return;
        let message: unknown;
        try {
          message = JSON.parse(data);
        } catch (error) {
          t.reportError(
            new MalformedMessageError(`an SSE event's data is not JSON: ${describe(error)}`, error),
          );
          return;
        }
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
