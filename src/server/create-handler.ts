/**
 * createMcpHandler: the node:http request listener. It builds a RequestView over the
 * IncomingMessage and a NodeSink over the ServerResponse and runs the runtime-neutral pipeline
 * (src/core/pipeline.ts: Host → Origin → CORS preflight → authenticate → method → media types →
 * body → POST/GET/DELETE). Options are resolved and validated once, there.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CloseReport, CreateServer, EndpointStats } from '../core/endpoint.js';
import type { ServerOptions } from '../core/options.js';
import { createPipeline } from '../core/pipeline.js';
import { diagnosticsProbe } from './diagnostics.js';
import { NodeSink } from './node-sink.js';
import { nodeView } from './node-view.js';
import { renderPrometheus } from './prometheus.js';

export interface McpHandlerOptions extends ServerOptions {
  /** Returns a fresh SDK McpServer (or Server) for each session. */
  createServer: CreateServer;
}

export interface McpHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  /** Refuses new sessions, waits up to graceMs for requests in flight, then ends every session. */
  close(options?: { graceMs?: number }): Promise<CloseReport>;
  /** Counters and gauges; `perStream: true` adds one entry per open SSE connection. */
  stats(options?: { perStream?: boolean }): EndpointStats;
  /** The stats in Prometheus text format, for a route of your own (sluice serve --metrics serves /metrics). */
  metrics(): string;
}

export function createMcpHandler(options: McpHandlerOptions): McpHandler {
  if (typeof options?.createServer !== 'function') {
    throw new TypeError('createMcpHandler needs { createServer: (ctx) => new McpServer(...) }');
  }
  const pipeline = createPipeline(options.createServer, { probe: diagnosticsProbe(), ...options });
  const ep = pipeline.endpoint;

  const listener = ((req: IncomingMessage, res: ServerResponse): void => {
    const sink = new NodeSink(res);
    pipeline.handle(nodeView(req, res), sink).catch((error: unknown) => {
      pipeline.fail(error, sink, res.headersSent);
    });
  }) as McpHandler;
  listener.close = (opts) => ep.close(opts?.graceMs ?? 0);
  listener.stats = (opts) => ep.stats(opts);
  listener.metrics = () => renderPrometheus(ep.stats(), ep.counters.metrics);
  return listener;
}
