/**
 * One modern (2026-07-28) request, served statelessly by a fresh server from `createServer`:
 * no session, no event ids, no priming event, no replay, no `Mcp-Session-Id`
 * (MCP 2026-07-28 basic/transports/streamable-http). It differs from the legacy one-shot path in
 * what a disconnect means and in what may reach the wire:
 * - The answer is chosen lazily: JSON unless something related to the request must stream first,
 *   so an error can still set its HTTP status (404 for -32601, 400 for -32021).
 * - Closing the response is cancellation (§"Cancellation"): the handler's `signal` aborts at once,
 *   and nothing more is written or kept.
 * - Outbound filter: only the response and notifications related to this request go out;
 *   `notifications/message` only at or above the request's `_meta` logLevel, never without one;
 *   a server-to-client request fails locally (MRTR replaces them, §"Receiving Messages").
 * - A blocked stream slows its producer (waits for room) instead of closing on overflow, since a
 *   close would now kill the request.
 * What Sluice answers itself (server/discover, subscriptions/listen, the `Mcp-Param-*` check) is
 * in own-answers.ts; the call hands it the few things it needs and keeps the answer.
 */
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse, RequestId } from '../../jsonrpc/message.js';
import { coalesceKeyOf } from '../../jsonrpc/partial.js';
import { finalAnswer, levelAllowed } from '../../modern/final-answer.js';
import { carryMrtr } from '../../modern/mrtr.js';
import { type ModernRefusal, refusalBody, refusalHeaders } from '../../modern/refusal.js';
import type { ModernMeta } from '../../modern/validate.js';
import { encodeJsonFrame, OPEN_COMMENT } from '../../sse/encode.js';
import type { Attributes } from '../../trace/otel-like.js';
import { Answer } from '../answer/answer.js';
import { type OverflowPolicy, SseConnection } from '../answer/connection.js';
import { changeOf } from '../change-bus.js';
import { Refusals, sendRefusal } from '../pipeline/refusal.js';
import type { Policy, PostInput } from '../pipeline/route.js';
import { authInfoOf } from '../sdk/auth-info.js';
import { type BridgeTarget, BridgeTransport } from '../sdk/bridge-transport.js';
import { createDispatcher, type Dispatcher } from '../sdk/dispatcher.js';
import { closeServed } from '../sdk/release.js';
import { assertDrivable, type McpServerLike } from '../sdk/server-like.js';
import { SSE_HEADERS } from '../stream/stream-context.js';
import type { ModernEra } from './era.js';
import { InternalAsks } from './internal-asks.js';
import { type ServerInfo, serverInfoOf } from './introspect.js';
import {
  answerDiscover,
  answerListen,
  cachedParamHeaderRefusal,
  type OwnAnswerHost,
  paramHeaderRefusal,
} from './own-answers.js';
import { failServerRequest } from './server-requests.js';
import type { SharedServer } from './shared-server.js';
import type { ModernInflight } from './state.js';
import { bindModern, classificationOf, envelopeOf, UNBOUND_METHODS } from './v2-binding.js';

export class ModernCall implements BridgeTarget, ModernInflight {
  readonly #era: ModernEra;
  readonly #input: PostInput;
  readonly #req: JsonRpcRequest;
  readonly #meta: ModernMeta;
  /** JSON now or upgraded to SSE; wait-for-room on a blocked socket (answer/answer.ts). */
  readonly #answer: Answer<SseConnection>;
  readonly #startedAt: number;
  #server: McpServerLike | undefined;
  /** The principal's shared server, when createServer is declared stateless-safe (shared-server.ts). */
  #shared: SharedServer | undefined;
  /** The id the request has on the served server's wire (Sluice's own when shared). */
  #wireId: RequestId;
  #dispatch: Dispatcher | undefined;
  /** The transport the request is dispatched on (its own, or the shared server's): its span's host. */
  #transport: BridgeTransport | undefined;
  #serverInfo: ServerInfo | undefined;
  /** The served server is an SDK v2 one bound to this request's revision (v2-binding.ts). */
  #bound = false;
  /** The request was handed to the served server (its handler may have run). */
  #dispatched = false;
  /** Sluice's own asks to the served server; made by the first (a tools/call mostly asks nothing). */
  #internal: InternalAsks | undefined;
  /** Gives the client's concurrency slot back (clientLimits.maxConcurrentRequests); once, at cleanup. */
  #release: (() => void) | undefined;

