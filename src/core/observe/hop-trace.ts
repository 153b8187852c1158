/**
 * The trace context of a cluster hop (src/cluster/: a request forwarded to its session's owner).
 * The hop recomputes the W3C headers as it does `content-length`: the client's `traceparent`,
 * `tracestate` and `baggage` go on only when valid (a malformed value is never passed on as is),
 * and with tracing on, a CLIENT span for the hop (`sluice.forward`) becomes the owner's parent
 * context, so one trace shows client → receiving instance → owner and the hop's latency.
 */
import {
  outgoingOf,
  SPAN_KIND_CLIENT,
  STATUS_ERROR,
  tracerActive,
  withCarried,
} from '../../trace/otel-bridge.js';
import type { SpanLike } from '../../trace/otel-like.js';
import { carriedByHeaders, formatTraceparent } from '../../trace/trace-context.js';
import type { TracingOptions } from './operations.js';

/** The W3C headers the hop replaces (it drops the client's copies). */
export const TRACE_HEADERS: readonly string[] = ['traceparent', 'tracestate', 'baggage'];

export interface Hop {
  /** The validated (or the hop span's) trace headers to send to the owner. */
  readonly headers: Record<string, string>;
  /** The owner answered with `status`, or could not be reached (`error`). */
  end(status: number | undefined, error?: string): void;
}

const NO_END = (): void => {};

export class HopTracer {
  readonly #tracing: TracingOptions | undefined;
  readonly #active: () => boolean;

  constructor(tracing: TracingOptions | undefined) {
    this.#tracing = tracing;
    this.#active =
      tracing === undefined ? () => false : tracerActive(tracing.api, tracing.tracer !== undefined);
  }

  begin(header: (name: string) => string | undefined, owner: string, method: string): Hop {
    const carried = carriedByHeaders(header);
    const t = this.#tracing;
    if (t === undefined || !this.#active()) {
      const headers: Record<string, string> = {};
      if (carried?.parent !== undefined) {
        headers['traceparent'] = formatTraceparent(carried.parent);
        if (carried.tracestate !== undefined) headers['tracestate'] = carried.tracestate;
      }
      if (carried?.baggage !== undefined) headers['baggage'] = carried.baggage;
      return { headers, end: NO_END };
    }
    const api = t.api;
    const ambient = api.context.active();
    // The HTTP instrumentation's span when there is one (already a child of the header), else the header.
    const parent =
      api.trace.getSpanContext(ambient) === undefined && carried !== undefined
        ? withCarried(api, ambient, carried)
        : ambient;
    const tracer = t.tracer ?? api.trace.getTracer('sluice');
    const address = addressOf(owner);
    const span: SpanLike = tracer.startSpan(
      'sluice.forward',
      {
        kind: SPAN_KIND_CLIENT,
        attributes: {
          'http.request.method': method,
          'server.address': address.hostname,
          ...(address.port === undefined ? {} : { 'server.port': address.port }),
          'network.transport': 'tcp',
        },
      },
      parent,
    );
    const out = outgoingOf(api, api.trace.setSpan(parent, span));
    const headers: Record<string, string> = {};
    if (out.traceparent !== undefined) headers['traceparent'] = out.traceparent;
    if (out.tracestate !== undefined) headers['tracestate'] = out.tracestate;
    if (out.baggage !== undefined) headers['baggage'] = out.baggage;
    return {
      headers,
      end: (status, error) => {
        if (status !== undefined) span.setAttribute('http.response.status_code', status);
        if (error !== undefined || (status !== undefined && status >= 500)) {
          span.setAttribute('error.type', error === undefined ? String(status) : 'unreachable');
          span.setStatus(
            error === undefined ? { code: STATUS_ERROR } : { code: STATUS_ERROR, message: error },
          );
        }
        span.end();
      },
    };
  }
}

/** The owner's advertised URL as `server.address` / `server.port` (parsed only when a span is made). */
function addressOf(url: string): { hostname: string; port: number | undefined } {
  const m = /^[a-z]+:\/\/(\[[^\]]*\]|[^:/]*)(?::(\d+))?/i.exec(url);
  if (m === null) return { hostname: url, port: undefined };
  return {
    hostname: (m[1] ?? '').replace(/^\[|\]$/g, ''),
    port: m[2] === undefined ? undefined : Number(m[2]),
  };
}
