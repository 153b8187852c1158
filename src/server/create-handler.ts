/**
 * createMcpHandler: the node:http request listener. It builds a RequestView over the
 * IncomingMessage and a NodeSink over the ServerResponse (or their node:http2 compatibility
 * counterparts and an H2Sink) and runs the runtime-neutral pipeline (src/core/pipeline/pipeline.ts: Host →
 * Origin → CORS preflight → authenticate → method → media types → body → POST/GET/DELETE). Options
 * are resolved and validated once, there.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { OAuthResourceServer } from '../auth/resource-server.js';
import type { ClusterStats, RedisCluster } from '../cluster/cluster.js';
import { FORWARD_HEADER } from '../cluster/forward-auth.js';
import { renderClusterMetrics } from '../cluster/metrics.js';
import { clusterResourceServer } from '../cluster/proof-replays.js';
import { type Notifier, notifierFor } from '../core/change-bus.js';
import { type CloseReport, createPipeline } from '../core/endpoint.js';
import { renderPrometheus, renderProtocols } from '../core/observe/prometheus.js';
import type { EndpointStats } from '../core/observe/stats.js';
import type { ServerOptions } from '../core/options.js';
import { Refusals, sendRefusal } from '../core/pipeline/refusal.js';
import type { CreateServer } from '../core/sdk/server-like.js';
import { InvalidOptionError } from '../errors.js';
import { diagnosticsProbe } from './diagnostics.js';
import { H2Sink } from './h2-sink.js';
import { NodeSink } from './node-sink.js';
import { h2View, nodeObjectsOf, nodeView } from './node-view.js';
import { hostLines, targetPathname } from './request-line.js';

export interface McpHandlerOptions extends ServerOptions {
  /** Returns a fresh SDK McpServer (or Server) for each session. */
  createServer: CreateServer;
  /** Join a cluster of instances sharing sessions through Redis (docs/scale-out.md). @defaultValue undefined (one instance) */
  cluster?: RedisCluster;
  /**
   * An OAuth 2.1 resource server (`oauthResourceServer(...)`, docs/authorization.md): it becomes
   * `authenticate`, and the handler answers GETs of its protected resource metadata paths
   * (`/.well-known/oauth-protected-resource` + the resource's path, and the root) when they reach it.
   * @defaultValue undefined
   */
  oauth?: OAuthResourceServer;
}

export interface McpHandler {
  /**
   * A node:http listener; also takes node:http2's compatibility request/response (HTTP/2).
   * `parsedBody`: the POST body a framework already parsed (Express `req.body`, Fastify
   * `request.body`, Hono `await c.req.json()`); without it the handler reads the request stream.
   */
  (
    req: IncomingMessage | Http2ServerRequest,
    res: ServerResponse | Http2ServerResponse,
    parsedBody?: unknown,
  ): void;
  /** Refuses new sessions, waits up to graceMs for requests in flight, then ends every session. */
  close(options?: { graceMs?: number }): Promise<CloseReport>;
  /** Counters and gauges; `perStream: true` adds one entry per open SSE connection. */
  stats(options?: { perStream?: boolean }): EndpointStats & { cluster?: ClusterStats };
  /** The cluster this handler is a member of, if any. */
  readonly cluster: RedisCluster | undefined;
  /**
   * Publishes changes to 2026-07-28 `subscriptions/listen` streams (list changes, resource
   * updates); list changes that served servers emit are published too.
   */
  readonly notify: Notifier;
  /** The stats in Prometheus text format, for a route of your own (sluice serve --metrics serves /metrics). */
  metrics(): string;
}

