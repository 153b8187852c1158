/**
 * serve(): a node:http server with the MCP endpoint at `path`, bound to 127.0.0.1 unless told
 * otherwise (2025-11-25 basic/transports: local servers SHOULD bind only to localhost).
 * Node's timeouts are set on purpose: slow headers and bodies are cut (slowloris), long-lived SSE
 * responses are not — requestTimeout only covers receiving the request, and the socket inactivity
 * timeout stays off because keepalive comments, not silence detection, keep streams alive.
 */
import { type IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import type { OAuthResourceServer } from '../auth/resource-server.js';
import { clusterResourceServer } from '../cluster/proof-replays.js';
import type { CloseReport } from '../core/endpoint.js';
import { positiveInt } from '../core/option-checks.js';
import { Refusals, sendRefusal } from '../core/pipeline/refusal.js';
import { InvalidOptionError } from '../errors.js';
import { isLoopbackAddress } from '../security/host.js';
import {
  createMcpHandler,
  type McpHandler,
  type McpHandlerOptions,
  metadataServed,
} from './create-handler.js';
import { H2Sink } from './h2-sink.js';
import { createTransportServer, type TlsOptions } from './listen.js';
import { NodeSink } from './node-sink.js';
import { continueWhenRead } from './node-view.js';
import { targetPathname } from './request-line.js';

export interface ServeOptions extends Omit<McpHandlerOptions, 'oauth'> {
  /**
   * An OAuth 2.1 resource server (docs/authorization.md): it authenticates every request, and its
   * protected resource metadata is served at `/.well-known/oauth-protected-resource` + the
   * resource's path and at the root. A function is called once the server is bound, with the
   * endpoint URL (as `Served.url`), for a resource that names the port picked by `port: 0`.
   * @defaultValue undefined
   */
  oauth?: OAuthResourceServer | ((endpointUrl: string) => OAuthResourceServer);
  /** @defaultValue '127.0.0.1' */
  host?: string;
  /** 0 picks a free port. @defaultValue 3000 */
  port?: number;
  /** @defaultValue '/mcp' */
  path?: string;
  /** Time allowed to receive request headers. @defaultValue 10000 */
  headersTimeoutMs?: number;
  /** Time allowed to receive a whole request (headers and body); never applies to responses. @defaultValue 30000 */
  requestTimeoutMs?: number;
  /**
   * How long an idle keep-alive connection (HTTP/1.1) is kept before the server closes it. Above the idle
   * time of a proxy's upstream connection pool (nginx `keepalive_timeout`, 60 s by default; AWS ALB 60 s),
   * so that the proxy, not Sluice, closes an idle connection: otherwise the proxy may send a request on a
   * connection the server is closing at that instant, and nginx answers a POST so cut with 502 rather
   * than send it again (RFC 9112 §9.3.1 lets a client retry only what it knows was not processed).
   * @defaultValue 65000
   */
  keepAliveTimeoutMs?: number;
  /** Serve the Prometheus exposition at this path (e.g. '/metrics'). @defaultValue undefined (off) */
  metricsPath?: string;
  /** Serve HTTPS with this PEM key and certificate. @defaultValue undefined (plain HTTP) */
  tls?: TlsOptions;
  /** With `tls`: serve HTTP/2, HTTP/1.1 as fallback (ALPN). @defaultValue false */
  http2?: boolean;
  /** Extra routes served beside the MCP path (HTTP/1.1 request/response objects). */
  routes?: Record<
    string,
    (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void
  >;
}

export interface Served {
  url: string;
  port: number;
  /** node:http's Server, node:https's, or node:http2's secure server (all net.Server). */
  server: Server;
  handler: McpHandler;
  close(options?: { graceMs?: number }): Promise<CloseReport>;
}

/**
 * The warning for a bind reachable beyond this machine without authentication (2025-11-25
 * basic/transports: local servers SHOULD bind to 127.0.0.1; servers SHOULD authenticate), or
 * undefined when the bind is loopback or authenticated.
 */
export function bindWarning(address: string, port: number, authenticated: boolean): string | undefined {
  if (isLoopbackAddress(address) || authenticated) return undefined;
  const host = address.includes(':') ? `[${address}]` : address;
  return `sluice is listening on ${host}:${port}, reachable beyond this machine, with no authentication configured`;
}

export async function serve(options: ServeOptions): Promise<Served> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 3000;
  const path = options.path ?? '/mcp';
  if (options.cluster !== undefined && options.tls !== undefined) {
    // The hop between instances is plain HTTP on the advertised address (signed, not encrypted).
    throw new InvalidOptionError(
      'serve: cluster with tls is not supported: terminate TLS at the load balancer, or run the cluster without tls',
    );
  }
  if (options.oauth !== undefined && options.authenticate !== undefined) {
    throw new InvalidOptionError('serve: pass oauth or authenticate, not both (oauth authenticates)');
  }
  const makeOAuth = typeof options.oauth === 'function' ? options.oauth : undefined;
  // With a factory the resource server exists once the port is known; no request is read before.
  // A cluster's members spend DPoP proofs where all of them look (cluster/proof-replays.ts).
  let oauth =
    typeof options.oauth === 'function' || options.oauth === undefined
      ? undefined
      : clusterResourceServer(options.oauth, options.cluster);
  const { oauth: _given, ...handlerOptions } = options;
  const handler = createMcpHandler(
    options.oauth === undefined
      ? handlerOptions
      : {
          ...handlerOptions,
          authenticate: (req) => (oauth as OAuthResourceServer).authenticate(req),
        },
  );
  const routes = { ...options.routes };
  if (options.metricsPath !== undefined) {
    routes[options.metricsPath] = (_req, res) => {
      const body = handler.metrics();
      res.writeHead(200, {
        'content-type': 'text/plain; version=0.0.4',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    };
  }
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  if (!(headersTimeout > 0 && requestTimeout >= headersTimeout)) {
    throw new InvalidOptionError('serve: need 0 < headersTimeoutMs <= requestTimeoutMs');
  }
  const keepAliveTimeout = positiveInt('serve: keepAliveTimeoutMs', options.keepAliveTimeoutMs ?? 65_000);
  const transport = createTransportServer(
    { tls: options.tls, http2: options.http2, headersTimeout, requestTimeout, keepAliveTimeout },
    (req, res) => {
      const p = targetPathname(req.url ?? '/');
      if (p === path) return handler(req, res);
      if (oauth !== undefined && metadataServed(oauth, req, res)) return;
      const route = routes[p];
      // Extra routes are written for node:http; over h2 the compatibility API stands in for it.
      if (route !== undefined) return route(req as IncomingMessage, res as ServerResponse);
      sendRefusal(
        res instanceof ServerResponse ? new NodeSink(res) : new H2Sink(res),
        Refusals.notFound(path),
      );
    },
  );
  const server = transport.server as Server & { timeout?: number };
  server.timeout = 0;
  // Expect: 100-continue (RFC 9110 §10.1.1): node:http would send 100 before the handler runs, so a
  // request refused from its headers alone (413 by Content-Length, 401, 415…) would have its client
  // upload the body first. The endpoint sends the 100 when it reads the body (node-view.ts); other
  // routes get it at once, as before. Both the HTTP/1.1 servers and node:http2's emit this event.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (targetPathname(req.url ?? '/') === path) continueWhenRead(req);
    else res.writeContinue();
    server.emit('request', req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const urlHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `${transport.scheme}://${urlHost}:${addr.port}${path}`;
  if (makeOAuth !== undefined) {
    try {
      oauth = clusterResourceServer(makeOAuth(url), options.cluster);
    } catch (error) {
      await handler.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw error;
    }
  }
  const authenticated = options.authenticate !== undefined || oauth !== undefined;
  const warning = bindWarning(addr.address, addr.port, authenticated);
  if (warning !== undefined) process.emitWarning(warning, { code: 'SLUICE_UNAUTHENTICATED_BIND' });
  if (handler.cluster !== undefined) {
    // Join the cluster (Redis, lease, shared secret) advertising the bound address unless told otherwise.
    try {
      await handler.cluster.start(url);
    } catch (error) {
      await handler.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw error;
    }
  }
  let closing: Promise<CloseReport> | undefined;
  return {
    url,
    port: addr.port,
    server,
    handler,
    close(opts) {
      closing ??= (async () => {
        // Stop accepting first: the listening socket is released at once, so a replacement process
        // can bind this port while the connections already open drain (docs/deploy.md, "Restarts").
        // server.close() also closes idle keep-alive connections; busy ones finish their requests.
        // HTTP/2: GOAWAY too, so clients open new streams elsewhere while these drain.
        const released = new Promise<void>((resolve) => server.close(() => resolve()));
        transport.goaway();
        const report = await handler.close(opts);
        await transport.closeAll();
        await released;
        return report;
      })();
      return closing;
    },
  };
}
