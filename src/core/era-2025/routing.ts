/**
 * Routing of what a session's SDK server sends (BridgeTarget): a response to the exchange that
 * awaits it; a related notification or request to its request's stream (or, in json mode or once
 * the request was answered, to the standalone GET stream the client uses); anything else to the
 * standalone stream; what nothing can carry is counted undeliverable, and a server-to-client
 * request that can never be answered fails at once. Message classification here is structural
 * (see jsonrpc/message.ts).
 *
 * `Session` (session.ts) extends this class, through inbound.ts: the tables routed through are the session's own and
 * stay on one object, since per-session memory is what a server with many idle sessions pays
 * (README "Memory per session"); the session's lifecycle fills and empties them.
 */
import type { PartialFrame } from '../../flow/partial-frame.js';
import { JsonRpcCode } from '../../jsonrpc/codes.js';
import {
  errorResponse,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type RequestId,
} from '../../jsonrpc/message.js';
import { coalesceKeyOf } from '../../jsonrpc/partial.js';
import type { ProgressEvent } from '../../jsonrpc/progress-json.js';
import { type ChangeEvent, changeOf } from '../change-bus.js';
import type { Counters } from '../observe/counters.js';
import type { ResolvedOptions } from '../options.js';
import type { BridgeTarget } from '../sdk/bridge-transport.js';
import type { Dispatcher } from '../sdk/dispatcher.js';
import type { EventStream } from '../stream/event-stream.js';
import type { Pacer } from '../stream/pacer.js';
import type { Exchange, RelatedAsks } from './exchange.js';
import type { LegacyMrtrShim } from './mrtr-shim.js';

/** What routing reads of the endpoint (one object per endpoint; SessionDeps extends it). */
export interface RoutingDeps {
  readonly options: ResolvedOptions;
  readonly counters: Counters;
  readonly pacer: Pacer;
  /** A served server announced a list change or resource update (feeds 2026-07-28 listen streams). */
  changed?(event: ChangeEvent): void;
}

export abstract class SessionRouting<D extends RoutingDeps> implements BridgeTarget {
  readonly id: string | undefined;
  /** Per-session id tag; undefined when events carry no ids (stateless mode's one-request sessions). */
  readonly tag: string | undefined;
  protected readonly deps: D;
  /** Requests in flight, by id, with the exchange that answers them; made on first use. */
  protected inflightById: Map<RequestId, Exchange> | undefined;
  /**
   * Ids of server-to-client requests awaiting the client's reply, with who follows each one a task's
   * run sent (RelatedAsks; undefined for the others); made on first use.
   */
  protected awaitingIds: Map<RequestId, RelatedAsks | undefined> | undefined;
  /** The SDK server's dispatcher, once connected. */
  protected dispatcher: Dispatcher | undefined;
  /** Turns input_required results into server-to-client requests (sessions only; made on first use). */
  protected shim: LegacyMrtrShim | undefined;
  /** The standalone GET stream, once something needed it. */
  protected standaloneStream: EventStream | undefined;

  constructor(deps: D, id: string | undefined, tag: string | undefined) {
    this.deps = deps;
    this.id = id;
    this.tag = tag;
  }

  /** The session has ended: nothing is routed any more. */
  abstract get ended(): boolean;
  /** The standalone stream, made if it was not yet. */
  abstract get standalone(): EventStream;
  abstract closedBySdk(): void;

  /** Where a message the SDK sends goes; a promise when its producer should wait (backpressure). */
  route(message: JsonRpcMessage, related: RequestId | undefined): Promise<void> | undefined {
    if (this.ended) return undefined;
    if ('method' in message) {
      const isRequest = 'id' in message;
      if (isRequest && this.id === undefined) {
        // Stateless: the client's reply would reach a fresh server that never asked, so the request
        // can never be answered. Fail it now rather than leave the tool waiting for its timeout.
        this.deps.counters.add('undeliverable');
        this.#failRequest(message.id, 'server-to-client requests need a session; this server is stateless');
        return undefined;
      }
      if (!isRequest) {
        const change = changeOf(message.method, message.params);
        if (change !== undefined) this.deps.changed?.(change);
      }
      if (isRequest) {
        this.awaitingIds ??= new Map();
        this.awaitingIds.set(message.id, undefined);
      } else if (message.method === 'notifications/cancelled') {
        // The SDK gave up on one of its own requests (timeout, abort): no reply is awaited any more.
        const id = message.params?.['requestId'];
        if (typeof id === 'string' || typeof id === 'number') this.replied(id);
      }
      // A request of a task's run goes to the client, never into the run's own sink (its answer
      // is the task's: 2025-11-25 basic/utilities/tasks §"Input Required Status").
      const asks = isRequest && related !== undefined ? this.inflightById?.get(related)?.asks : undefined;
      if (asks !== undefined) return this.#ask(message as JsonRpcRequest, asks);
      const json = JSON.stringify(message);
      // Progress is the only compressible traffic (jsonrpc/partial.ts coalesceKeyOf).
      const key = isRequest ? undefined : coalesceKeyOf(message);
      if (related !== undefined) {
        const r = this.routeRelated(related, json, key);
        if (r !== 'nostream') return r;
        this.deps.counters.add('undeliverable');
        if (isRequest) this.#failRequest(message.id, 'no open stream can carry this server request');
        return this.deps.pacer.wait();
      }
      if (!this.deps.options.enableGetStream || this.tag === undefined) {
        this.deps.counters.add('undeliverable');
        if (isRequest) this.#failRequest(message.id, 'this server offers no standalone stream');
        return undefined;
      }
      return this.standalone.send(json, key);
    }
    const id = message.id;
    if (id === undefined || id === null) return undefined;
    const ex = this.inflightById?.get(id);
    if (ex === undefined) {
      // Answer to a cancelled or abandoned request: nothing awaits it any more.
      this.deps.counters.add('undeliverable');
      return undefined;
    }
    if (this.shim?.intercept(message)) return undefined;
    this.inflightById?.delete(id);
    return ex.response(id, JSON.stringify(message), this.deps.options.now());
  }

