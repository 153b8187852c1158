/**
 * serve(): a node:http server with the MCP endpoint at `path`, bound to 127.0.0.1 unless told
 * otherwise (2025-11-25 basic/transports: local servers SHOULD bind only to localhost).
 * Node's timeouts are set on purpose: slow headers and bodies are cut (slowloris), long-lived SSE
 * responses are not — requestTimeout only covers receiving the request, and the socket inactivity
 * timeout stays off because keepalive comments, not silence detection, keep streams alive.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CloseReport } from '../core/endpoint.js';
import { sendRefusal } from '../core/refusal.js';
import { InvalidOptionError } from '../errors.js';
import { isLoopbackAddress } from '../security/host.js';
import { createMcpHandler, type McpHandler, type McpHandlerOptions } from './create-handler.js';
import { NodeSink } from './node-sink.js';

export interface ServeOptions extends McpHandlerOptions {
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
  /** Serve the Prometheus exposition at this path (e.g. '/metrics'). @defaultValue undefined (off) */
  metricsPath?: string;
  /** Extra routes served beside the MCP path. */
  routes?: Record<
    string,
    (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void
  >;
}

export interface Served {
  url: string;
  port: number;
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
  const handler = createMcpHandler(options);
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
  const server = createServer(
    {
      noDelay: true,
      headersTimeout,
      requestTimeout,
      // Node enforces both only when it sweeps connections (every 30 s by default), which would let a
      // slow-headers client hold a socket for up to 40 s; sweep at a quarter of the shorter timeout.
      connectionsCheckingInterval: Math.max(100, Math.floor(headersTimeout / 4)),
      keepAliveTimeout: 5_000,
    },
    (req, res) => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const p = q < 0 ? url : url.slice(0, q);
      if (p === path) return handler(req, res);
      const route = routes[p];
      if (route !== undefined) return route(req, res);
      sendRefusal(new NodeSink(res), {
        status: 404,
        code: -32601,
        reason: 'not-found',
        message: `Not Found: the MCP endpoint is ${path}`,
      });
    },
  );
  server.timeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const urlHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const warning = bindWarning(addr.address, addr.port, options.authenticate !== undefined);
  if (warning !== undefined) process.emitWarning(warning, { code: 'SLUICE_UNAUTHENTICATED_BIND' });
  const url = `http://${urlHost}:${addr.port}${path}`;
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
        const report = await handler.close(opts);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        return report;
      })();
      return closing;
    },
  };
}
