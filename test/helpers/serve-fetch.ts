/**
 * serve()'s shape over the fetch binding: createFetchHandler behind the node:http ↔ fetch adapter,
 * with the MCP path, an optional metrics path and 404 elsewhere, so the server suites can run
 * unchanged against either binding (SLUICE_TEST_BINDING=fetch).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFetchHandler, type FetchHandler } from '../../src/fetch/index.js';
import type { McpHandler, Served, ServeOptions } from '../../src/server/index.js';
import { fetchListener } from './fetch-adapter.js';

export async function serveFetch(options: ServeOptions): Promise<Served> {
  // Node's header/request timeouts belong to serve(); a fetch runtime has its own.
  const {
    host,
    port,
    path = '/mcp',
    metricsPath,
    routes,
    headersTimeoutMs: _headers,
    requestTimeoutMs: _request,
    oauth: given,
    ...rest
  } = options;
  // The handler is built once the port is known (an oauth factory names it); no request comes before.
  let fetchHandler: FetchHandler | undefined;
  let mcp: ReturnType<typeof fetchListener> | undefined;
  let metadataPaths: readonly string[] = [];
  const server = createServer({ noDelay: true }, (req, res) => {
    const url = req.url ?? '/';
    const p = url.split('?')[0];
    if (fetchHandler === undefined || mcp === undefined) throw new Error('request before the handler exists');
    if (p === path || (p !== undefined && metadataPaths.includes(p))) return mcp(req, res);
    if (metricsPath !== undefined && p === metricsPath) {
      const body = fetchHandler.metrics();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body);
      return;
    }
    const route = p === undefined ? undefined : routes?.[p];
    if (route !== undefined) return route(req, res);
    res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port ?? 0, host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const url = `http://${addr.address}:${addr.port}${path}`;
  const oauth = typeof given === 'function' ? given(url) : given;
  metadataPaths = oauth?.metadataPaths ?? [];
  fetchHandler = createFetchHandler(oauth === undefined ? rest : { ...rest, oauth });
  mcp = fetchListener(fetchHandler);
  const handler = Object.assign(mcp, {
    close: fetchHandler.close,
    stats: fetchHandler.stats,
    metrics: fetchHandler.metrics,
  }) as McpHandler;
  let closing: Promise<Awaited<ReturnType<McpHandler['close']>>> | undefined;
  return {
    url,
    port: addr.port,
    server,
    handler,
    close(opts) {
      closing ??= (async () => {
        const report = await (fetchHandler as FetchHandler).close(opts);
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
