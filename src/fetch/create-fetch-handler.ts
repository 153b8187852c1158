/**
 * createFetchHandler: the MCP endpoint as `(request: Request) => Promise<Response>`, for runtimes
 * that speak web-standard fetch (Bun.serve, Deno.serve, Cloudflare Workers, Hono, Next.js route
 * handlers). Same options, same pipeline (src/core/pipeline/pipeline.ts) and same guarantees as the
 * node:http binding: SSE answers are a pull-driven ReadableStream (src/fetch/stream-sink.ts), so
 * the runtime's backpressure reaches the producer; keepalives, resumption, cancellation when the
 * runtime aborts the request, and close() for a graceful drain. Nothing here imports node:*.
 */

import type { OAuthResourceServer } from '../auth/resource-server.js';
import { type Notifier, notifierFor } from '../core/change-bus.js';
import { type CloseReport, createPipeline } from '../core/endpoint.js';
import { renderPrometheus } from '../core/observe/prometheus.js';
import type { EndpointStats } from '../core/observe/stats.js';
import type { ServerOptions } from '../core/options.js';
import type { CreateServer } from '../core/sdk/server-like.js';
import { InvalidOptionError } from '../errors.js';
import { type FetchInfo, fetchView } from './fetch-view.js';
import { StreamSink } from './stream-sink.js';

export interface FetchHandlerOptions extends ServerOptions {
  /** Returns a fresh SDK McpServer (or Server) for each session. */
  createServer: CreateServer;
  /**
   * The server is reachable only through loopback, so the Host header must name one of
   * `allowedHosts` (DNS-rebinding defence, 2025-11-25 basic/transports §"Security Warning"). A
   * fetch handler cannot see its bind address, so this is on unless you say the deployment is
   * public (Cloudflare Workers, Deno Deploy, a server on 0.0.0.0 behind TLS). @defaultValue true
   */
  loopbackOnly?: boolean;
  /**
   * An OAuth 2.1 resource server (`oauthResourceServer(...)`, docs/authorization.md): it becomes
   * `authenticate`, and the handler answers requests for its protected resource metadata
   * (`/.well-known/oauth-protected-resource` + the resource's path, and the root): route those
   * paths to the handler too. @defaultValue undefined
   */
  oauth?: OAuthResourceServer;
}

export interface FetchHandler {
  (request: Request, info?: FetchInfo): Promise<Response>;
  /** Refuses new sessions, waits up to graceMs for requests in flight, then ends every session. */
  close(options?: { graceMs?: number }): Promise<CloseReport>;
  /** Counters and gauges; `perStream: true` adds one entry per open SSE connection. */
  stats(options?: { perStream?: boolean }): EndpointStats;
  /** Publishes changes to 2026-07-28 `subscriptions/listen` streams (as McpHandler's `notify`). */
  readonly notify: Notifier;
  /** The stats in Prometheus text format, for a route of your own. */
  metrics(): string;
}

export function createFetchHandler(options: FetchHandlerOptions): FetchHandler {
  if (typeof options?.createServer !== 'function') {
    throw new InvalidOptionError('createFetchHandler needs { createServer: (ctx) => new McpServer(...) }');
  }
  const oauth = options.oauth;
  if (oauth !== undefined && options.authenticate !== undefined) {
    throw new InvalidOptionError(
      'createFetchHandler: pass oauth or authenticate, not both (oauth authenticates)',
    );
  }
  const pipeline = createPipeline(
    options.createServer,
    oauth === undefined
      ? options
      : { ...options, authenticate: oauth.authenticate, resourceMetadataUrl: oauth.metadataUrl },
  );
  const ep = pipeline.endpoint;
  const loopback = options.loopbackOnly ?? true;
  // The stream's own queue plays the socket buffer's part: write() reports false above it.
  const highWaterMark = pipeline.options.highWaterMark;

  const handler = ((request: Request, info?: FetchInfo): Promise<Response> => {
    if (oauth !== undefined) {
      const answer = oauth.metadataAnswer(request.method, new URL(request.url).pathname);
      if (answer !== undefined) {
        const body = answer.status === 204 || answer.body === '' ? null : answer.body;
        return Promise.resolve(new Response(body, { status: answer.status, headers: answer.headers }));
      }
    }
    const sink = new StreamSink(highWaterMark, request.signal);
    pipeline.handle(fetchView(request, loopback, info), sink).catch((error: unknown) => {
      pipeline.fail(error, sink, sink.started);
    });
    return sink.response;
  }) as FetchHandler;
  handler.close = (opts) => ep.close(opts?.graceMs ?? 0);
  handler.stats = (opts) => ep.stats(opts);
  (handler as { notify: Notifier }).notify = notifierFor(ep.bus);
  handler.metrics = () => renderPrometheus(ep.stats(), ep.metrics);
  return handler;
}
