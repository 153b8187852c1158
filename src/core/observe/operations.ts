/**
 * Per-request observation of one endpoint: a server span per JSON-RPC request (when tracing is
 * configured and a tracer provider is registered) and the semantic-convention duration metric.
 *
 * How a request finds it: the pipeline records a RequestScope for each POST it passes, keyed by the
 * request's header object — the very object both eras hand the SDK as `extra.requestInfo.headers`
 * — so the dispatcher (sdk/dispatcher.ts), which sees every request an SDK server is given, finds
 * the scope without either era passing anything new. The response is seen where every outbound
 * message goes (sdk/bridge-transport.ts), so the span ends when the answer leaves, whichever era
 * and answer mode produced it.
 *
 * Parent (OpenTelemetry MCP semantic conventions; MCP 2026-07-28 SEP-414): the `_meta` trace
 * context when the request carries a valid one, with a link to the ambient HTTP span (or the
 * HTTP `traceparent` header's context when no HTTP instrumentation made a span); else the ambient
 * HTTP span; else the header's context. Invalid values are ignored (trace/trace-context.ts).
 */
import { BoundedMap } from '../../flow/bounded-map.js';
import type { RequestId } from '../../jsonrpc/message.js';
import { META_PROTOCOL_VERSION } from '../../modern/constants.js';
import { SPAN_KIND_SERVER, tracerActive, withCarried } from '../../trace/otel-bridge.js';
import type {
  Attributes,
  LinkLike,
  OtelApiLike,
  OtelContext,
  SpanContextLike,
  TracerLike,
} from '../../trace/otel-like.js';
import { carriedByHeaders, carriedByMeta } from '../../trace/trace-context.js';
import { type CancelCause, Operation, type OperationSink } from './operation.js';
import type { Probe, StreamEvent } from './probe.js';
import {
  type OperationHost,
  RequestScope,
  type ScopeOwner,
  type ScopeView,
  scopes,
} from './request-scope.js';
import type { SemconvMetrics } from './semconv-metrics.js';

/** The `tracing` option: the application's `@opentelemetry/api` module, and optionally its tracer. */
export interface TracingOptions {
  /** `import * as api from '@opentelemetry/api'` (Sluice never imports it itself: an optional peer). */
  api: OtelApiLike;
  /** Default: `api.trace.getTracer('sluice')`, i.e. the globally registered provider's. */
  tracer?: TracerLike;
}

/**
 * Ids Sluice gives requests of its own: `\0sluice-<n>` for what the 2026-07-28 era asks a served
 * server internally (era-2026/call.ts: its initialize for server/discover, its tools/list for
 * `x-mcp-header`), never seen by a client; `\0sluice-m<n>` is a client's request on a shared server
 * under a wire id (era-2026/shared-server.ts), traced under the client's id.
 */
function kindOfId(id: RequestId): 'internal' | 'shared' | 'client' {
  if (typeof id !== 'string' || !id.startsWith('\u0000sluice-')) return 'client';
  return id.charCodeAt(8) === 0x6d /* m */ ? 'shared' : 'internal';
}

interface StreamTrack {
  /** Finds the operations of `ids` when an event comes (they may be dispatched after the stream opened). */
  readonly host: { operation(id: RequestId): Operation | undefined };
  readonly ids: readonly RequestId[];
  readonly stream: number;
  opens: number;
  open: boolean;
}

/** Stream tracks kept at most (a track goes when its stream closes with no operation left). */
const MAX_TRACKS = 4096;

function parseHost(host: string | undefined): { address: string; port: number | undefined } | undefined {
  if (host === undefined || host === '') return undefined;
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(host);
  if (m === null) return undefined;
  const address = (m[1] ?? '').replace(/^\[|\]$/g, '');
  return { address, port: m[2] === undefined ? undefined : Number(m[2]) };
}

export class Operations implements OperationSink, ScopeOwner {
  readonly #api: OtelApiLike | undefined;
  readonly #tracer: TracerLike | undefined;
  readonly #active: () => boolean;
  readonly #metrics: SemconvMetrics | undefined;
  readonly #closing: () => boolean;
  readonly #now: () => number;
  /** Creation order: beyond MAX_TRACKS the oldest track goes (flow/bounded-map.ts: in O(1)). */
  readonly #streams = new BoundedMap<string, StreamTrack>(MAX_TRACKS, (_key, t) => this.#unbind(t));
  /** The same tracks by transport and request id, for a request dispatched after its stream opened. */
  readonly #byHost = new WeakMap<object, Map<RequestId, StreamTrack>>();

  private constructor(
    tracing: TracingOptions | undefined,
    metrics: SemconvMetrics | undefined,
    closing: () => boolean,
    now: () => number,
  ) {
    this.#api = tracing?.api;
    this.#tracer = tracing?.tracer ?? tracing?.api.trace.getTracer('sluice');
    this.#active =
      tracing === undefined ? () => false : tracerActive(tracing.api, tracing.tracer !== undefined);
    this.#metrics = metrics;
    this.#closing = closing;
    this.#now = now;
  }

