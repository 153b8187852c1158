/**
 * The fixture of the resumption tests that cut connections: `sluice serve`'s demo server, with a
 * short retry hint, a 5 ms pacing window, no keepalive and a replay buffer deep enough to hold a
 * whole call, behind a cut proxy (cut-proxy.ts); and a client transport of either kind that
 * reconnects at once.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import { type CutProxy, startCutProxy } from './cut-proxy.js';

/** Starts the demo server in `mode` and a cut proxy in front of it; close the proxy, then the server. */
export async function startCutDemo(mode: 'sse' | 'json'): Promise<{ srv: Served; proxy: CutProxy }> {
  const srv = await serve({
    createServer: () => createDemoServer(),
    host: '127.0.0.1',
    port: 0,
    mode,
    retryMs: 10,
    pacingMs: 5,
    keepaliveMs: 0,
    replay: { maxCount: 100_000, maxBytes: 64 * 1024 * 1024, maxAgeMs: 60_000 },
  });
  const proxy = await startCutProxy(srv.port);
  return { srv, proxy };
}

/** Sluice's client transport, or the official SDK's with its reconnection made fast (`maxRetries` tries). */
export function resumingTransport(kind: 'sluice' | 'sdk', url: URL, maxRetries: number): Transport {
  return kind === 'sluice'
    ? new StreamableHttpClientTransport(url)
    : (new StreamableHTTPClientTransport(url, {
        reconnectionOptions: {
          initialReconnectionDelay: 10,
          maxReconnectionDelay: 50,
          reconnectionDelayGrowFactor: 1.5,
          maxRetries,
        },
      }) as Transport);
}
