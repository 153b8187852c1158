/**
 * Client spans and metrics (OpenTelemetry MCP semantic conventions), through the application's
 * `@opentelemetry/api` module handed in as `tracing: { api }` (an optional peer: the client, bundled
 * for browsers too, never imports it). For every request — `initialize`, `server/discover` and list
 * calls included — a CLIENT span `{mcp.method.name} {target}`, child of the caller's active context,
 * and its context injected into `params._meta` (`traceparent`, `tracestate`, `baggage`; MCP
 * 2026-07-28, SEP-414) and into the HTTP `traceparent` header. A `_meta.traceparent` the caller set
 * is never replaced: that request keeps the caller's `_meta` as is. With no tracer provider
 * registered, nothing is done at all.
 */
import { InvalidOptionError } from '../errors.js';
import { outgoingOf, SPAN_KIND_CLIENT, STATUS_ERROR, tracerActive } from '../trace/otel-bridge.js';
import type {
  Attributes,
  HistogramLike,
  MeterLike,
  OtelApiLike,
  SpanLike,
  TracerLike,
} from '../trace/otel-like.js';
import type { WireMessage } from './wire.js';

export interface ClientTracingOptions {
  /** `import * as api from '@opentelemetry/api'`. */
  api: OtelApiLike;
  /** Default: `api.trace.getTracer('sluice')`. */
  tracer?: TracerLike;
  /** For `mcp.client.operation.duration` and `mcp.client.session.duration`. Default: `api.metrics.getMeter('sluice')`. */
  meter?: MeterLike;
}

/** Seconds: the conventions' advised boundaries for MCP durations. */
const BOUNDARIES = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** What a traced request carries: the message to send, the header, and its span's end. */
export interface TracedRequest {
  readonly message: WireMessage;
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
  readonly op: ClientOperation | undefined;
}

export class ClientOperation {
  readonly #owner: ClientTracing;
  readonly #span: SpanLike | undefined;
  readonly #attrs: Attributes;
  readonly #start: number;
  #done = false;

  constructor(owner: ClientTracing, span: SpanLike | undefined, attrs: Attributes, start: number) {
    this.#owner = owner;
    this.#span = span;
    this.#attrs = attrs;
    this.#start = start;
  }

  /** The response arrived: a result (maybe a tool error) or a JSON-RPC error. */
  answered(message: WireMessage): void {
    const error = message.error as { code?: unknown; message?: unknown } | undefined;
    if (error !== undefined) {
      const code = typeof error.code === 'number' ? String(error.code) : 'unknown';
      this.#span?.setAttribute('rpc.response.status_code', code);
      this.failed(code, typeof error.message === 'string' ? error.message : undefined);
      return;
    }
    const result = message.result as { isError?: unknown } | undefined;
    if (result?.isError === true) this.failed('tool_error', undefined);
    else this.#end(undefined);
  }

  /** No response: a transport failure (the typed error's code) or the caller's cancellation. */
  failed(errorType: string, message: string | undefined): void {
    if (this.#done) return;
    this.#span?.setAttribute('error.type', errorType);
    if (errorType !== 'cancelled')
      this.#span?.setStatus(message === undefined ? { code: STATUS_ERROR } : { code: STATUS_ERROR, message });
    this.#end(errorType);
  }

  #end(errorType: string | undefined): void {
    if (this.#done) return;
    this.#done = true;
    this.#span?.end();
    this.#owner.record(this.#attrs, errorType, this.#start);
  }
}

export class ClientTracing {
  readonly #api: OtelApiLike;
  readonly #tracer: TracerLike;
  readonly #active: () => boolean;
  readonly #meter: MeterLike;
  #operation: HistogramLike | undefined;
  #session: HistogramLike | undefined;
  readonly #now: () => number;

  constructor(o: ClientTracingOptions, now: () => number) {
    this.#api = o.api;
    this.#tracer = o.tracer ?? o.api.trace.getTracer('sluice');
    this.#active = tracerActive(o.api, o.tracer !== undefined);
    this.#meter = o.meter ?? o.api.metrics.getMeter('sluice');
    this.#now = now;
  }

  /** Whether spans are made: a tracer given, or a provider registered (otel-bridge.ts tracerActive). */
  get active(): boolean {
    return this.#active();
  }