  /**
   * A serialized message related to a request: on the request's stream, or (json mode, or the
   * request already answered) on the standalone stream if the client uses one. Stored there even
   * while the GET connection is away (reconnecting), so the resume replays it; a json answer waits
   * for it (Exchange.relatedVia). 'nostream' when nothing can carry it.
   */
  routeRelated(
    related: RequestId,
    json: string,
    key: string | undefined,
    parts?: ProgressEvent,
  ): Promise<void> | undefined | 'nostream' {
    const ex = this.inflightById?.get(related);
    // A task's run (RelatedAsks): what the client should see of it also goes to its GET stream.
    const shown = ex?.asks?.notification(json, key);
    const seen = shown === undefined ? undefined : this.#usableStandalone()?.send(shown, key);
    const r = ex === undefined ? 'nostream' : ex.related(json, key, parts);
    if (r !== 'nostream') return seen ?? r;
    const s = this.#usableStandalone();
    if (s === undefined) return 'nostream';
    const wait = s.send(json, key, undefined, parts);
    ex?.relatedVia(s.seq, json.length, this.deps.options.now());
    return wait;
  }

  /** One delta of partial output of a request (fast path; see server/partial-results.ts). */
  routePartial(related: RequestId, p: PartialFrame): Promise<void> | undefined {
    if (this.ended) return undefined;
    const ex = this.inflightById?.get(related);
    const r = ex === undefined ? 'nostream' : ex.relatedPartial(p);
    if (r !== 'nostream') return r;
    const s = this.#usableStandalone();
    if (s === undefined) {
      // Nowhere to go (json mode without a GET stream): the result will carry the text. Yield a turn
      // of the event loop so a tight loop of sends cannot starve I/O, but do not pace the tool: its
      // output is not waiting for anyone.
      this.deps.counters.add('undeliverable');
      return new Promise((resolve) => setImmediate(resolve));
    }
    const wait = s.sendPartial(p);
    ex?.relatedVia(s.seq, p.bytes, this.deps.options.now());
    return wait;
  }

  /** A pre-serialized related notification that must not be coalesced (a partial content block). */
  routeRelatedJson(related: RequestId, json: string): Promise<void> | undefined {
    return this.routeProgress(related, json, undefined);
  }

  /**
   * A serialized related `notifications/progress` (BridgeTarget): what `route` does with one — no
   * list change, no cancellation, not a request — from the related request's stream on. `parts`:
   * the same text as layout and values, for the replay store (jsonrpc/progress-json.ts).
   */
  routeProgress(
    related: RequestId,
    json: string,
    key: string | undefined,
    parts?: ProgressEvent,
  ): Promise<void> | undefined {
    if (this.ended) return undefined;
    const r = this.routeRelated(related, json, key, parts);
    if (r !== 'nostream') return r;
    this.deps.counters.add('undeliverable');
    return this.deps.pacer.wait();
  }

  /** A request of a task's run: on the standalone stream, as its follower decorates it. */
  #ask(m: JsonRpcRequest, asks: RelatedAsks): Promise<void> | undefined {
    const s = this.#usableStandalone();
    if (s === undefined) {
      return this.#undeliverable(
        m.id,
        "no open stream can carry this server request: a task's requests go to the standalone GET stream, which this client has not opened",
      );
    }
    this.awaitingIds?.set(m.id, asks);
    const json = JSON.stringify(asks.decorate(m));
    const stored = asks.asking(m.id);
    if (stored === undefined) return s.send(json, undefined);
    // Sent once the task reads input_required (RelatedAsks.asking), if it is still awaited then:
    // the session may have ended, or the request been given up, meanwhile.
    return stored.then(() => {
      if (this.ended || this.awaitingIds?.get(m.id) !== asks) return undefined;
      const now = this.#usableStandalone();
      if (now !== undefined) return now.send(json, undefined);
      return this.#undeliverable(
        m.id,
        'the standalone GET stream that carries this request closed before it was sent',
      );
    });
  }

  /** A task's request no stream can carry: counted, and failed on the server's side with `reason`. */
  #undeliverable(id: RequestId, reason: string): undefined {
    this.deps.counters.add('undeliverable');
    this.#failRequest(id, reason);
    return undefined;
  }

  /** A server-to-client request is over (answered, given up, or failed here): no reply is awaited. */
  protected replied(id: RequestId): void {
    const asks = this.awaitingIds?.get(id);
    if (this.awaitingIds?.delete(id) === true) asks?.settled(id);
  }

  /** The standalone stream, when the client has opened it at least once (it is then its channel). */
  #usableStandalone(): EventStream | undefined {
    const s = this.standaloneStream;
    if (s === undefined || !this.deps.options.enableGetStream) return undefined;
    if (s.attached || (s.everAttached && this.tag !== undefined)) return s;
    return undefined;
  }

  /** Fails a server-to-client request locally, as if the client had answered with an error. */
  #failRequest(id: RequestId, message: string): void {
    this.replied(id);
    const d = this.dispatcher;
    // Deferred: the SDK is still inside its own send() when this runs.
    queueMicrotask(() => d?.response(errorResponse(id, JsonRpcCode.ServerError, message)));
  }
}
