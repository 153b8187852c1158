/**
 * The one place Sluice loads `@opentelemetry/api` itself (`sluice serve --otel`): a guarded dynamic
 * import, so an installation without the optional peer pays nothing and breaks nothing. Libraries
 * pass their own copy instead (`tracing: { api }`), which keeps a single API instance per process
 * (the API refuses to register a second global provider from another copy).
 */
import type { OtelApiLike } from '../trace/otel-like.js';

/** The API module, or undefined when it is not installed. */
export async function loadOtelApi(): Promise<OtelApiLike | undefined> {
  // A variable specifier: bundlers and the type checker leave the optional peer alone.
  const name = '@opentelemetry/api';
  try {
    const m = (await import(name)) as { default?: unknown } & Partial<OtelApiLike>;
    const api = (m.trace !== undefined ? m : m.default) as OtelApiLike | undefined;
    return typeof api?.trace?.getTracer === 'function' ? api : undefined;
  } catch {
    return undefined;
  }
}