  /** Starts the request's span and returns the message with the context injected into its `_meta`. */
  begin(
    request: WireMessage,
    url: URL,
    sessionId: string | undefined,
    version: string | undefined,
  ): TracedRequest {
    const method = String(request.method);
    const params = (request.params ?? {}) as Record<string, unknown>;
    const name = method === 'tools/call' || method === 'prompts/get' ? params['name'] : undefined;
    const target = typeof name === 'string' ? name : undefined;
    const attrs: Attributes = { 'mcp.method.name': method };
    if (target !== undefined) {
      if (method === 'tools/call') attrs['gen_ai.tool.name'] = target;
      else attrs['gen_ai.prompt.name'] = target;
    }
    if (version !== undefined) attrs['mcp.protocol.version'] = version;
    const start = this.#now();
    if (!this.active) {
      return {
        message: request,
        traceparent: undefined,
        tracestate: undefined,
        op: new ClientOperation(this, undefined, attrs, start),
      };
    }
    const spanAttrs: Attributes = {
      ...attrs,
      'jsonrpc.request.id': String(request.id),
      'network.transport': 'tcp',
      'server.address': url.hostname.replace(/^\[|\]$/g, ''),
      'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    };
    if (method === 'tools/call') spanAttrs['gen_ai.operation.name'] = 'execute_tool';
    if (sessionId !== undefined) spanAttrs['mcp.session.id'] = sessionId;
    const api = this.#api;
    const parent = api.context.active();
    const span = this.#tracer.startSpan(
      target === undefined ? method : `${method} ${target}`,
      { kind: SPAN_KIND_CLIENT, attributes: spanAttrs },
      parent,
    );
    const out = outgoingOf(api, api.trace.setSpan(parent, span));
    const meta = params['_meta'] as Record<string, unknown> | undefined;
    let message = request;
    // Never clobber a parent the caller put in _meta itself (its own propagation wins).
    if (meta?.['traceparent'] === undefined && out.traceparent !== undefined) {
      const injected: Record<string, unknown> = { ...meta, traceparent: out.traceparent };
      if (out.tracestate !== undefined) injected['tracestate'] = out.tracestate;
      if (out.baggage !== undefined) injected['baggage'] = out.baggage;
      message = { ...request, params: { ...params, _meta: injected } };
    }
    return {
      message,
      traceparent: out.traceparent,
      tracestate: out.tracestate,
      op: new ClientOperation(this, span, attrs, start),
    };
  }

  /** mcp.client.operation.duration (seconds). */
  record(attrs: Attributes, errorType: string | undefined, start: number): void {
    this.#operation ??= this.#meter.createHistogram('mcp.client.operation.duration', {
      unit: 's',
      description: 'Duration of an MCP request, as seen by the client.',
      advice: { explicitBucketBoundaries: BOUNDARIES },
    });
    this.#operation.record(
      (this.#now() - start) / 1000,
      errorType === undefined ? attrs : { ...attrs, 'error.type': errorType },
    );
  }

  /** mcp.client.session.duration (seconds), when the transport closes a session it had. */
  sessionEnded(startedAt: number, version: string | undefined): void {
    this.#session ??= this.#meter.createHistogram('mcp.client.session.duration', {
      unit: 's',
      description: 'Duration of an MCP session, as seen by the client.',
      advice: { explicitBucketBoundaries: [1, 10, 60, 300, 900, 1800, 3600, 14400, 86400] },
    });
    this.#session.record(
      (this.#now() - startedAt) / 1000,
      version === undefined ? {} : { 'mcp.protocol.version': version },
    );
  }
}

/** The `tracing` client option, checked once. */
export function clientTracingOf(
  t: ClientTracingOptions | false | undefined,
  now: () => number,
): ClientTracing | undefined {
  if (t === undefined || t === false) return undefined;
  const api = (t as { api?: unknown } | null)?.api as Record<string, Record<string, unknown>> | undefined;
  if (
    typeof api?.['trace']?.['getTracer'] !== 'function' ||
    typeof api['context']?.['active'] !== 'function' ||
    typeof api['metrics']?.['getMeter'] !== 'function' ||
    typeof api['ProxyTracerProvider'] !== 'function'
  ) {
    throw new InvalidOptionError(
      "option tracing must be false or { api, tracer?, meter? } with api = import * as api from '@opentelemetry/api' (1.x)",
    );
  }
  return new ClientTracing(t, now);
}
