/**
 * The part of `@opentelemetry/api` (1.x) Sluice uses, as structural types: Sluice never imports the
 * package (it is an optional peer), the application hands its copy in (`tracing: { api }`), and
 * that module satisfies these types as is. Keeping them here means a user without OpenTelemetry
 * needs neither the package nor its type declarations.
 */

export type Attr = string | number | boolean;
/** The API's attribute value type, spelled the same so that its methods match these structurally. */
export type AttributeValue =
  | Attr
  | Array<null | undefined | string>
  | Array<null | undefined | number>
  | Array<null | undefined | boolean>;
export type Attributes = Record<string, AttributeValue | undefined>;

/** Opaque context (`Context` in the API). */
export type OtelContext = object;

export interface TraceStateLike {
  get(key: string): string | undefined;
  serialize(): string;
}

export interface SpanContextLike {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: TraceStateLike;
}

export interface LinkLike {
  context: SpanContextLike;
  attributes?: Attributes;
}

export interface SpanLike {
  spanContext(): SpanContextLike;
  setAttribute(key: string, value: Attr): unknown;
  setAttributes(attributes: Attributes): unknown;
  addEvent(name: string, attributes?: Attributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: unknown): unknown;
  isRecording(): boolean;
  end(): void;
}

export interface SpanOptionsLike {
  kind?: number;
  attributes?: Attributes;
  links?: LinkLike[];
  root?: boolean;
}

export interface TracerLike {
  startSpan(name: string, options?: SpanOptionsLike, context?: OtelContext): SpanLike;
}

export interface HistogramLike {
  record(value: number, attributes?: Attributes): void;
}

export interface MeterLike {
  createHistogram(
    name: string,
    options?: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } },
  ): HistogramLike;
}

export interface BaggageEntryLike {
  value: string;
  metadata?: unknown;
}

export interface BaggageLike {
  getAllEntries(): [string, BaggageEntryLike][];
}

/** `import * as api from '@opentelemetry/api'` has this shape. */
export interface OtelApiLike {
  trace: {
    getTracer(name: string, version?: string): TracerLike;
    getTracerProvider(): object;
    setSpan(context: OtelContext, span: SpanLike): OtelContext;
    setSpanContext(context: OtelContext, spanContext: SpanContextLike): OtelContext;
    getSpanContext(context: OtelContext): SpanContextLike | undefined;
  };
  context: {
    active(): OtelContext;
    with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
      context: OtelContext,
      fn: F,
      thisArg?: ThisParameterType<F>,
      ...args: A
    ): ReturnType<F>;
  };
  propagation: {
    getBaggage(context: OtelContext): BaggageLike | undefined;
    setBaggage(context: OtelContext, baggage: BaggageLike): OtelContext;
    createBaggage(entries?: Record<string, BaggageEntryLike>): BaggageLike;
  };
  metrics: {
    getMeter(name: string, version?: string): MeterLike;
  };
  /** Used to tell "no provider registered" from a real one (see tracing.ts `isNoop`). */
  ProxyTracerProvider: new () => { getDelegate(): object };
  createTraceState(raw?: string): TraceStateLike;
  ROOT_CONTEXT: OtelContext;
}
