/**
 * createMcpHandler: the node:http request listener. Each request passes the same layers in order,
 * each a small pure check that either refuses or lets it through, before any body is read or any
 * session is looked up:
 *   Host (loopback binds) → Origin → CORS preflight → authenticate → method → media types → body
 * then the core's POST/GET/DELETE logic. Options are resolved and validated once, here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClusterStats, RedisCluster } from '../cluster/cluster.js';
import { renderClusterMetrics } from '../cluster/metrics.js';
import { handleDelete } from '../core/delete.js';
import { type CloseReport, type CreateServer, Endpoint, type EndpointStats } from '../core/endpoint.js';
import { handleGet } from '../core/get.js';
import { type AuthResult, resolveOptions, type ServerOptions } from '../core/options.js';
import { handlePost } from '../core/post.js';
import { Refusals, sendRefusal } from '../core/refusal.js';
import type { Headers, RequestHead } from '../core/sink.js';
import type { StreamGuard } from '../core/stream-guard.js';
import { isJsonContentType, parseAccept } from '../http/media-type.js';
import { corsHeaders, preflightHeaders } from '../security/cors.js';
import { hostAllowed, isLoopbackAddress } from '../security/host.js';
import { checkOrigin } from '../security/origin.js';
import { diagnosticsProbe } from './diagnostics.js';
import { NodeSink } from './node-sink.js';
import { renderPrometheus } from './prometheus.js';
import { readBody } from './read-body.js';

export interface McpHandlerOptions extends ServerOptions {
  /** Returns a fresh SDK McpServer (or Server) for each session. */
  createServer: CreateServer;
  /** Join a cluster of instances sharing sessions through Redis (docs/scale-out.md). @defaultValue undefined (one instance) */
  cluster?: RedisCluster;
}

export interface McpHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  /** Refuses new sessions, waits up to graceMs for requests in flight, then ends every session. */
  close(options?: { graceMs?: number }): Promise<CloseReport>;
  /** Counters and gauges; `perStream: true` adds one entry per open SSE connection. */
  stats(options?: { perStream?: boolean }): EndpointStats & { cluster?: ClusterStats };
  /** The stats in Prometheus text format, for a route of your own (sluice serve --metrics serves /metrics). */
  metrics(): string;
  /** The cluster this handler is a member of, if any. */
  readonly cluster: RedisCluster | undefined;
}