export function createMcpHandler(options: McpHandlerOptions): McpHandler {
  if (typeof options?.createServer !== 'function') {
    throw new InvalidOptionError('createMcpHandler needs { createServer: (ctx) => new McpServer(...) }');
  }
  const cluster = options.cluster;
  // Instances of a cluster spend DPoP proofs where all of them look (cluster/proof-replays.ts).
  const oauth = options.oauth === undefined ? undefined : clusterResourceServer(options.oauth, cluster);
  if (oauth !== undefined && options.authenticate !== undefined) {
    throw new InvalidOptionError(
      'createMcpHandler: pass oauth or authenticate, not both (oauth authenticates)',
    );
  }
  const pipeline = createPipeline(
    options.createServer,
    {
      probe: diagnosticsProbe(),
      ...options,
      ...(oauth === undefined
        ? {}
        : { authenticate: oauth.authenticate, resourceMetadataUrl: oauth.metadataUrl }),
    },
    cluster === undefined
      ? {}
      : {
          clusterHooks: (o, endpoint) => cluster.attach({ ...endpoint, options: o }),
          // The forwarder relays onto the Node response (node:http, or node:http2's compatibility
          // response, which has the same writable surface).
          route: (r) => {
            // This binding builds every view (node-view.ts), so each carries its node objects.
            const node = nodeObjectsOf(r.view);
            // Never without them; were it so, a request claiming to be forwarded is not served
            // unverified (its proof was not checked here: cluster/proof-replays.ts).
            if (node === undefined) {
              if (r.view.header(FORWARD_HEADER) === undefined) return 'local';
              sendRefusal(r.sink, Refusals.forwardForbidden(), r.headers);
              return 'handled';
            }
            return cluster.route({ ...r, req: node.req as IncomingMessage, res: node.res as ServerResponse });
          },
        },
  );
  const ep = pipeline.endpoint;
  const o = pipeline.options;
  // With an advertised URL the handler joins at once; serve() joins after binding otherwise. Until
  // it has joined, initialize and forwarding answer 503.
  if (cluster?.advertised === true) {
    cluster.start().catch((e: unknown) => o.logger?.error('cluster.join_failed', { error: String(e) }));
  }

  const protocols = { 'http/1.1': 0, h2: 0 };

  const listener = ((
    req: IncomingMessage | Http2ServerRequest,
    res: ServerResponse | Http2ServerResponse,
    parsedBody?: unknown,
  ): void => {
    if (oauth !== undefined && metadataServed(oauth, req, res)) return;
    if (res instanceof Http2ServerResponse) {
      protocols.h2++;
      const sink = new H2Sink(res);
      pipeline.handle(h2View(req as Http2ServerRequest, res), sink).catch((error: unknown) => {
        pipeline.fail(error, sink, res.headersSent);
      });
      return;
    }
    protocols['http/1.1']++;
    const sink = new NodeSink(res);
    if (hostLines((req as IncomingMessage).rawHeaders) > 1) {
      sendRefusal(sink, Refusals.duplicateHost());
      return;
    }
    pipeline.handle(nodeView(req as IncomingMessage, res, parsedBody), sink).catch((error: unknown) => {
      pipeline.fail(error, sink, res.headersSent);
    });
  }) as McpHandler;
  listener.close = async (opts) => {
    const report = await ep.close(opts?.graceMs ?? 0);
    await cluster?.stop();
    return report;
  };
  listener.stats = (opts) =>
    cluster === undefined ? ep.stats(opts) : { ...ep.stats(opts), cluster: cluster.stats() };
  (listener as { cluster: RedisCluster | undefined }).cluster = cluster;
  (listener as { notify: Notifier }).notify = notifierFor(ep.bus);
  listener.metrics = () =>
    renderPrometheus(ep.stats(), ep.metrics) +
    renderProtocols(protocols) +
    (cluster === undefined ? '' : renderClusterMetrics(cluster));
  return listener;
}

/** Answers a request for the protected resource metadata (RFC 9728 §3); false for anything else. */
export function metadataServed(
  oauth: OAuthResourceServer,
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
): boolean {
  const answer = oauth.metadataAnswer(req.method ?? 'GET', targetPathname(req.url ?? '/'));
  if (answer === undefined) return false;
  const sink = res instanceof Http2ServerResponse ? new H2Sink(res) : new NodeSink(res);
  sink.respond(answer.status, answer.headers, answer.body);
  return true;
}
