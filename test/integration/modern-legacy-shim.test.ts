/**
 * One tool for both eras: on a legacy session, an MRTR tool's `input_required` result becomes real
 * server-to-client requests on the request's stream (elicitation, sampling, roots), and the tool is
 * called again with the answers until it completes. Driven by the SDK 1.32 client against the demo
 * server's 2026 fixtures.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';

describe('legacy sessions: input_required results become server-to-client requests', () => {
  let s: Served;
  let client: Client;
  const asked: string[] = [];
  before(async () => {
    s = await serve({ createServer: () => createDemoServer(), port: 0, host: '127.0.0.1' });
    client = new Client(
      { name: 'legacy', version: '1.0.0' },
      { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async (r) => {
      asked.push(r.params.message);
      const prop = Object.keys(
        (r.params as { requestedSchema: { properties: object } }).requestedSchema.properties,
      )[0];
      return { action: 'accept', content: { [prop ?? 'x']: prop === 'color' ? 'green' : 'Alice' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'Paris' },
      model: 'test-model',
    }));
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: 'file:///work', name: 'work' }],
    }));
    await withDeadline(client.connect(new StreamableHTTPClientTransport(new URL(s.url))), 10_000, 'connect');
  });
  after(async () => {
    await client.close();
    await s.close();
  });

  const textOf = (r: unknown) => (r as { content: { text: string }[] }).content[0]?.text;

  test('elicitation: the client is asked, the tool completes with the answer', async () => {
    const r = await withDeadline(
      client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }),
      5_000,
      'call',
    );
    assert.equal(textOf(r), 'Hello, Alice!');
    assert.ok(asked.includes('What is your name?'));
  });

  test('sampling and roots', async () => {
    const a = await withDeadline(
      client.callTool({ name: 'test_input_required_result_sampling', arguments: {} }),
      5_000,
      'sampling',
    );
    assert.equal(textOf(a), 'The model said: Paris');
    const b = await withDeadline(
      client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} }),
      5_000,
      'roots',
    );
    assert.equal(textOf(b), 'Roots: file:///work');
  });

  test('several rounds with a sealed requestState', async () => {
    const r = await withDeadline(
      client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} }),
      5_000,
      'multi round',
    );
    assert.equal(textOf(r), 'Alice likes green');
  });

  test('an input the client cannot answer fails the call with an error, not a hang', async () => {
    const bare = new Client({ name: 'bare', version: '1.0.0' });
    await withDeadline(
      bare.connect(new StreamableHTTPClientTransport(new URL(s.url))),
      10_000,
      'connect bare',
    );
    try {
      await assert.rejects(
        withDeadline(
          bare.callTool({ name: 'test_input_required_result_sampling', arguments: {} }),
          5_000,
          'call',
        ),
        /input request failed/,
      );
    } finally {
      await bare.close();
    }
  });
});
