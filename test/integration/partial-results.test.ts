// Partial tool output end to end (docs/partial-results.md): the `generate` demo tool streams deltas;
// whatever path they take (fast path or extra.sendNotification, auto/sse/json, Sluice or official
// SDK client, SEP form), the concatenated deltas equal the final text byte for byte.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  callToolStream,
  PartialSequenceError,
  StreamableHttpClientTransport,
} from '../../src/client/index.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { generateText } from '../../src/demo/generate.js';
import { PARTIAL_META_KEY, PARTIAL_RESULT_METHOD } from '../../src/jsonrpc/partial.js';
import { type Served, type ServeOptions, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { type SdkServer, startSdkServer } from '../helpers/sdk-reference-server.js';

export async function startDemo(options: Omit<ServeOptions, 'createServer'> = {}): Promise<Served> {
  return serve({ createServer: () => createDemoServer(), host: '127.0.0.1', port: 0, ...options });
}

type Kind = 'sluice' | 'sdk';

async function connect(url: string, kind: Kind, capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client({ name: 'partial-test', version: '1' }, { capabilities });
  const transport: Transport =
    kind === 'sluice'
      ? new StreamableHttpClientTransport(new URL(url))
      : (new StreamableHTTPClientTransport(new URL(url)) as Transport);
  await withDeadline(client.connect(transport), 5_000, 'connect');
  return client;
}

function resultText(result: unknown): string {
  const c = (result as { content?: { type: string; text: string }[] }).content?.[0];
  return c?.type === 'text' ? c.text : '';
}

/** Streams `generate` through callToolStream; returns the concatenated deltas and the result's text. */
async function streamGenerate(
  client: Client,
  args: Record<string, unknown>,
): Promise<{ streamed: string; final: string; frames: number; deltas: number }> {
  let streamed = '';
  let final = '';
  let frames = 0;
  let deltas = 0;
  for await (const part of callToolStream(
    client,
    { name: 'generate', arguments: args },
    { timeout: 60_000 },
  )) {
    if (part.type === 'partial') {
      streamed += part.text;
      frames++;
      deltas += part.n;
    } else if (part.type === 'result') final = resultText(part.result);
  }
  return { streamed, final, frames, deltas };
}

for (const mode of ['auto', 'sse', 'json'] as const) {
  describe(`partial results, ${mode} mode`, () => {
    let srv: Served;
    before(async () => {
      srv = await startDemo({ mode, streamAfterMs: 0, keepaliveMs: 0 });
    });
    after(() => srv.close());

    for (const kind of ['sluice', 'sdk'] as const) {
      test(`${kind} client: concatenated deltas equal the final text, every delta in order`, async () => {
        const client = await connect(srv.url, kind);
        try {
          const words = 300;
          const r = await withDeadline(
            streamGenerate(client, { words, delayMs: 0, seed: 7 }),
            30_000,
            'generate',
          );
          assert.equal(r.final, generateText(words, 7));
          assert.equal(r.streamed, r.final, 'byte for byte');
          assert.equal(r.deltas, words, 'every delta accounted for');
        } finally {
          await client.close();
        }
      });
    }

    test('official SDK client, plain onprogress: ordinary progress notifications whose messages are the text', async () => {
      const client = await connect(srv.url, 'sdk');
      try {
        let text = '';
        let marked = 0;
        const progress: number[] = [];
        const result = await withDeadline(
          client.callTool({ name: 'generate', arguments: { words: 120, delayMs: 1, seed: 3 } }, undefined, {
            onprogress: (p) => {
              text += p.message ?? '';
              progress.push(p.progress);
              if ((p as { _meta?: Record<string, unknown> })._meta?.[PARTIAL_META_KEY] !== undefined)
                marked++;
            },
          }),
          30_000,
          'callTool',
        );
        assert.equal(resultText(result), generateText(120, 3));
        assert.equal(text, resultText(result), 'the progress messages concatenate to the result');
        assert.equal(marked, progress.length, 'every delta carries the Sluice marker');
        assert.ok(
          progress.every((p, i) => i === 0 || p > (progress[i - 1] ?? 0)),
          'progress increases',
        );
      } finally {
        await client.close();
      }
    });
  });
}

describe('partial results, json mode without a GET stream', () => {
  let srv: Served;
  before(async () => {
    srv = await startDemo({ mode: 'json', keepaliveMs: 0, pacingMs: 1_000 });
  });
  after(() => srv.close());

  test('deltas have nowhere to go: counted undeliverable, the tool is not paced, the result carries the text', async () => {
    const client = new Client({ name: 'no-get', version: '1' });
    await withDeadline(
      client.connect(new StreamableHttpClientTransport(new URL(srv.url), { openStandaloneStream: false })),
      5_000,
      'connect',
    );
    try {
      const before = srv.handler.stats().undeliverable;
      // Paced at pacingMs (1 s) per delta, 50 deltas would take 50 s: the deadline catches that.
      const r = await withDeadline(
        streamGenerate(client, { words: 50, delayMs: 0, seed: 8 }),
        10_000,
        'generate',
      );
      assert.equal(r.final, generateText(50, 8));
      assert.equal(r.streamed, '');
      assert.equal(srv.handler.stats().undeliverable - before, 50);
    } finally {
      await client.close();
    }
  });
});

describe('partial results, stateless mode', () => {
  let srv: Served;
  before(async () => {
    srv = await startDemo({ stateless: true, streamAfterMs: 0, keepaliveMs: 0 });
  });
  after(() => srv.close());

  test('fast path without a session: concatenated deltas equal the final text', async () => {
    const client = await connect(srv.url, 'sluice');
    try {
      const r = await withDeadline(
        streamGenerate(client, { words: 200, delayMs: 0, seed: 13 }),
        30_000,
        'generate',
      );
      assert.equal(r.final, generateText(200, 13));
      assert.equal(r.streamed, r.final);
    } finally {
      await client.close();
    }
  });
});

describe('partial results on the official SDK server transport', () => {
  let sdk: SdkServer;
  before(async () => {
    sdk = await startSdkServer();
  });
  after(() => sdk.close());

  test('partialResults() falls back to extra.sendNotification; callToolStream reads it', async () => {
    const client = await connect(sdk.url, 'sluice');
    try {
      const r = await withDeadline(streamGenerate(client, { words: 150, seed: 17 }), 30_000, 'generate');
      assert.equal(r.final, generateText(150, 17));
      assert.equal(r.streamed, r.final);
      assert.equal(r.deltas, 150);
    } finally {
      await client.close();
    }
  });

  test('a missing delta surfaces as PartialSequenceError (code SLUICE_CLIENT_PARTIAL_SEQUENCE)', async () => {
    const client = await connect(sdk.url, 'sdk');
    try {
      const texts: string[] = [];
      const run = async (): Promise<void> => {
        for await (const part of callToolStream(client, { name: 'gappy' })) {
          if (part.type === 'partial') texts.push(part.text);
        }
      };
      await assert.rejects(withDeadline(run(), 10_000, 'gappy'), (e: unknown) => {
        assert.ok(e instanceof PartialSequenceError);
        assert.equal(e.code, 'SLUICE_CLIENT_PARTIAL_SEQUENCE');
        assert.equal(e.expected, 2);
        assert.equal(e.received, 3);
        return true;
      });
      assert.deepEqual(texts, ['d0 ', 'd1 '], 'the deltas before the gap were yielded');
    } finally {
      await client.close();
    }
  });
});

describe('partial results: the draft SEP form behind negotiation', () => {
  let srv: Served;
  before(async () => {
    srv = await startDemo({ keepaliveMs: 0 });
  });
  after(() => srv.close());

  test('a client declaring partialResults gets notifications/tools/partial_result, not progress', async () => {
    const client = await connect(srv.url, 'sluice', { partialResults: {} });
    const seen: string[] = [];
    client.fallbackNotificationHandler = async (n) => {
      seen.push(n.method);
    };
    try {
      let progress = 0;
      const r = await withDeadline(
        (async () => {
          let streamed = '';
          let final = '';
          for await (const part of callToolStream(client, {
            name: 'generate',
            arguments: { words: 80, delayMs: 0, seed: 11 },
          })) {
            if (part.type === 'partial') streamed += part.text;
            else if (part.type === 'progress') progress++;
            else final = resultText(part.result);
          }
          return { streamed, final };
        })(),
        30_000,
        'generate (SEP)',
      );
      assert.equal(r.final, generateText(80, 11));
      assert.equal(r.streamed, r.final);
      assert.equal(progress, 0, 'no progress notifications: the SEP form replaced them');
      assert.ok(!seen.includes(PARTIAL_RESULT_METHOD), 'every SEP notification was routed to its call');
    } finally {
      await client.close();
    }
  });

  test('without the capability, a partialResultToken alone does not switch the form', async () => {
    const client = await connect(srv.url, 'sdk');
    try {
      let text = '';
      const seen: string[] = [];
      client.fallbackNotificationHandler = async (n) => {
        seen.push(n.method);
      };
      const result = await withDeadline(
        client.callTool(
          {
            name: 'generate',
            arguments: { words: 30, delayMs: 0, seed: 2 },
            _meta: { partialResultToken: 'x' },
          },
          undefined,
          { onprogress: (p) => (text += p.message ?? '') },
        ),
        30_000,
        'callTool',
      );
      assert.equal(text, resultText(result));
      assert.deepEqual(seen, []);
    } finally {
      await client.close();
    }
  });

  test('no progress token and no SEP token: no partial output, the result still carries the text', async () => {
    const client = await connect(srv.url, 'sdk');
    try {
      const seen: string[] = [];
      client.fallbackNotificationHandler = async (n) => {
        seen.push(n.method);
      };
      const result = await withDeadline(
        client.callTool({ name: 'generate', arguments: { words: 40, delayMs: 0, seed: 5 } }),
        30_000,
        'callTool',
      );
      assert.equal(resultText(result), generateText(40, 5));
      assert.deepEqual(seen, []);
    } finally {
      await client.close();
    }
  });
});