function headOf(req: IncomingMessage): RequestHead {
  const h = req.headers;
  return {
    method: req.method ?? 'GET',
    header(name: string): string | undefined {
      const v = h[name];
      return Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

export function createMcpHandler(options: McpHandlerOptions): McpHandler {
  if (typeof options?.createServer !== 'function') {
    throw new TypeError('createMcpHandler needs { createServer: (ctx) => new McpServer(...) }');
  }
  const o = resolveOptions({ probe: diagnosticsProbe(), ...options });
  const cluster = options.cluster;
  // `ep` is only read when a request arrives, after it was assigned.
  const hooks = cluster?.attach({ hasSession: (id) => ep.sessions.has(id), options: o });
  const ep = new Endpoint(options.createServer, o, hooks);
  // With an advertised URL the handler joins at once; serve() joins after binding otherwise. Until
  // it has joined, initialize and forwarding answer 503.
  if (cluster?.advertised === true) {
    cluster.start().catch((e: unknown) => o.logger?.error('cluster.join_failed', { error: String(e) }));
  }
  /** The routing stage: forwards a request for a session owned by another instance (src/cluster/). */
  const routed = async (
    req: IncomingMessage,
    res: ServerResponse,
    sink: NodeSink,
    body: string,
    auth: AuthResult | undefined,
    headers: Headers,
  ): Promise<boolean> => {
    if (cluster === undefined) return false;
    const r = cluster.route({
      req,
      res,
      sink,
      method: req.method ?? 'GET',
      sessionId: headOf(req).header('mcp-session-id'),
      body,
      principal: auth?.principal,
      headers,
    });
    return r !== 'local' && (r === 'handled' || (await r) === 'handled');
  };
  const methods = ['POST', ...(o.enableGetStream ? ['GET'] : []), ...(o.enableDelete ? ['DELETE'] : [])].join(
    ', ',
  );
  const challenge =
    o.resourceMetadataUrl === undefined
      ? 'Bearer'
      : `Bearer resource_metadata="${o.resourceMetadataUrl.replace(/"/g, '%22')}"`;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sink = new NodeSink(res);
    const head = headOf(req);
    const host = req.headers.host;
    if (!hostAllowed(host, isLoopbackAddress(req.socket.localAddress), o.allowedHosts)) {
      ep.counters.refusals.host++;
      return sendRefusal(sink, Refusals.forbiddenHost());
    }
    const origin = head.header('origin');
    const verdict = checkOrigin(origin, host, o.allowedOrigins);
    if (verdict === 'denied') {
      ep.counters.refusals.origin++;
      return sendRefusal(sink, Refusals.forbiddenOrigin());
    }
    const headers: Headers = verdict === 'allowed' && origin !== undefined ? corsHeaders(origin) : {};
    const method = head.method;
    if (method === 'OPTIONS') {
      sink.respond(204, origin === undefined ? { allow: methods } : preflightHeaders(origin, methods), '');
      return;
    }
    let auth: AuthResult | undefined;
    let guard: StreamGuard | undefined;
    const authenticate = o.authenticate;
    if (authenticate !== undefined) {
      const r = await authenticate(req);
      if (r === null || typeof r?.principal !== 'string') {
        ep.counters.refusals.auth++;
        return sendRefusal(sink, Refusals.unauthorized(challenge), headers);
      }
      auth = r;
      const principal = r.principal;
      guard = {
        expiresAt: r.expiresAt,
        revalidateMs: o.revalidateMs,
        revalidate: async () => (await authenticate(req))?.principal === principal,
      };
    }
    if (method === 'POST') {
      if (!isJsonContentType(head.header('content-type')))
        return sendRefusal(sink, Refusals.unsupportedMediaType(), headers);
      const accept = parseAccept(head.header('accept'));
      if (!accept.json && !accept.sse) return sendRefusal(sink, Refusals.notAcceptablePost(), headers);
      const body = await readBody(req, o.maxBodyBytes);
      if (!body.ok) {
        if (body.reason === 'too-large')
          return sendRefusal(sink, Refusals.bodyTooLarge(o.maxBodyBytes), headers);
        if (body.reason === 'invalid-utf8')
          return sendRefusal(sink, Refusals.parseError('the body is not valid UTF-8'), headers);
        return;
      }
      if (cluster !== undefined && (await routed(req, res, sink, body.text, auth, headers))) return;
      return handlePost(ep, {
        head,
        rawHeaders: req.headers,
        body: body.text,
        accept,
        auth,
        sink,
        headers,
        guard,
      });
    }
    if (method === 'GET' && o.enableGetStream) {
      if (!parseAccept(head.header('accept')).sse)
        return sendRefusal(sink, Refusals.notAcceptableGet(), headers);
      if (cluster !== undefined && (await routed(req, res, sink, '', auth, headers))) return;
      return handleGet(ep, head, auth, sink, headers, guard);
    }
    if (method === 'DELETE' && o.enableDelete) {
      if (cluster !== undefined && (await routed(req, res, sink, '', auth, headers))) return;
      return handleDelete(ep, head, auth, sink, headers);
    }
    return sendRefusal(sink, Refusals.methodNotAllowed(methods), headers);
  }

  const listener = ((req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((error: unknown) => {
      o.logger?.error('request.failed', { error: error instanceof Error ? error.message : String(error) });
      if (!res.headersSent) {
        sendRefusal(new NodeSink(res), {
          status: 500,
          code: -32603,
          reason: 'internal-error',
          message: 'Internal error',
        });
      } else {
        res.destroy();
      }
    });
  }) as McpHandler;
  listener.close = async (opts) => {
    const report = await ep.close(opts?.graceMs ?? 0);
    await cluster?.stop();
    return report;
  };
  listener.stats = (opts) =>
    cluster === undefined ? ep.stats(opts) : { ...ep.stats(opts), cluster: cluster.stats() };
  listener.metrics = () =>
    renderPrometheus(ep.stats(), ep.counters.metrics) +
    (cluster === undefined ? '' : renderClusterMetrics(cluster));
  (listener as { cluster: RedisCluster | undefined }).cluster = cluster;
  return listener;
}
