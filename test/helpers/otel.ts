/**
 * A real OpenTelemetry SDK for the tracing tests: a tracer provider with an in-memory exporter, and
 * the AsyncLocalStorage context manager (what a Node application registers), so that a tool's own
 * spans become children of Sluice's request span only if Sluice runs the tool inside it.
 */
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

let contextManager: AsyncLocalStorageContextManager | undefined;

/** Registers the context manager once for the process (the API allows one). */
export function useAsyncContext(): void {
  if (contextManager !== undefined) return;
  contextManager = new AsyncLocalStorageContextManager();
  contextManager.enable();
  api.context.setGlobalContextManager(contextManager);
}

export interface TestTracing {
  readonly exporter: InMemorySpanExporter;
  readonly provider: BasicTracerProvider;
  spans(): ReadableSpan[];
  /** Waits until a span named `name` has ended (bounded). */
  span(name: string, ms?: number): Promise<ReadableSpan>;
  reset(): void;
}

export function testTracing(): TestTracing {
  useAsyncContext();
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return {
    exporter,
    provider,
    spans: () => exporter.getFinishedSpans(),
    span: async (name, ms = 5_000) => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        const s = exporter.getFinishedSpans().find((x) => x.name === name);
        if (s !== undefined) return s;
        await new Promise((r) => setTimeout(r, 5));
      }
      throw new Error(
        `no span ${name} within ${ms} ms; have: ${exporter.getFinishedSpans().map((x) => x.name)}`,
      );
    },
    reset: () => exporter.reset(),
  };
}

export const hex = (n: number, len: number): string => n.toString(16).padStart(len, '0');
/** A valid traceparent with the given (nonzero) numbers as its ids. */
export function traceparent(trace: number, span: number, flags = '01'): string {
  return `00-${hex(trace, 32)}-${hex(span, 16)}-${flags}`;
}

export { api };