  constructor(
    era: ModernEra,
    input: PostInput,
    req: JsonRpcRequest,
    meta: ModernMeta,
    policy: Policy,
    release?: (() => void) | undefined,
  ) {
    this.#era = era;
    this.#input = input;
    this.#req = req;
    this.#meta = meta;
    this.#answer = new Answer(input.sink, policy, 'wait-for-room', (overflow, fromTimer) =>
      this.#openStream(overflow, fromTimer),
    );
    this.#startedAt = era.core.options.now();
    this.#wireId = req.id;
    this.#release = release;
  }

  /** Whether the request is over (answered, refused or cancelled). */
  get done(): boolean {
    return this.#answer.done;
  }

  async run(): Promise<void> {
    const era = this.#era;
    const input = this.#input;
    era.state.callStarted(this);
    era.state.counts.add('requests');
    input.sink.onClose(() => this.#onClose());
    const unbound = UNBOUND_METHODS.has(this.#req.method);
    const pooled = era.shared?.get(input.auth?.principal);
    const shared = pooled === undefined ? undefined : await pooled;
    if (this.done) return this.#cleanup();
    // A bound shared server cannot describe itself (no initialize): discover/listen get their own.
    if (shared !== undefined && !(unbound && shared.bound)) {
      this.#shared = shared;
      this.#dispatch = shared.dispatch;
      this.#transport = shared.transport;
      this.#bound = shared.bound;
      this.#serverInfo = serverInfoOf(shared.server);
      return this.#serve();
    }
    const server = era.core.createServer({
      sessionId: undefined,
      principal: input.auth?.principal,
      era: 'modern',
      protocolVersion: this.#meta.protocolVersion,
      clientCapabilities: this.#meta.clientCapabilities,
      clientInfo: this.#meta.clientInfo,
    });
    assertDrivable(server);
    this.#server = server;
    const transport = new BridgeTransport(this, undefined);
    this.#transport = transport;
    await server.connect(transport);
    if (this.done) return this.#cleanup();
    if (!unbound) this.#bound = bindModern(server, this.#meta.protocolVersion, this.#meta);
    this.#dispatch = createDispatcher(server, transport, era.core.options.fastDispatch);
    this.#serverInfo = serverInfoOf(server);
    return this.#serve();
  }

  async #serve(): Promise<void> {
    const req = this.#req;
    if (req.method === 'server/discover') return answerDiscover(this.#ownHost());
    if (req.method === 'subscriptions/listen') return answerListen(this.#ownHost());
    if (req.method === 'tools/call') {
      const cached = cachedParamHeaderRefusal(this.#era, this.#input, req);
      const refused = cached === 'uncached' ? await paramHeaderRefusal(this.#ownHost()) : cached;
      if (this.done || refused === 'answered') return;
      if (refused !== undefined) return this.#refuse(refused);
    }
    this.#answer.armTimer(this.#era.core.options.streamAfterMs);
    this.#dispatched = true;
    const shared = this.#shared;
    if (shared !== undefined) {
      this.#wireId = shared.claim(this, req.id);
      this.#dispatch?.request({ ...carryMrtr(req), id: this.#wireId }, this.#extra());
      return;
    }
    this.#dispatch?.request(carryMrtr(req), this.#extra());
  }

  /**
   * ModernEra close: 503 if nothing was answered yet, else the stream ends; the handler is cancelled.
   * Retry-After only when the handler never ran: a request cut while running may have had effects
   * (Refusals.requestCut, as on the legacy path).
   */
  abandon(): void {
    if (this.done) return;
    const sink = this.#input.sink;
    if (this.#answer.pending && !sink.closed) {
      const r = this.#dispatched ? Refusals.requestCut() : Refusals.shuttingDown(1);
      sendRefusal(sink, r, this.#input.headers, this.#req.id);
    } else {
      this.#streamClosed('server');
      this.#answer.stream?.end();
    }
    this.#cancelHandler('the server is shutting down');
  }

  // ---- BridgeTarget: what the served server sends ------------------------------------------------

  route(message: JsonRpcMessage, related: string | number | undefined): Promise<void> | undefined {
    if ('method' in message) {
      if ('id' in message) {
        // A server-to-client request has no stream to go to in this era (server-requests.ts).
        this.#era.core.counters.add('undeliverable');
        failServerRequest(this.#dispatch, message.id);
        return undefined;
      }
      if (related === undefined || related !== this.#req.id) {
        // Unrelated: never on this stream. A list change or resource update feeds listen streams.
        const change = changeOf(message.method, message.params);
        if (change !== undefined) {
          this.#era.state.bus.publish(change);
        }
        return undefined;
      }
      if (this.done) return undefined;
      if (
        message.method === 'notifications/message' &&
        !levelAllowed(this.#meta.logLevel, message.params?.['level'])
      )
        return undefined;
      if (message.method === 'notifications/cancelled') return undefined;
      return this.#related(JSON.stringify(message), coalesceKeyOf(message));
    }
    if (this.#internal?.settle(message) === true) return undefined;
    if (this.done || message.id !== this.#req.id) return undefined;
    return this.#respond(message);
  }

  /**
   * A serialized related `notifications/progress` (BridgeTarget): what `route` does with one — on
   * this request's stream when related to it, nothing otherwise (progress is no list change).
   */
  routeProgress(related: RequestId, json: string, key: string | undefined): Promise<void> | undefined {
    if (related !== this.#req.id || this.done) return undefined;
    return this.#related(json, key);
  }

  closedBySdk(): void {
    if (!this.done) this.#cancelHandler('the server closed');
  }

  // ---- internals ---------------------------------------------------------------------------------

  #extra() {
    const auth = this.#input.auth;
    return {
      requestInfo: { headers: this.#input.rawHeaders },
      ...(this.#bound ? { classification: classificationOf(this.#meta.protocolVersion) } : {}),
      ...(auth === undefined ? {} : { authInfo: authInfoOf(auth) }),
    };
  }

  /** A request of Sluice's own to the served server (never seen by the client). */
  #ask(method: string, params: Record<string, unknown>): Promise<JsonRpcResponse | undefined> {
    this.#internal ??= new InternalAsks();
    const { id, answer } = this.#internal.open();
    // A bound server refuses a request without the era's envelope: it is sent on the client's behalf.
    const p = this.#bound ? { ...params, _meta: envelopeOf(this.#meta) } : params;
    this.#shared?.claim(this, undefined, id);
    this.#dispatch?.request({ jsonrpc: '2.0', id, method, params: p }, this.#extra());
    return answer;
  }

  /** What the answers Sluice gives itself need of this call (own-answers.ts); made only for those. */
  #ownHost(): OwnAnswerHost {
    return {
      era: this.#era,
      input: this.#input,
      req: this.#req,
      meta: this.#meta,
      done: () => this.done,
      ask: (method, params) => this.#ask(method, params),
      respond: (message) => this.#respond(message),
      refuse: (r) => this.#refuse(r),
      described: (info) => {
        this.#serverInfo = info;
      },
      handOver: () => {
        this.#answer.finish();
        this.#cleanup();
      },
    };
  }

  /** The answer becomes a stream: SSE headers, then the first bytes (a comment when by the timer). */
  #openStream(overflow: OverflowPolicy, fromTimer: boolean): SseConnection {
    const core = this.#era.core;
    const c = new SseConnection(this.#input.sink, core.connections, overflow);
    core.counters.add('responsesSse');
    core.counters.metrics?.mode(this.#req.method, 'sse');
    c.writer.onFirstBytes(() =>
      this.#streamEvent('mcp.stream.first_byte', {
        'mcp.stream.first_byte_ms': core.options.now() - this.#startedAt,
      }),
    );
    c.open(200, { ...SSE_HEADERS, ...this.#input.headers }, fromTimer ? OPEN_COMMENT : '');
    // The same span event a session's POST stream gets (observe/operations.ts).
    this.#streamEvent('mcp.stream.upgraded', {
      ...(this.#answer.policy === 'sse' ? { 'mcp.stream.from_start': true } : {}),
      ...(fromTimer ? { 'mcp.stream.after_ms': core.options.streamAfterMs } : {}),
    });
    return c;
  }

  /** A span event on this request's operation, while it is observed. */
  #streamEvent(name: string, attributes: Attributes): void {
    if (!this.#dispatched) return;
    this.#transport?.operation(this.#wireId)?.event(name, attributes);
  }

  /** The stream is closing before the answer: a span event with why and how long writes stalled. */
  #streamClosed(reason: 'client' | 'server'): void {
    const c = this.#answer.streaming ? this.#answer.stream : undefined;
    if (c === undefined) return;
    this.#streamEvent('mcp.stream.closed', {
      'mcp.stream.close_reason': reason,
      'mcp.stream.write_stall_ms': c.writer.stallMs,
    });
  }

  /** A related message: on the stream (upgrading the answer), or undeliverable without one. */
  #related(json: string, key: string | undefined): Promise<void> | undefined {
    const c = this.#answer.carrier();
    if (c === undefined) {
      this.#era.core.counters.add('undeliverable');
      return undefined;
    }
    return c.send(encodeJsonFrame(undefined, json), key, () => !this.done);
  }

  #respond(message: JsonRpcResponse): Promise<void> | undefined {
    if (this.done) return undefined;
    const req = this.#req;
    const { status, out } = finalAnswer(message, req, this.#meta.clientCapabilities, this.#serverInfo);
    const json = JSON.stringify(out);
    const era = this.#era;
    era.core.counters.metrics?.duration(req.method, (era.core.options.now() - this.#startedAt) / 1000);
    const answer = this.#answer;
    let wait: Promise<void> | undefined;
    // An error keeps its HTTP status while nothing was committed, even for a client preferring SSE.
    if (answer.answersJson(status !== 200)) {
      if (!answer.sinkClosed) {
        era.core.counters.add('responsesJson');
        era.core.counters.metrics?.mode(req.method, 'json');
      }
      answer.respond(status, { 'content-type': 'application/json', ...this.#input.headers }, json);
    } else {
      const c = answer.upgrade();
      answer.finish();
      wait = c?.finish(encodeJsonFrame(undefined, json));
    }
    this.#cleanup();
    return wait;
  }

  #refuse(r: ModernRefusal): void {
    this.#era.state.counts.add('refusals');
    this.#answer.respond(r.status, refusalHeaders(r, this.#input.headers), refusalBody(r));
    this.#cleanup();
  }

  #onClose(): void {
    if (this.done) return;
    this.#era.state.counts.add('cancels');
    this.#streamClosed('client');
    this.#cancelHandler('the client closed the response stream');
  }

  /** Aborts the handler through the SDK (as a `notifications/cancelled` would) and lets go of everything. */
  #cancelHandler(reason: string): void {
    this.#answer.finish();
    // Only a dispatched request has a handler to abort (on a shared server, under its own wire id:
    // the client's id means nothing there and could name another request).
    if (this.#dispatched) {
      this.#dispatch?.notification({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: this.#wireId, reason },
      });
    }
    this.#cleanup();
  }

  #cleanup(): void {
    this.#era.state.callEnded(this);
    const release = this.#release;
    this.#release = undefined;
    release?.();
    const shared = this.#shared;
    if (shared !== undefined) {
      // The shared server lives on; only this request's ids are let go (its wire id only once
      // claimed: before that it holds the client's id, which may equal another request's wire id).
      if (this.#dispatched) shared.release(this.#wireId);
      if (this.#internal !== undefined) for (const id of this.#internal.ids()) shared.release(id);
    }
    this.#internal?.clear();
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    // After the SDK has finished sending the answer (it forgets the request's abort controller
    // then): closing earlier would abort the finished handler's signal, a DOMException per request.
    // Built for this request alone: nothing may keep its handler tables once it is closed (sdk/release.ts).
    setImmediate(() =>
      closeServed(server, true, (error) =>
        this.#era.core.options.logger?.error('modern.close_failed', { error: String(error) }),
      ),
    );
  }
}