  /** Undefined when there is nothing to observe (no tracing, metrics off): the pipeline skips it all. */
  static create(
    tracing: TracingOptions | undefined,
    metrics: SemconvMetrics | undefined,
    closing: () => boolean,
    now: () => number,
  ): Operations | undefined {
    if (tracing === undefined && metrics === undefined) return undefined;
    return new Operations(tracing, metrics, closing, now);
  }

  /** Whether spans are made now: tracing configured and a provider registered (or a tracer given). */
  get tracing(): boolean {
    return this.#active();
  }

  /** Pipeline: a POST passed the checks; its requests will find this scope through `headers`. */
  scope(view: ScopeView, sink: { readonly closed: boolean }): void {
    const ambient = this.tracing ? this.#api?.context.active() : undefined;
    scopes.set(view.headers, new RequestScope(this, view, sink, ambient));
  }

  /** Dispatcher: runs `run` (the SDK's dispatch of `m`) inside the request's span, tracked on `host`. */
  dispatch(
    scope: RequestScope,
    m: { id: RequestId; method: string; params?: Record<string, unknown> | undefined },
    host: OperationHost,
    run: () => void,
  ): void {
    const kind = kindOfId(m.id);
    // The 2026-07-28 era answers server/discover and opens subscriptions/listen itself, from the
    // served server's initialize result asked internally: that ask stands for the client's request.
    const single = scope.request;
    const bySluice =
      kind === 'internal' &&
      m.method === 'initialize' &&
      (single?.method === 'server/discover' || single?.method === 'subscriptions/listen')
        ? single
        : undefined;
    if (kind === 'internal' && bySluice === undefined) {
      run();
      return;
    }
    const params = bySluice === undefined ? m.params : bySluice.params;
    const method = bySluice === undefined ? m.method : bySluice.method;
    const name = method === 'tools/call' || method === 'prompts/get' ? params?.['name'] : undefined;
    const target = typeof name === 'string' ? name : undefined;
    const meta = params?.['_meta'] as Record<string, unknown> | undefined;
    const v =
      (method === 'initialize' ? params?.['protocolVersion'] : meta?.[META_PROTOCOL_VERSION]) ??
      scope.header('mcp-protocol-version');
    const version = typeof v === 'string' ? v : undefined;
    const requestId = kind === 'client' ? m.id : single?.id;
    let ctx: OtelContext | undefined;
    let span: Operation['span'];
    const api = this.#api;
    if (api !== undefined && this.#tracer !== undefined && this.tracing) {
      const base = scope.ambient ?? api.ROOT_CONTEXT;
      const ambientSpan = valid(api.trace.getSpanContext(base));
      const fromHeader = carriedByHeaders((n) => scope.header(n));
      const fromMeta = carriedByMeta(meta);
      let parent = base;
      const links: LinkLike[] = [];
      if (fromMeta?.parent !== undefined) {
        parent = withCarried(api, base, fromMeta);
        const http =
          ambientSpan ??
          (fromHeader === undefined
            ? undefined
            : valid(api.trace.getSpanContext(withCarried(api, base, fromHeader))));
        // A client that sent the same context in both has no separate HTTP span to link to.
        if (http !== undefined && http.spanId !== fromMeta.parent.spanId)
          links.push({ context: http, attributes: { 'mcp.link': 'http' } });
      } else if (ambientSpan === undefined && fromHeader !== undefined) {
        parent = withCarried(api, base, fromHeader);
      } else if (fromMeta?.baggage !== undefined) {
        parent = withCarried(api, base, fromMeta);
      }
      const attributes: Attributes = {
        'mcp.method.name': method,
        'network.transport': 'tcp',
        'network.protocol.name': 'http',
      };
      if (target !== undefined) {
        if (method === 'tools/call') {
          attributes['gen_ai.tool.name'] = target;
          attributes['gen_ai.operation.name'] = 'execute_tool';
        } else attributes['gen_ai.prompt.name'] = target;
      }
      const uri = method.startsWith('resources/') ? params?.['uri'] : undefined;
      if (typeof uri === 'string') attributes['mcp.resource.uri'] = uri;
      if (requestId !== undefined) attributes['jsonrpc.request.id'] = String(requestId);
      if (host.sessionId !== undefined) attributes['mcp.session.id'] = host.sessionId;
      if (version !== undefined) attributes['mcp.protocol.version'] = version;
      const server = parseHost(scope.header('host'));
      if (server !== undefined) {
        attributes['server.address'] = server.address;
        if (server.port !== undefined) attributes['server.port'] = server.port;
      }
      const s = this.#tracer.startSpan(
        target === undefined ? method : `${method} ${target}`,
        { kind: SPAN_KIND_SERVER, attributes, ...(links.length > 0 ? { links } : {}) },
        parent,
      );
      span = s;
      ctx = api.trace.setSpan(parent, s);
    }
    const op = new Operation(this, this.#now, method, target, version, span, scope);
    host.track(m.id, op);
    if (span !== undefined) {
      // An answer that was SSE from its start opened its stream before this dispatch.
      const t = this.#byHost.get(host)?.get(m.id);
      if (t !== undefined && t.opens > 0)
        op.event('mcp.stream.upgraded', { 'mcp.stream.number': t.stream, 'mcp.stream.from_start': true });
    }
    try {
      if (ctx === undefined || api === undefined) run();
      else api.context.with(ctx, run);
    } catch (error) {
      op.threw(error);
      throw error;
    }
  }

