/**
 * createMcpHandler: the node:http request listener. Each request passes the same layers in order,
 * each a small pure check that either refuses or lets it through, before any body is read or any
 * session is looked up:
 *   Host (loopback binds) → Origin → CORS preflight → authenticate → method → media types → body
 * then the core's POST/GET/DELETE logic. Options are resolved and validated once, here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleDelete } from '../core/delete.js';
import { type CloseReport, type CreateServer, Endpoint, type EndpointStats } from '../core/endpoint.js';
import { handleGet } from '../core/get.js';
import { type AuthResult, resolveOptions, type ServerOptions } from '../core/options.js';
import { handlePost } from '../core/post.js';
import { Refusals, sendRefusal } from '../core/refusal.js';
import type { Headers, RequestHead } from '../core/sink.js';
import type { StreamGuard } from '../core/stream-guard.js';
import { BodyConsumedError, InvalidOptionError, SluiceError } from '../errors.js';
import { isJsonContentType, parseAccept } from '../http/media-type.js';
import { type Notifier, notifierFor } from '../modern/bus.js';
import { corsHeaders, preflightHeaders } from '../security/cors.js';
import { hostAllowed, isLoopbackAddress } from '../security/host.js';
import { checkOrigin } from '../security/origin.js';
import { diagnosticsProbe } from './diagnostics.js';
import { frameworkBody } from './framework-body.js';
import { NodeSink } from './node-sink.js';
import { renderPrometheus } from './prometheus.js';
import { readBody } from './read-body.js';

export interface McpHandlerOptions extends ServerOptions {
  /** Returns a fresh SDK McpServer (or Server) for each session. */
  createServer: CreateServer;
}

export interface McpHandler {
  /**
   * `parsedBody`: the POST body a framework already parsed (Express `req.body`, Fastify
   * `request.body`, Hono `await c.req.json()`); without it the handler reads the request stream.
   */
  (req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): void;
  /** Refuses new sessions, waits up to graceMs for requests in flight, then ends every session. */
  close(options?: { graceMs?: number }): Promise<CloseReport>;
  /** Counters and gauges; `perStream: true` adds one entry per open SSE connection. */
  stats(options?: { perStream?: boolean }): EndpointStats;
  /**
   * Publishes changes to 2026-07-28 `subscriptions/listen` streams (list changes, resource
   * updates); list changes that served servers emit during modern requests are published too.
   */
  readonly notify: Notifier;
  /** The stats in Prometheus text format, for a route of your own (sluice serve --metrics serves /metrics). */
  metrics(): string;
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
    throw new InvalidOptionError('createMcpHandler needs { createServer: (ctx) => new McpServer(...) }');
  }
  const o = resolveOptions({ probe: diagnosticsProbe(), ...options });
  const ep = new Endpoint(options.createServer, o);
  const methods = ['POST', ...(o.enableGetStream ? ['GET'] : []), ...(o.enableDelete ? ['DELETE'] : [])].join(
    ', ',
  );
  const challenge =
    o.resourceMetadataUrl === undefined
      ? 'Bearer'
      : `Bearer resource_metadata="${o.resourceMetadataUrl.replace(/"/g, '%22')}"`;

  async function handle(req: IncomingMessage, res: ServerResponse, parsedBody: unknown): Promise<void> {
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
      const requested = head.header('access-control-request-headers');
      sink.respond(
        204,
        origin === undefined ? { allow: methods } : preflightHeaders(origin, methods, requested),
        '',
      );
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
      const source = frameworkBody(req, parsedBody);
      if (source.kind === 'consumed') {
        throw new BodyConsumedError(
          'the request body was already read by a body parser (e.g. express.json()) and no parsed body was ' +
            'passed: call the handler as handler(req, res, req.body), or mount it before the body parser',
        );
      }
      if (source.kind === 'invalid-utf8')
        return sendRefusal(sink, Refusals.parseError('the body is not valid UTF-8'), headers);
      if (source.kind === 'text' && source.bytes > o.maxBodyBytes)
        return sendRefusal(sink, Refusals.bodyTooLarge(o.maxBodyBytes), headers);
      const body =
        source.kind === 'text'
          ? { ok: true as const, text: source.text }
          : await readBody(req, o.maxBodyBytes);
      if (!body.ok) {
        if (body.reason === 'too-large')
          return sendRefusal(sink, Refusals.bodyTooLarge(o.maxBodyBytes), headers);
        if (body.reason === 'invalid-utf8')
          return sendRefusal(sink, Refusals.parseError('the body is not valid UTF-8'), headers);
        return;
      }
      return handlePost(ep, {
        head,
        rawHeaders: req.headers,
        body: body.text,
        accept,
        auth,
        sink,
        headers,
        guard,
        remote: req.socket.remoteAddress,
      });
    }
    if (method === 'GET' && o.enableGetStream) {
      if (!parseAccept(head.header('accept')).sse)
        return sendRefusal(sink, Refusals.notAcceptableGet(), headers);
      return handleGet(ep, head, auth, sink, headers, guard);
    }
    if (method === 'DELETE' && o.enableDelete) return handleDelete(ep, head, auth, sink, headers);
    return sendRefusal(sink, Refusals.methodNotAllowed(methods), headers);
  }

  // A misconfiguration (createServer returning something else, a body parser in front) fails every
  // request the same way: it goes to the logger, or to stderr once when there is none, so it is
  // never silent; the 500 names the code so whoever sees it knows where to look.
  const told = new Set<string>();
  const listener = ((req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): void => {
    handle(req, res, parsedBody).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      const code = error instanceof SluiceError ? error.code : undefined;
      if (o.logger !== undefined)
        o.logger.error('request.failed', { error: message, ...(code ? { code } : {}) });
      else if (code !== undefined && !told.has(code)) {
        told.add(code);
        process.stderr.write(`sluice: ${code}: ${message}\n`);
      }
      if (!res.headersSent) {
        sendRefusal(new NodeSink(res), Refusals.internalError(code));
      } else {
        res.destroy();
      }
    });
  }) as McpHandler;
  listener.close = (opts) => ep.close(opts?.graceMs ?? 0);
  listener.stats = (opts) => ep.stats(opts);
  (listener as { notify: Notifier }).notify = notifierFor(ep.modern.bus);
  listener.metrics = () => renderPrometheus(ep.stats(), ep.counters.metrics);
  return listener;
}
