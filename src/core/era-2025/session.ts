/**
 * One MCP session's lifecycle: its SDK server, its streams and the requests in flight, from
 * initialize to end, and its hibernation (wake.ts). What the client sends is handed to the SDK by
 * inbound.ts, where what the SDK sends goes is routing.ts: this class extends both (one object per
 * session, same tables).
 */
import type { EventStore } from '../../events/event-store.js';
import type { JsonRpcMessage, RequestId } from '../../jsonrpc/message.js';
import { PARTIAL_CAPABILITY } from '../../jsonrpc/partial.js';
import type { ClusterHooks } from '../cluster-hooks.js';
import type { SessionEndReason } from '../observe/counters.js';
import type { Operations } from '../observe/operations.js';
import { shortHash } from '../observe/probe.js';
import type { StreamStats } from '../observe/stats.js';
import { type Refusal, Refusals } from '../pipeline/refusal.js';
import { BridgeTransport } from '../sdk/bridge-transport.js';
import { createDispatcher } from '../sdk/dispatcher.js';
import { closeServed } from '../sdk/release.js';
import { assertDrivable, type McpServerLike } from '../sdk/server-like.js';
import { EventStream } from '../stream/event-stream.js';
import type { WriterSet } from '../stream/live.js';
import type { WriterLimits } from '../stream/sse-writer.js';
import type { StreamContext, StreamShared } from '../stream/stream-context.js';
import type { Exchange, ExchangeHost } from './exchange.js';
import { SessionInbound } from './inbound.js';
import { standaloneDelivered } from './json-order.js';
import type { RoutingDeps } from './routing.js';
import { Hibernation, type Sleeper, type WakeOutcome } from './wake.js';

export interface SessionDeps extends RoutingDeps {
  readonly store: EventStore | undefined;
  readonly live: WriterSet;
  readonly limits: WriterLimits;
  /** The same, as every stream and exchange reads it (one object per endpoint). */
  readonly stream: StreamShared;
  /** Set when this instance is a cluster member. */
  readonly cluster?: ClusterHooks | undefined;
  /** Per-request spans and metrics (observe/operations.ts), when on. */
  readonly operations?: Operations | undefined;
  /** A server for this session from the application's `createServer` (at initialize, and at a wake). */
  serverFor(session: Session): McpServerLike;
  ended(session: Session, reason: SessionEndReason): void;
}

/** The oldest revision, assumed when a client sends no MCP-Protocol-Version (2025-06-18 basic/transports). */
export const DEFAULT_NEGOTIATED_VERSION = '2025-03-26';

/** Shared read-only empty collections, returned until a session needs its own. */
const NO_EXCHANGES: ReadonlyMap<RequestId, Exchange> = new Map();
const NO_STREAMS: ReadonlyMap<number, EventStream> = new Map();
const NO_IDS: ReadonlyMap<RequestId, unknown> = new Map();
const NO_SETS: ReadonlySet<Exchange> = new Set();

/**
 * Per-session memory is what a server with many idle sessions pays (README "Memory per session"),
 * so a session holds only what is its own: endpoint-wide settings are read through `deps` (one
 * object per endpoint), and the collections, the input_required shim and the standalone stream are
 * created when first needed. An empty Map or Set costs ~180 bytes of heap, a closure ~56.
 */
export class Session extends SessionInbound<SessionDeps> implements StreamContext, ExchangeHost, Sleeper {
  readonly sessionKey: string;
  readonly principal: string | undefined;
  /** The transport the current server is connected to; a wake connects a fresh one. */
  #transport: BridgeTransport | undefined;
  /** When the session was created (epoch ms), for `mcp.server.session.duration`. */
  readonly startedAt: number;
  #hash: string | undefined;
  #version = DEFAULT_NEGOTIATED_VERSION;
  #ended = false;
  #lastActive: number;
  #exchanges: Set<Exchange> | undefined;
  #postStreams: Map<number, EventStream> | undefined;
  /** The client declared the draft SEP's `partialResults` capability in initialize. */
  #partialResultsCapable = false;
  #nextStream = 1;