  /** Why a request is being cancelled, when Sluice's own code (not the client) cancels it. */
  causeOfCancel(scope: { sinkClosed(): boolean } | undefined): CancelCause {
    if (this.#closing()) return 'shutdown';
    if (scope?.sinkClosed() === true) return 'client-closed';
    return 'server';
  }

  /** The transport closed with operations open: cancelled by the session's end or the shutdown. */
  closeCause(): CancelCause {
    return this.#closing() ? 'shutdown' : 'session-end';
  }

  // ---- OperationSink -----------------------------------------------------------------------------

  ended(op: Operation, seconds: number, errorType: string | undefined): void {
    this.#metrics?.operation(op.method, op.tool, errorType, op.version, seconds);
  }

  // ---- stream life as span events ----------------------------------------------------------------

  /** A session's POST stream carries the answers of `ids` (era-2025/session.ts newPostStream). */
  bindStream(
    sessionHash: string,
    stream: number,
    host: { operation(id: RequestId): Operation | undefined },
    ids: readonly RequestId[],
  ): void {
    if (!this.tracing) return;
    const t: StreamTrack = { host, ids, stream, opens: 0, open: false };
    this.#streams.set(`${sessionHash}:${stream}`, t);
    let byId = this.#byHost.get(host);
    if (byId === undefined) {
      byId = new Map();
      this.#byHost.set(host, byId);
    }
    for (const id of ids) byId.set(id, t);
  }

  #drop(key: string): void {
    const t = this.#streams.get(key);
    if (t === undefined) return;
    this.#streams.delete(key);
    this.#unbind(t);
  }

  /** Forgets a track dropped from #streams in its transport's index of request ids. */
  #unbind(t: StreamTrack): void {
    const byId = this.#byHost.get(t.host);
    if (byId !== undefined) for (const id of t.ids) if (byId.get(id) === t) byId.delete(id);
  }

  /** The operations a track's events go to: those of its requests still in flight. */
  #opsOf(t: StreamTrack): Operation[] {
    const out: Operation[] = [];
    for (const id of t.ids) {
      const op = t.host.operation(id);
      if (op !== undefined) out.push(op);
    }
    return out;
  }

  /** `inner` (the diagnostics channel binding), plus the span events of traced streams. */
  probe(inner: Probe | undefined): Probe | undefined {
    if (this.#api === undefined) return inner;
    const streams = this.#streams;
    const track = (e: StreamEvent): StreamTrack | undefined =>
      e.kind === 'post' ? streams.get(`${e.session}:${e.stream}`) : undefined;
    return {
      sessionStart: (e) => inner?.sessionStart(e),
      sessionEnd: (e) => inner?.sessionEnd(e),
      streamOpen: (e) => {
        inner?.streamOpen(e);
        const t = track(e);
        if (t === undefined) return;
        const first = t.opens === 0;
        const attrs: Attributes = { 'mcp.stream.number': e.stream };
        if (!first) {
          attrs['mcp.stream.takeover'] = t.open;
          if (e.cursor !== undefined) attrs['mcp.stream.cursor'] = e.cursor;
          if (e.replayed !== undefined) attrs['mcp.stream.replayed'] = e.replayed;
        }
        t.opens++;
        t.open = true;
        // The first attach writes the SSE headers and the first frame at once: the answer's first byte.
        for (const op of this.#opsOf(t))
          op.event(first ? 'mcp.stream.upgraded' : 'mcp.stream.resumed', attrs);
      },
      streamClose: (e) => {
        inner?.streamClose(e);
        const t = track(e);
        if (t === undefined) return;
        t.open = false;
        const name = e.reason === 'overflow' ? 'mcp.stream.overflow_closed' : 'mcp.stream.closed';
        const ops = this.#opsOf(t);
        for (const op of ops)
          op.event(name, { 'mcp.stream.number': e.stream, 'mcp.stream.close_reason': e.reason });
        if (ops.length === 0) this.#drop(`${e.session}:${e.stream}`);
      },
    };
  }
}

const ZERO_TRACE = /^0+$/;
function valid(sc: SpanContextLike | undefined): SpanContextLike | undefined {
  if (sc === undefined || sc.traceId.length !== 32 || ZERO_TRACE.test(sc.traceId)) return undefined;
  return sc;
}
