/**
 * Between validated W3C values (trace-context.ts) and an OpenTelemetry API context: the remote
 * span context a carried `traceparent` names, and the three values Sluice sends for a context.
 * Sluice formats and parses these itself rather than through the globally configured propagator:
 * MCP 2026-07-28 (SEP-414) fixes the W3C formats for `_meta`, whatever propagator the application
 * configured for its own HTTP traffic.
 */
import type { OtelApiLike, OtelContext, SpanContextLike } from './otel-like.js';
import {
  type CarriedContext,
  formatTraceparent,
  parseBaggage,
  parseTracestate,
  type TraceParent,
} from './trace-context.js';

/** OpenTelemetry's SpanKind values (a stable enum of the API and the data model). */
export const SPAN_KIND_SERVER = 1;
export const SPAN_KIND_CLIENT = 2;
/** SpanStatusCode.ERROR. */
export const STATUS_ERROR = 2;

export function remoteSpanContext(api: OtelApiLike, carried: CarriedContext): SpanContextLike | undefined {
  const p = carried.parent;
  if (p === undefined) return undefined;
  return {
    traceId: p.traceId,
    spanId: p.spanId,
    traceFlags: p.traceFlags,
    isRemote: true,
    ...(carried.tracestate === undefined ? {} : { traceState: api.createTraceState(carried.tracestate) }),
  };
}

/** `base` with the carried span context as its span and the carried baggage (when valid) as its baggage. */
export function withCarried(api: OtelApiLike, base: OtelContext, carried: CarriedContext): OtelContext {
  let ctx = base;
  const sc = remoteSpanContext(api, carried);
  if (sc !== undefined) ctx = api.trace.setSpanContext(ctx, sc);
  if (carried.baggage !== undefined) {
    const entries: Record<string, { value: string }> = {};
    for (const member of carried.baggage.split(',')) {
      const [kv] = member.split(';');
      const eq = (kv ?? '').indexOf('=');
      if (eq <= 0) continue;
      const key = (kv ?? '').slice(0, eq);
      let value = (kv ?? '').slice(eq + 1);
      try {
        value = decodeURIComponent(value);
      } catch {
        continue; // a percent escape that is not UTF-8: that entry only is dropped
      }
      entries[key] = { value };
    }
    ctx = api.propagation.setBaggage(ctx, api.propagation.createBaggage(entries));
  }
  return ctx;
}

/** What Sluice puts in `_meta` (and the HTTP header) for `ctx`; empty when it holds no valid span. */
export interface Outgoing {
  traceparent?: string;
  tracestate?: string;
  baggage?: string;
}

const VALID_ID = /^(?!0+$)[0-9a-f]{32}$/;
const VALID_SPAN = /^(?!0+$)[0-9a-f]{16}$/;

export function outgoingOf(api: OtelApiLike, ctx: OtelContext): Outgoing {
  const out: Outgoing = {};
  const sc = api.trace.getSpanContext(ctx);
  if (sc !== undefined && VALID_ID.test(sc.traceId) && VALID_SPAN.test(sc.spanId)) {
    const p: TraceParent = { traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags };
    out.traceparent = formatTraceparent(p);
    const ts = parseTracestate(sc.traceState?.serialize());
    if (ts !== undefined) out.tracestate = ts;
  }
  const bag = api.propagation.getBaggage(ctx);
  if (bag !== undefined) {
    const members = bag.getAllEntries().map(([k, e]) => `${k}=${encodeURIComponent(e.value)}`);
    const b = parseBaggage(members.join(','));
    if (b !== undefined) out.baggage = b;
  }
  return out;
}

/**
 * Whether spans are made at all: a tracer given explicitly, or a provider registered globally. A
 * fresh proxy provider without a delegate answers the API's one no-op provider, so comparing the
 * global provider's delegate with it costs two property reads per request; with no provider
 * registered Sluice then does no tracing work at all (and a provider registered later is used
 * from the next request on).
 */
export function tracerActive(api: OtelApiLike, explicit: boolean): () => boolean {
  if (explicit) return () => true;
  const noop = new api.ProxyTracerProvider().getDelegate();
  return () => {
    const p = api.trace.getTracerProvider() as { getDelegate?: () => object };
    return (typeof p.getDelegate === 'function' ? p.getDelegate() : p) !== noop;
  };
}
