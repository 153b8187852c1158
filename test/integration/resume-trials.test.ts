// Resumption under fire: the client's socket is destroyed at random points of a live POST stream
// while the handler keeps producing; a GET with Last-Event-ID must deliver every event after the
// cursor exactly once, in order, and the result exactly once. Plus the official SDK Client's
// server-to-client request round trips (sampling, elicitation) against Sluice in every mode.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type Loose, RawSession, toolCall } from '../helpers/http.js';
import { prng } from '../helpers/prng.js';
import { startServer } from '../helpers/test-server.js';

describe('resume after the socket is destroyed mid-stream', () => {
  test('30 trials at random points: every event after the cursor once, in order; the result once', async () => {
    const seed = Number(process.env['SLUICE_TRIAL_SEED'] ?? Date.now() % 1_000_000);
    const rand = prng(seed);
    const srv = await startServer({ pacingMs: 5 });
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const n = 40;
    for (let trial = 0; trial < 30; trial++) {
      const label = `trial ${trial} (SLUICE_TRIAL_SEED=${seed})`;
      const cut = 1 + Math.floor(rand() * (n - 1));
      const id = `t${trial}`;
      const post = await s.postOpen(toolCall('progress', { n, delayMs: 2 }, id, `tok-${trial}`));
      await post.waitFor((r) => r.messages().length >= cut, 5_000, `${label}: ${cut} events`);
      post.destroy();
      const before = post.messages();
      const lastId = post.events.at(-1)?.id;
      assert.ok(lastId !== undefined, `${label}: an event id to resume from`);
      const resumed = await s.get({ 'last-event-id': lastId });
      assert.equal(resumed.status, 200, `${label}: resume status`);
      await resumed.finished(10_000, `${label}: resumed stream ends after the result`);
      const all: Loose[] = [...before, ...resumed.messages()];
      const progress = all.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress);
      assert.deepEqual(
        progress,
        Array.from({ length: n }, (_, i) => i + 1),
        `${label}: cut after ${cut}, got ${progress.join(',')}`,
      );
      const results = all.filter((m) => m.id === id);
      assert.equal(results.length, 1, `${label}: the result exactly once`);
      assert.equal(results[0].result.content[0].text, `done ${n}`);
    }
    assert.equal(srv.stats().replays.served, 30);
    assert.deepEqual(srv.stats().replays.declined, { malformed: 0, foreign: 0, unknown: 0, evicted: 0 });
  });
});

describe('server-to-client requests with the official SDK Client', () => {
  for (const mode of ['auto', 'json', 'sse'] as const) {
    test(`${mode}: sampling and elicitation round trips complete`, async () => {
      const srv = await startServer({ mode });
      after(() => srv.close());
      const client = new Client(
        { name: 'interop', version: '1' },
        { capabilities: { sampling: {}, elicitation: { form: {} } } },
      );
      client.setRequestHandler(CreateMessageRequestSchema, async () => ({
        role: 'assistant',
        model: 'test-model',
        content: { type: 'text', text: 'sampled' },
      }));
      client.setRequestHandler(ElicitRequestSchema, async () => ({
        action: 'accept',
        content: { name: 'Ada' },
      }));
      await client.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
      after(() => client.close());
      // json mode carries server requests on the GET stream, which the SDK client opens after
      // initialization; give it a moment to be attached.
      if (mode === 'json') await new Promise((r) => setTimeout(r, 200));
      const sampled = await client.callTool(
        { name: 'ask', arguments: { kind: 'sampling' } },
        CallToolResultSchema,
      );
      assert.equal((sampled.content as { text: string }[])[0]?.text, 'sampled test-model');
      const elicited = await client.callTool(
        { name: 'ask', arguments: { kind: 'elicitation' } },
        CallToolResultSchema,
      );
      assert.equal((elicited.content as { text: string }[])[0]?.text, 'elicited accept {"name":"Ada"}');
      assert.equal(srv.stats().undeliverable, 0);
    });
  }
});