  constructor(
    deps: SessionDeps,
    id: string | undefined,
    tag: string | undefined,
    principal: string | undefined,
  ) {
    super(deps, id, tag);
    this.sessionKey = id ?? '';
    this.principal = principal;
    this.#lastActive = deps.options.now();
    this.startedAt = this.#lastActive;
  }

  /** The transport the session's server is (or is about to be) connected to. */
  get transport(): BridgeTransport {
    this.#transport ??= new BridgeTransport(this, this.id);
    return this.#transport;
  }

  /** The store, for sessions whose events carry ids (not stateless mode's one-request sessions). */
  get store(): EventStore | undefined {
    return this.tag === undefined ? undefined : this.deps.store;
  }
  /** What every stream and exchange of this endpoint shares (StreamContext, ExchangeHost). */
  get shared(): StreamShared {
    return this.deps.stream;
  }

  /** Requests in flight, by id, with the exchange that answers them. */
  get inflight(): ReadonlyMap<RequestId, Exchange> {
    return this.inflightById ?? NO_EXCHANGES;
  }
  /** Open exchanges (POSTs not yet fully answered). */
  get exchanges(): ReadonlySet<Exchange> {
    return this.#exchanges ?? NO_SETS;
  }
  /** POST streams not yet finished, by stream number. */
  get postStreams(): ReadonlyMap<number, EventStream> {
    return this.#postStreams ?? NO_STREAMS;
  }
  /** Ids of server-to-client requests awaiting the client's reply. */
  get awaiting(): ReadonlyMap<RequestId, unknown> {
    return this.awaitingIds ?? NO_IDS;
  }

  /** The session has ended (end() ran): nothing may attach or be routed any more. */
  get ended(): boolean {
    return this.#ended;
  }
  /** The client declared the draft SEP's `partialResults` capability in initialize. */
  get partialResultsCapable(): boolean {
    return this.#partialResultsCapable;
  }

  /** The protocol revision the initialize exchange settled on. */
  get version(): string {
    return this.#version;
  }
  /** When a request last named this session (for the idle TTL). */
  get lastActive(): number {
    return this.#lastActive;
  }

  /** What the client's initialize declared that the session keeps (its capabilities; with hibernation, all of it). */
  declared(params: Record<string, unknown> | undefined): void {
    const capabilities = params?.['capabilities'] as Record<string, unknown> | undefined;
    const partial = capabilities?.[PARTIAL_CAPABILITY];
    this.#partialResultsCapable = typeof partial === 'object' && partial !== null;
    if (this.deps.options.hibernateAfterMs !== undefined && this.id !== undefined)
      this.sleep = new Hibernation(params, this.deps.counters, this.deps.options.logger);
  }

  /** The SDK answered initialize with this revision. */
  negotiated(version: string): void {
    this.#version = version;
  }

  /** A request named this session: the idle TTL starts again. */
  touch(): void {
    this.#lastActive = this.deps.options.now();
  }

  /** Registers an exchange and the requests it answers, before they are dispatched. */
  adopt(ex: Exchange, ids: Iterable<RequestId>): void {
    this.#exchanges ??= new Set();
    this.#exchanges.add(ex);
    this.inflightById ??= new Map();
    for (const id of ids) this.inflightById.set(id, ex);
  }

  get sessionHash(): string {
    this.#hash ??= this.id === undefined ? 'stateless' : shortHash(this.id);
    return this.#hash;
  }

