// Partial output through nginx, with the recommended location block and with nginx's defaults:
// the Sluice client's concatenated deltas equal the final text byte for byte, in auto, sse and json.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callToolStream, StreamableHttpClientTransport } from '../../src/client/index.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { generateText } from '../../src/demo/generate.js';
import { type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { type Nginx, RECOMMENDED_LOCATION, skipWithoutNginx, startNginx } from '../helpers/nginx.js';

const running: (Served | Nginx)[] = [];
after(async () => {
  for (const r of running.splice(0).reverse()) {
    if ('stop' in r) await r.stop();
    else await r.close();
  }
});

function resultText(result: unknown): string {
  const c = (result as { content?: { type: string; text: string }[] }).content?.[0];
  return c?.type === 'text' ? c.text : '';
}

describe('partial output through nginx', () => {
  for (const [config, location] of [
    ['recommended', RECOMMENDED_LOCATION],
    ['defaults', ''],
  ] as const) {
    for (const mode of ['auto', 'sse', 'json'] as const) {
      test(`${config} config, ${mode} mode: concatenated deltas equal the final text`, async (t) => {
        if (skipWithoutNginx(t)) return;
        const upstream = await serve({
          createServer: () => createDemoServer(),
          host: '127.0.0.1',
          port: 0,
          mode,
          streamAfterMs: 0,
        });
        running.push(upstream);
        const nginx = await startNginx({ upstreamPort: upstream.port, location });
        running.push(nginx);
        const client = new Client({ name: 'nginx-partial', version: '1' });
        await withDeadline(
          client.connect(new StreamableHttpClientTransport(new URL(nginx.url))),
          5_000,
          'connect',
        );
        try {
          let streamed = '';
          let final = '';
          const run = async (): Promise<void> => {
            for await (const part of callToolStream(client, {
              name: 'generate',
              arguments: { words: 400, delayMs: 0, seed: 21 },
            })) {
              if (part.type === 'partial') streamed += part.text;
              else if (part.type === 'result') final = resultText(part.result);
            }
          };
          await withDeadline(run(), 30_000, 'generate through nginx');
          assert.equal(final, generateText(400, 21));
          assert.equal(streamed, final, 'byte for byte');
        } finally {
          await client.close();
        }
      });
    }
  }
});
