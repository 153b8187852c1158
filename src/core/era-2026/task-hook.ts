/**
 * The seam between the 2026-07-28 era and a task service (src/tasks/, the
 * `io.modelcontextprotocol/tasks` extension, SEP-2663). The core knows nothing of tasks: after a
 * request passed the validation order and its authorization, `handleModernPost` offers it to the
 * hook, which either takes it (and answers it, now or later) or leaves it to the era. A task's tool
 * runs through `serve`: the same ModernCall a plain request gets, answering into a sink of the
 * hook's own, so a task runs any SDK v1 or v2 server without the tool knowing.
 */
import type { JsonRpcRequest } from '../../jsonrpc/message.js';
import type { ModernMeta } from '../../modern/validate.js';
import type { TaskHookStats } from '../observe/stats.js';
import type { Headers, RequestHead, ResponseSink } from '../pipeline/sink.js';

export interface TaskOffer {
  readonly req: JsonRpcRequest;
  readonly meta: ModernMeta;
  /** The authenticated principal, if any (a task is bound to it). */
  readonly principal: string | undefined;
  /** The client as the per-client limits count it: the principal, else the peer's address. */
  readonly clientKey: string;
  /** The client's request head and response, and the headers every answer carries (CORS). */
  readonly head: RequestHead;
  /** Every request header (lower-case names), e.g. to keep a call's `Mcp-Param-*` for a later round. */
  readonly rawHeaders: Readonly<Record<string, string | string[] | undefined>>;
  readonly sink: ResponseSink;
  readonly headers: Headers;
  /**
   * Opens this request's answer as an SSE stream of the era, as a plain call's answer becomes one
   * (answer/connection.ts): its headers, the endpoint's shared keepalive timer, and a blocked
   * socket's queue, where frames with a coalescing key keep only the newest. Call once, at most.
   */
  openStream(): OfferStream;
  /** Whether the endpoint keeps silent streams alive (`keepaliveMs` > 0): a long answer is worth a stream then. */
  readonly keepsAlive: boolean;
  /**
   * Serves `req` as a plain request of this era, answering into `sink` instead of the client's
   * response (in `auto` mode: JSON, or SSE once something related is sent). Closing `sink` cancels
   * the handler (its AbortSignal), as a client closing its response would. `head` replaces this
   * request's head for the call's header checks (a later round of a task carries the headers of
   * the call that created it, not those of the `tasks/update` that resumed it).
   */
  serve(req: JsonRpcRequest, sink: ResponseSink, head?: RequestHead): Promise<void>;
}

/** A task hook's SSE answer (`TaskOffer.openStream`). */
export interface OfferStream {
  /** One JSON-RPC notification, coalesced with the newest of its `key` while the socket is blocked. */
  notify(json: string, key: string): void;
  /**
   * One JSON-RPC notification that must arrive whole (partial output, a log message): queued while
   * the socket is blocked; the promise, when there is one, resolves once the producer may go on.
   */
  send(json: string): Promise<void> | undefined;
  /** The answer as the last event, then the end of the response. */
  finish(json: string): void;
}

export interface TaskHook {
  /** Whether the hook wants to look at a request of this method at all (cheap, synchronous). */
  wants(method: string): boolean;
  /** Takes the request (true: it was or will be answered by the hook) or leaves it (false). */
  offer(offer: TaskOffer): Promise<boolean>;
  /** Its counters, if it keeps any (`stats().tasks`, the `sluice_task*` metrics). */
  stats?(): TaskHookStats;
}
