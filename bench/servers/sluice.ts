// Sluice's server with the bench tools. The module is loaded at run time so that the harness
// builds and runs (raw and SDK rows only) while src/server is absent or mid-change; a missing or
// broken module is reported by the orchestrator as "sluice: unavailable (reason)".
//
// `--metrics on|off` passes `metrics: true|false` to serve() for the metrics-overhead rows; without
// the flag the server's default applies. A server that rejects the option is reported as
// unavailable for those rows.
import { type RunningServer, runChild } from './child.js';
import { BENCH_ISSUER, BENCH_RESOURCE, JWKS_ENV, memoryFetch } from './jwt.js';
import { createBenchServer } from './tools.js';

/** Where tsc puts src/server/index.ts, relative to this file in dist/bench/servers/. */
const SERVER_MODULE = new URL('../../src/server/index.js', import.meta.url).href;

/** The part of Sluice's server API the bench uses (see src/server/index.ts). */
type SluiceServe = (options: {
  createServer: () => ReturnType<typeof createBenchServer>;
  host: string;
  port: number;
  path: string;
  mode: 'json' | 'sse';
  clientLimits?: false;
  oauth?: unknown;
}) => Promise<RunningServer>;

async function loadServe(): Promise<SluiceServe> {
  const mod: unknown = await import(SERVER_MODULE);
  const serve = (mod as { serve?: unknown }).serve;
  if (typeof serve !== 'function') throw new Error(`${SERVER_MODULE} does not export serve()`);
  return serve as SluiceServe;
}

/** `--jwt`: oauthResourceServer over the key set the orchestrator passed (see jwt.ts). */
async function loadOAuth(): Promise<unknown> {
  const jwks = process.env[JWKS_ENV];
  if (jwks === undefined) throw new Error(`--jwt needs ${JWKS_ENV}`);
  const mod = (await import(SERVER_MODULE)) as { oauthResourceServer?: (o: unknown) => unknown };
  if (typeof mod.oauthResourceServer !== 'function') throw new Error('no oauthResourceServer');
  return mod.oauthResourceServer({
    resource: BENCH_RESOURCE,
    authorizationServers: [BENCH_ISSUER],
    scopes: ['mcp:tools'],
    fetch: memoryFetch(jwks),
  });
}

/**
 * `--tracing api`: the API module and no provider (Sluice's per-request check finds none);
 * `--tracing sdk`: a registered SDK provider whose spans go, through the batching processor a
 * production application registers, to an exporter that drops them, and the AsyncLocalStorage
 * context manager an application would register. (The SDK's SimpleSpanProcessor exports each span
 * as it ends, for debugging; it is not what the row is meant to price.) Loaded only for those rows.
 */
async function tracingOption(kind: 'api' | 'sdk' | undefined): Promise<Record<string, unknown>> {
  if (kind === undefined) return {};
  const api = await import('@opentelemetry/api');
  if (kind === 'sdk') {
    const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    const exporter = {
      export: (_spans: unknown[], done: (r: { code: number }) => void) => done({ code: 0 }),
      shutdown: async () => {},
    };
    api.trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] }),
    );
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  }
  return { tracing: { api } };
}

runChild(async ({ mode, metrics, jwt, tracing, hibernate }) => {
  const serve = await loadServe();
  // A spread, not a literal property: `metrics` may not be in the option type yet.
  const extra = {
    ...(metrics === undefined ? {} : { metrics }),
    ...(jwt ? { oauth: await loadOAuth() } : {}),
    ...(await tracingOption(tracing)),
    ...(hibernate === undefined ? {} : { hibernateAfterMs: hibernate }),
  };
  // The idle-memory workload opens thousands of sessions from one address as fast as it can: the
  // per-client limits (a flood defence) are off for the benchmark.
  const handle = await serve({
    clientLimits: false,
    createServer: () => createBenchServer(),
    host: '127.0.0.1',
    port: 0,
    path: '/mcp',
    mode,
    ...extra,
  });
  return { url: handle.url, close: () => handle.close() };
});