  /** Priming events are for clients of 2025-11-25 or later; older ones choke on empty data. */
  get priming(): boolean {
    return this.version >= '2025-11-25';
  }
  get standalone(): EventStream {
    this.standaloneStream ??= new EventStream(this, 0, 'get');
    return this.standaloneStream;
  }
  /** The streams that currently have a connection (standalone first). */
  *attachedStreams(): Generator<EventStream> {
    if (this.standaloneStream?.attached) yield this.standaloneStream;
    if (this.#postStreams !== undefined)
      for (const st of this.#postStreams.values()) if (st.attached) yield st;
  }
  /** Each attached connection's queue (stats({ perStream: true })). */
  streamStats(into: StreamStats[]): void {
    for (const st of this.attachedStreams()) {
      const s = st.stats();
      if (s !== undefined) into.push(s);
    }
  }
  get hasGetConnection(): boolean {
    return this.standaloneStream?.attached === true;
  }
  /** Whether anything keeps this session alive (idle TTL does not run then). */
  get busy(): boolean {
    return (this.#exchanges?.size ?? 0) > 0 || this.standaloneStream?.attached === true;
  }
  /** Open SSE connections and exchanges, for the per-session stream limit. */
  get openStreams(): number {
    return (this.#exchanges?.size ?? 0) + (this.standaloneStream?.attached ? 1 : 0);
  }

  async connect(server: McpServerLike): Promise<void> {
    assertDrivable(server);
    this.server = server;
    await server.connect(this.transport);
    this.dispatcher = createDispatcher(server, this.transport, this.deps.options.fastDispatch);
  }

  // ---- outbound (server → client): BridgeTarget ------------------------------------------------

  /** Holds a json answer until its related frames on the standalone stream have left (json-order.ts). */
  standaloneDelivered(seq: number, bytes: number): Promise<void> | undefined {
    const s = this.standaloneStream;
    return s === undefined ? undefined : standaloneDelivered(s, seq, bytes, this.deps.options.retryMs);
  }

  /** The SDK closed the current server's side; a server dropped by hibernate() closes without ending anything. */
  closedBySdk(from?: BridgeTransport): void {
    if (from !== undefined && from !== this.#transport) return;
    if (!this.ended) this.end('closed');
  }

  /** Also sees what hibernation must know: answers to a wake's replayed requests, unprompted messages. */
  override route(message: JsonRpcMessage, related: RequestId | undefined): Promise<void> | undefined {
    // Hibernation off (the default): the optional call skips its arguments too, so this per-message
    // path pays only the check of `sleep`.
    if (this.sleep?.intercept(message, related, (this.inflightById?.size ?? 0) > 0) === true)
      return undefined;
    return super.route(message, related);
  }

  // ---- ExchangeHost ------------------------------------------------------------------------------

  newPostStream(requestIds: readonly RequestId[]): EventStream {
    const s = new EventStream(this, this.#nextStream++, 'post');
    this.#postStreams ??= new Map();
    this.#postStreams.set(s.num, s);
    // A cluster records which requests the stream answers: if this process dies, a resume elsewhere
    // ends them with a definite error instead of leaving the client waiting.
    if (this.id !== undefined) this.deps.cluster?.streamRequests(this.id, s.num, requestIds);
    this.deps.operations?.bindStream(this.sessionHash, s.num, this.transport, requestIds);
    return s;
  }

  cancel(ids: RequestId[], reason: string): void {
    for (const requestId of ids) {
      this.inflightById?.delete(requestId);
      this.shim?.forget(requestId);
      // Only the exchange's orphan timer cancels through here (exchange.ts #armOrphan).
      this.dispatcher?.notification(
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason } },
        'orphan-timeout',
      );
    }
  }

  orphaned(ids: RequestId[]): void {
    this.deps.counters.add('orphanAborts', ids.length);
    this.deps.options.logger?.warn('request.orphaned', {
      session: this.sessionHash,
      requests: ids.length,
      timeoutMs: this.deps.options.orphanTimeoutMs,
    });
  }

  exchangeDone(ex: Exchange): void {
    this.#exchanges?.delete(ex);
    // A finished stream is resumed from the event store alone (its events stay there for the grace period).
    const s = ex.stream;
    if (s !== undefined) this.#postStreams?.delete(s.num);
    this.#lastActive = this.deps.options.now();
    // `hibernateAfterMs: 0`: the server goes as soon as nothing runs, once the SDK is out of its send.
    if (this.deps.options.hibernateAfterMs === 0 && this.#exchanges?.size === 0)
      setImmediate(() => this.hibernate());
  }

  /**
   * Drops the request tables while they are empty, so an idle session keeps no empty collections.
   * Called when the initialize exchange is done and by the idle sweep, never per request: a
   * session answering one request at a time keeps its tables instead of allocating them each time.
   */
  compact(): void {
    if ((this.#exchanges?.size ?? 0) > 0) return;
    this.#exchanges = undefined;
    if (this.inflightById?.size === 0) this.inflightById = undefined;
    if (this.#postStreams?.size === 0) this.#postStreams = undefined;
    this.#transport?.compact();
  }

  // ---- hibernation (wake.ts) -----------------------------------------------------------------

  /** The server was dropped while idle and is not rebuilt yet. */
  get asleep(): boolean {
    return this.sleep?.asleep === true;
  }

  /**
   * Closes and drops the server if nothing runs on it (no exchange, no request in flight, no
   * server-to-client request awaiting its reply) and nothing pins the session; true if it did.
   */
  hibernate(): boolean {
    if (this.server === undefined || this.ended || this.sleep?.mayHibernate !== true) return false;
    if ((this.#exchanges?.size ?? 0) > 0 || (this.inflightById?.size ?? 0) > 0) return false;
    if ((this.awaitingIds?.size ?? 0) > 0) return false;
    this.sleep.slept();
    this.shim = undefined;
    // Forgotten first, so its close is not taken for the server's own (closedBySdk); it keeps the
    // Protocol's onclose, so it goes with the server.
    this.#transport = undefined;
    this.#closeServer(true);
    return true;
  }

  /** Rebuilds a dropped server before a message is dispatched; undefined when the session is awake. */
  wake(): Promise<WakeOutcome> | undefined {
    return this.sleep?.wake(this);
  }

  /** Connects a fresh server from `createServer` (Sleeper: a wake's first step). */
  reconnect(): Promise<void> {
    return this.connect(this.deps.serverFor(this));
  }

  countMode(mode: 'json' | 'sse', methods: Iterable<string>): void {
    if (mode === 'json') this.deps.counters.add('responsesJson');
    else this.deps.counters.add('responsesSse');
    const m = this.deps.counters.metrics;
    if (m !== undefined) for (const method of methods) m.mode(method, mode);
  }

  observeDuration(method: string, ms: number): void {
    this.deps.counters.metrics?.duration(method, ms / 1000);
  }

  // ---- lifecycle -----------------------------------------------------------------------------

  /** Ends the session: answers or interrupts what is open, closes the SDK server, frees buffers. */
  end(reason: SessionEndReason, answer: Refusal = Refusals.sessionNotFound()): void {
    if (this.ended) return;
    this.#ended = true;
    if (this.#exchanges !== undefined) for (const ex of [...this.#exchanges]) ex.abandon(answer);
    this.#exchanges = undefined;
    this.inflightById = undefined;
    if (this.#postStreams !== undefined) for (const s of this.#postStreams.values()) s.interrupt();
    this.#postStreams = undefined;
    this.standaloneStream?.interrupt();
    this.sleep?.ended();
    // A stateless-mode session is one request's: its server must not keep its handler tables.
    this.#closeServer(this.id === undefined);
    if (this.store !== undefined && this.id !== undefined) void this.store.dropSession(this.id);
    this.deps.ended(this, reason);
  }

  /**
   * Closes and forgets the server; with `release`, also empties its handler tables once closed
   * (sdk/release.ts: for a server nobody else should hold, so it does not drag itself into the old
   * generation). A session's server in general is not released: an application may keep it.
   */
  #closeServer(release: boolean): void {
    const server = this.server;
    this.server = undefined;
    this.dispatcher = undefined;
    if (server === undefined) return;
    closeServed(server, release, (error) =>
      this.deps.options.logger?.error('session.close_failed', { error: String(error) }),
    );
  }
}
