// The SDK's `Client` over a client transport: the SDK's own StreamableHTTPClientTransport, or
// Sluice's drop-in StreamableHttpClientTransport. Sluice's module is loaded at run time so the
// harness runs while src/client is absent; a missing module is reported as unavailable.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { BenchClient } from './bench-client.js';

/** Where tsc puts src/client/index.ts, relative to this file in dist/bench/clients/. */
const SLUICE_CLIENT_MODULE = new URL('../../src/client/index.js', import.meta.url).href;

type TransportClass = new (url: URL, options?: { protocol?: unknown }) => Transport;

async function loadSluiceTransport(): Promise<TransportClass> {
  const mod: unknown = await import(SLUICE_CLIENT_MODULE);
  const ctor = (mod as { StreamableHttpClientTransport?: unknown }).StreamableHttpClientTransport;
  if (typeof ctor !== 'function') {
    throw new Error(`${SLUICE_CLIENT_MODULE} does not export StreamableHttpClientTransport`);
  }
  return ctor as TransportClass;
}

function firstText(result: unknown): string | undefined {
  const content = (result as { content?: unknown }).content;
  if (!Array.isArray(content)) return undefined;
  const first: unknown = content[0];
  const text = (first as { text?: unknown } | undefined)?.text;
  return typeof text === 'string' ? text : undefined;
}

export async function connectMcpClient(
  url: string,
  transport: 'sdk' | 'sluice',
  timeoutMs: number,
): Promise<BenchClient> {
  const client = new Client({ name: 'sluice-bench', version: '1.0.0' });
  // Sluice's transport runs with its fast dispatch on (docs/client.md): that is how it is meant to
  // be used for throughput; the SDK transport has no such option.
  const wire: Transport =
    transport === 'sdk'
      ? new StreamableHTTPClientTransport(new URL(url))
      : new (await loadSluiceTransport())(new URL(url), { protocol: client });
  await client.connect(wire);
  return {
    async echo(id) {
      const text = `hello ${id}`;
      const result = await client.callTool({ name: 'echo', arguments: { text } }, CallToolResultSchema, {
        timeout: timeoutMs,
      });
      const got = firstText(result);
      if (got !== text) throw new Error(`echo ${id}: got ${String(got)}`);
    },
    async flood(_id, count) {
      let events = 0;
      let last = 0;
      const result = await client.callTool(
        { name: 'flood', arguments: { count, payloadBytes: 0 } },
        CallToolResultSchema,
        {
          timeout: timeoutMs,
          onprogress: (p) => {
            events++;
            last = p.progress;
          },
        },
      );
      const got = firstText(result);
      if (got !== `sent ${count}`) throw new Error(`flood: got ${String(got)}`);
      // A server may coalesce progress events (Sluice does under backpressure), never lose the last.
      if (last !== count || events > count) throw new Error(`flood: ${events} events, last progress ${last}`);
      return events;
    },
    close: () => client.close(),
  };
}
