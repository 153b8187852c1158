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
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { JsonRpcCode } from '../../jsonrpc/codes.js';
import {
  errorResponse,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../jsonrpc/message.js';
import { coalesceKeyOf } from '../../jsonrpc/partial.js';
import { changeOf } from '../../modern/bus.js';
import { LOG_LEVELS, MODERN_VERSIONS, ModernCode } from '../../modern/constants.js';
import { carryMrtr, INPUT_REQUIRED_METHODS, missingCapabilities } from '../../modern/mrtr.js';
import { checkParamHeaders, type HeaderDecl, headerDeclsOf } from '../../modern/param-headers.js';
import { type ModernRefusal, ModernRefusals, refusalBody, refusalHeaders } from '../../modern/refusal.js';
import { mapError, stampResult } from '../../modern/stamp.js';
import type { ModernInflight } from '../../modern/state.js';
import { toolErrorOf } from '../../modern/tool-error.js';
import type { ModernMeta } from '../../modern/validate.js';
import { encodeJsonFrame, OPEN_COMMENT } from '../../sse/encode.js';
import { type BridgeTarget, BridgeTransport } from '../bridge-transport.js';
import { createDispatcher, type Dispatcher } from '../dispatcher.js';
import type { Endpoint } from '../endpoint.js';
import { SSE_HEADERS } from '../event-stream.js';
import type { Policy } from '../exchange.js';
import type { PostInput } from '../post.js';
import { Refusals, sendRefusal } from '../refusal.js';
import type { McpServerLike } from '../session.js';
import { SseWriter } from '../sse-writer.js';
import { honouredFilter, ListenStream, parseFilter } from './listen.js';
import { type SharedServer, sharedServersOf } from './shared-server.js';
import { bindModern, classificationOf, envelopeOf, UNBOUND_METHODS } from './v2-binding.js';

type ServerInfo = { name: string; version: string };
type Waiter = (m: JsonRpcResponse | undefined) => void;

/** Pages of tools/list read to learn `x-mcp-header` declarations, at most. */
const MAX_TOOL_PAGES = 32;
let internalSeq = 0;

function serverInfoOf(server: unknown): ServerInfo | undefined {
  // The SDK keeps it on the low-level Server (McpServer wraps one as `.server`).
  const inner = (server as { server?: unknown }).server ?? server;
  const info = (inner as { _serverInfo?: unknown })._serverInfo;
  if (typeof info !== 'object' || info === null) return undefined;
  const { name, version } = info as Record<string, unknown>;
  return typeof name === 'string' && typeof version === 'string' ? { name, version } : undefined;
}

function levelAllowed(wanted: string | undefined, level: unknown): boolean {
  if (wanted === undefined) return false;
  const l = typeof level === 'string' ? LOG_LEVELS.indexOf(level) : -1;
  return l >= 0 && l >= LOG_LEVELS.indexOf(wanted);
}

export class ModernCall implements BridgeTarget, ModernInflight {
  readonly #ep: Endpoint;
  readonly #input: PostInput;
  readonly #req: JsonRpcRequest;
  readonly #meta: ModernMeta;
  readonly #policy: Policy;
  readonly #startedAt: number;
  #state: 'pending' | 'sse' | 'done' = 'pending';
  #writer: SseWriter | undefined;
  #server: McpServerLike | undefined;
  /** The principal's shared server, when createServer is declared stateless-safe (shared-server.ts). */
  #shared: SharedServer | undefined;
  /** The id the request has on the served server's wire (Sluice's own when shared). */
  #wireId: RequestId;
  #dispatch: Dispatcher | undefined;
  #serverInfo: ServerInfo | undefined;
  /** The served server is an SDK v2 one bound to this request's revision (v2-binding.ts). */
  #bound = false;
  /** The request was handed to the served server (its handler may have run). */
  #dispatched = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #internal = new Map<string, Waiter>();
  /** Gives the client's concurrency slot back (clientLimits.maxConcurrentRequests); once, at cleanup. */
  #release: (() => void) | undefined;

  constructor(
    ep: Endpoint,
    input: PostInput,
    req: JsonRpcRequest,
    meta: ModernMeta,
    policy: Policy,
    release?: (() => void) | undefined,
  ) {
    this.#ep = ep;
    this.#input = input;
    this.#req = req;
    this.#meta = meta;
    this.#policy = policy;
    this.#startedAt = ep.options.now();
    this.#wireId = req.id;
    this.#release = release;
  }

  /** Whether the request is over (answered, refused or cancelled). */
  get done(): boolean {
    return this.#state === 'done';
  }

  async run(): Promise<void> {
    const ep = this.#ep;
    const input = this.#input;
    ep.modern.inflight.add(this);
    ep.modern.requests++;
    input.sink.onClose(() => this.#onClose());
    const unbound = UNBOUND_METHODS.has(this.#req.method);
    const pooled = sharedServersOf(ep)?.get(input.auth?.principal);
    const shared = pooled === undefined ? undefined : await pooled;
    if (this.done) return this.#cleanup();
    // A bound shared server cannot describe itself (no initialize): discover/listen get their own.
    if (shared !== undefined && !(unbound && shared.bound)) {
      this.#shared = shared;
      this.#dispatch = shared.dispatch;
      this.#bound = shared.bound;
      this.#serverInfo = serverInfoOf(shared.server);
      return this.#serve();
    }
    const server = ep.createServer({
      sessionId: undefined,
      principal: input.auth?.principal,
      era: 'modern',
      protocolVersion: this.#meta.protocolVersion,
      clientCapabilities: this.#meta.clientCapabilities,
      clientInfo: this.#meta.clientInfo,
    });
    this.#server = server;
    const transport = new BridgeTransport(this, undefined);
    await server.connect(transport);
    if (this.done) return this.#cleanup();
    if (!unbound) this.#bound = bindModern(server, this.#meta.protocolVersion, this.#meta);
    this.#dispatch = createDispatcher(server, transport, ep.options.fastDispatch);
    this.#serverInfo = serverInfoOf(server);
    return this.#serve();
  }

  async #serve(): Promise<void> {
    const req = this.#req;
    if (req.method === 'server/discover') return this.#discover();
    if (req.method === 'subscriptions/listen') return this.#listen();
    if (req.method === 'tools/call') {
      const refused = await this.#checkParamHeaders();
      if (this.done) return;
      if (refused !== undefined) return this.#refuse(refused);
    }
    this.#armTimer();
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
   * Endpoint close: 503 if nothing was answered yet, else the stream ends; the handler is cancelled.
   * Retry-After only when the handler never ran: a request cut while running may have had effects
   * (Refusals.requestCut, as on the legacy path).
   */
  abandon(): void {
    if (this.done) return;
    const sink = this.#input.sink;
    if (this.#state === 'pending' && !sink.closed) {
      const r = this.#dispatched ? Refusals.requestCut() : Refusals.shuttingDown(1);
      sendRefusal(sink, r, this.#input.headers, this.#req.id);
    } else this.#writer?.end();
    this.#cancelHandler('the server is shutting down');
  }

  // ---- BridgeTarget: what the served server sends ------------------------------------------------

  route(message: JsonRpcMessage, related: string | number | undefined): Promise<void> | undefined {
    if ('method' in message) {
      if ('id' in message) {
        // A server-to-client request has no stream to go to in this era: fail it now so the tool
        // learns at once (deferred: the SDK is still inside its send()).
        this.#ep.counters.undeliverable++;
        const d = this.#dispatch;
        const id = message.id;
        queueMicrotask(() =>
          d?.response(
            errorResponse(
              id,
              JsonRpcCode.ServerError,
              'server-to-client requests are not available to 2026-07-28 clients; return an input_required result instead',
            ),
          ),
        );
        return undefined;
      }
      if (related === undefined || related !== this.#req.id) {
        // Unrelated: never on this stream. A list change or resource update feeds listen streams.
        const change = changeOf(message.method, message.params);
        if (change !== undefined) {
          this.#ep.modern.bus.publish(change);
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
    const id = message.id;
    if (typeof id === 'string') {
      const w = this.#internal.get(id);
      if (w !== undefined) {
        this.#internal.delete(id);
        w(message);
        return undefined;
      }
    }
    if (this.done || id !== this.#req.id) return undefined;
    return this.#answer(message);
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
      ...(auth === undefined
        ? {}
        : {
            authInfo: {
              token: '',
              clientId: auth.principal,
              scopes: auth.scopes === undefined ? [] : [...auth.scopes],
              ...(auth.expiresAt === undefined ? {} : { expiresAt: Math.floor(auth.expiresAt / 1000) }),
              extra: { principal: auth.principal },
            },
          }),
    };
  }

  /** A request of Sluice's own to the served server (never seen by the client). */
  #ask(method: string, params: Record<string, unknown>): Promise<JsonRpcResponse | undefined> {
    const id = `\u0000sluice-${++internalSeq}`;
    // A bound server refuses a request without the era's envelope: it is sent on the client's behalf.
    const p = this.#bound ? { ...params, _meta: envelopeOf(this.#meta) } : params;
    return new Promise((resolve) => {
      this.#internal.set(id, resolve);
      this.#shared?.claim(this, undefined, id);
      this.#dispatch?.request({ jsonrpc: '2.0', id, method, params: p }, this.#extra());
    });
  }

  async #checkParamHeaders(): Promise<ModernRefusal | undefined> {
    const ep = this.#ep;
    const principal = this.#input.auth?.principal;
    let tools = ep.modern.decls(principal, ep.options.now());
    if (tools === undefined) {
      tools = new Map<string, HeaderDecl[]>();
      let cursor: unknown;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const r = await this.#ask('tools/list', cursor === undefined ? {} : { cursor });
        if (this.done) return undefined;
        if (r === undefined || !('result' in r)) break;
        const list = r.result['tools'];
        if (Array.isArray(list)) {
          for (const t of list as { name?: unknown; inputSchema?: unknown }[]) {
            if (typeof t?.name !== 'string') continue;
            const decls = headerDeclsOf(t.inputSchema);
            if (decls.length > 0) tools.set(t.name, decls);
          }
        }
        cursor = r.result['nextCursor'];
        if (typeof cursor !== 'string') break;
      }
      ep.modern.setDecls(principal, ep.options.now(), tools);
    }
    const name = this.#req.params?.['name'];
    const decls = typeof name === 'string' ? tools.get(name) : undefined;
    if (decls === undefined) return undefined;
    return checkParamHeaders(this.#req.id, decls, this.#req.params?.['arguments'], (n) =>
      this.#input.head.header(n),
    );
  }

  /**
   * server/discover (MCP 2026-07-28 server/discover): what the served server reports to an
   * initialize, which Sluice sends it internally, with the modern versions this endpoint serves.
   */
  async #discover(): Promise<void> {
    const described = await this.#describe();
    if (this.done) return;
    if (described === undefined) {
      await this.#answer(
        errorResponse(this.#req.id, JsonRpcCode.InternalError, 'the server could not describe itself'),
      );
      return;
    }
    const init = described as { capabilities?: unknown; serverInfo?: unknown; instructions?: unknown };
    const info = init.serverInfo as ServerInfo | undefined;
    if (info !== undefined) this.#serverInfo = { name: info.name, version: info.version };
    const result: Record<string, unknown> = {
      supportedVersions: [...MODERN_VERSIONS],
      capabilities: init.capabilities ?? {},
      ...(info === undefined ? {} : { serverInfo: info }),
      ...(typeof init.instructions === 'string' ? { instructions: init.instructions } : {}),
    };
    await this.#answer({ jsonrpc: '2.0', id: this.#req.id, result });
  }

  /** The served server's initialize result (capabilities, serverInfo, instructions), asked internally. */
  async #describe(): Promise<Record<string, unknown> | undefined> {
    const r = await this.#ask('initialize', {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: this.#meta.clientCapabilities,
      clientInfo: this.#meta.clientInfo ?? { name: 'unknown', version: '0' },
    });
    return r !== undefined && 'result' in r ? r.result : undefined;
  }

  /**
   * subscriptions/listen: the filter is checked, narrowed to the server's capabilities, and the
   * stream handed to a ListenStream; this per-request server is not needed after that.
   */
  async #listen(): Promise<void> {
    const ep = this.#ep;
    const filter = parseFilter(this.#req.params);
    if (typeof filter === 'string') return this.#refuse(ModernRefusals.invalidMeta(this.#req.id, filter));
    if (!ep.modern.listenAllowed(this.#input.auth?.principal)) {
      ep.modern.listenRefusals++;
      return this.#refuse(ModernRefusals.tooManyListenStreams(this.#req.id));
    }
    const init = await this.#describe();
    if (this.done) return;
    const caps = (init?.['capabilities'] ?? {}) as Record<string, unknown>;
    const stream = new ListenStream(ep, this.#input, this.#req.id, honouredFilter(filter, caps));
    this.#state = 'done';
    this.#cleanup();
    if (this.#input.sink.closed || ep.closing) return;
    stream.open();
  }

  #armTimer(): void {
    const after = this.#ep.options.streamAfterMs;
    if (this.#policy !== 'auto' || after <= 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#state === 'pending' && !this.#input.sink.closed) this.#upgrade(OPEN_COMMENT);
    }, after);
    this.#timer.unref?.();
  }

  #upgrade(first: string): SseWriter {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const ep = this.#ep;
    const w = new SseWriter(this.#input.sink, ep.limits, ep.counters, ep.options.now);
    this.#writer = w;
    this.#state = 'sse';
    ep.live.add(w);
    ep.counters.responsesSse++;
    ep.counters.metrics?.mode(this.#req.method, 'sse');
    w.open(200, { ...SSE_HEADERS, ...this.#input.headers }, first);
    return w;
  }

  #related(json: string, key: string | undefined): Promise<void> | undefined {
    if (this.#state === 'pending') {
      if (this.#policy === 'json' || this.#input.sink.closed) {
        this.#ep.counters.undeliverable++;
        return undefined;
      }
      this.#upgrade('');
    }
    const w = this.#writer;
    return w === undefined ? undefined : this.#send(w, encodeJsonFrame(undefined, json), key);
  }

  /** Writes one frame; waits for room rather than closing when the queue is full. */
  #send(w: SseWriter, frame: string, key: string | undefined): Promise<void> | undefined {
    const out = w.write(frame, key);
    if (out === 'overflow') {
      return w.waitForRoom().then(() => {
        if (!this.done && !w.closed) return this.#send(w, frame, key);
        return undefined;
      });
    }
    if (out === 'written' || out === 'queued') this.#ep.counters.eventsWritten++;
    if (key === undefined && w.congested) return w.waitForRoom();
    return undefined;
  }

  #answer(message: JsonRpcResponse): Promise<void> | undefined {
    if (this.done) return undefined;
    const req = this.#req;
    let status = 200;
    let out: JsonRpcResponse;
    const named = 'result' in message ? toolErrorOf(message.result, req.id) : undefined;
    if (named !== undefined) message = named;
    if ('error' in message) {
      const m = mapError(message, req);
      status = m.status;
      out = m.error;
    } else {
      out = stampResult(message, req.method, this.#serverInfo);
      const gate = this.#gateInputRequired(out.result);
      if (gate !== undefined) {
        // -32021 is an HTTP 400 while nothing was committed; on a stream it stays in-band.
        status = gate.code === ModernCode.MissingRequiredClientCapability ? 400 : 200;
        out = errorResponse(req.id, gate.code, gate.message, gate.data);
      }
    }
    const json = JSON.stringify(out);
    const ep = this.#ep;
    ep.counters.metrics?.duration(req.method, (ep.options.now() - this.#startedAt) / 1000);
    const sink = this.#input.sink;
    let wait: Promise<void> | undefined;
    if (this.#state === 'pending' && !(this.#policy === 'sse' && status === 200)) {
      if (!sink.closed) {
        ep.counters.responsesJson++;
        ep.counters.metrics?.mode(req.method, 'json');
        sink.respond(status, { 'content-type': 'application/json', ...this.#input.headers }, json);
      }
    } else {
      const w = this.#writer ?? this.#upgrade('');
      const frame = encodeJsonFrame(undefined, json);
      const finish = (): Promise<void> | undefined => {
        const r = w.write(frame);
        if (r === 'overflow') return w.waitForRoom().then(finish);
        w.end();
        return undefined;
      };
      wait = finish();
    }
    this.#state = 'done';
    this.#cleanup();
    return wait;
  }

  /** MRTR duties: input_required only where allowed, and only with inputs the client can answer. */
  #gateInputRequired(
    result: Record<string, unknown>,
  ): { code: number; message: string; data?: unknown } | undefined {
    if (result['resultType'] !== 'input_required') return undefined;
    const method = this.#req.method;
    if (!INPUT_REQUIRED_METHODS.has(method)) {
      return {
        code: JsonRpcCode.InternalError,
        message: `Internal error: ${method} cannot return input_required`,
      };
    }
    const missing = missingCapabilities(result, this.#meta.clientCapabilities);
    if (missing === undefined) return undefined;
    const r = ModernRefusals.missingCapability(this.#req.id, missing);
    return { code: r.code, message: r.message, data: r.data };
  }

  #refuse(r: ModernRefusal): void {
    this.#ep.modern.refusals++;
    const sink = this.#input.sink;
    if (!sink.closed) {
      sink.respond(r.status, refusalHeaders(r, this.#input.headers), refusalBody(r));
    }
    this.#state = 'done';
    this.#cleanup();
  }

  #onClose(): void {
    if (this.done) return;
    this.#ep.modern.cancels++;
    this.#cancelHandler('the client closed the response stream');
  }

  /** Aborts the handler through the SDK (as a `notifications/cancelled` would) and lets go of everything. */
  #cancelHandler(reason: string): void {
    this.#state = 'done';
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
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const w = this.#writer;
    if (w !== undefined) this.#ep.live.delete(w);
    this.#ep.modern.inflight.delete(this);
    const release = this.#release;
    this.#release = undefined;
    release?.();
    const shared = this.#shared;
    if (shared !== undefined) {
      // The shared server lives on; only this request's ids are let go (its wire id only once
      // claimed: before that it holds the client's id, which may equal another request's wire id).
      if (this.#dispatched) shared.release(this.#wireId);
      for (const id of this.#internal.keys()) shared.release(id);
    }
    for (const waiter of this.#internal.values()) waiter(undefined);
    this.#internal.clear();
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    // After the SDK has finished sending the answer (it forgets the request's abort controller
    // then): closing earlier would abort the finished handler's signal, a DOMException per request.
    setImmediate(() => {
      server
        .close()
        .catch((error: unknown) =>
          this.#ep.options.logger?.error('modern.close_failed', { error: String(error) }),
        );
    });
  }
}
