/**
 * The fixture of the resumption tests that cut connections: `sluice serve`'s demo server, with a
 * short retry hint, a 5 ms pacing window, no keepalive and a replay buffer deep enough to hold a
 * whole call, behind a cut proxy (cut-proxy.ts); a client transport of either kind that
 * reconnects at once; and a `generate` call made the way each kind of client makes it.
 */

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { callToolStream, StreamableHttpClientTransport } from '../../src/client/index.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import { type CutProxy, startCutProxy } from './cut-proxy.js';
import { withDeadline } from './deadline.js';

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

/** The first content block's text of a tool result ('' when it is not text). */
export function resultText(result: unknown): string {
  const c = (result as { content?: { type: string; text: string }[] }).content?.[0];
  return c?.type === 'text' ? c.text : '';
}

/**
 * One `generate` call through `client` as a client of `kind` uses it: Sluice's `callToolStream`, or the
 * SDK's `callTool` with `onprogress` (each progress message is a delta). Returns the text streamed as
 * partial output and the result's text; `timeoutMs` is the request's timeout and the call's deadline.
 */
export async function generateThrough(
  kind: 'sluice' | 'sdk',
  client: Client,
  args: { words: number; delayMs: number; seed: number },
  timeoutMs: number,
  label: string,
): Promise<{ streamed: string; final: string }> {
  let streamed = '';
  let final = '';
  if (kind === 'sluice') {
    const run = async (): Promise<void> => {
      for await (const part of callToolStream(
        client,
        { name: 'generate', arguments: args },
        { timeout: timeoutMs },
      )) {
        if (part.type === 'partial') streamed += part.text;
        else if (part.type === 'result') final = resultText(part.result);
      }
    };
    await withDeadline(run(), timeoutMs, label);
  } else {
    const result = await withDeadline(
      client.callTool({ name: 'generate', arguments: args }, undefined, {
        timeout: timeoutMs,
        onprogress: (p) => {
          streamed += p.message ?? '';
        },
      }),
      timeoutMs,
      label,
    );
    final = resultText(result);
  }
  return { streamed, final };
}
