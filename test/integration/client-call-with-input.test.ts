/**
 * callWithInput against `sluice serve` (the compiled CLI and its demo server's 2026-07-28 MRTR fixtures), with
 * SDK v1's Client over Sluice's transport, in both eras and with the same handlers:
 * - 2026-07-28 requests (`_meta` protocolVersion): the server answers `input_required`; the helper fulfils the
 *   input requests and retries, across several rounds, with the server's sealed requestState, on prompts/get too;
 *   the capabilities it declares are the handlers' (the server asks for nothing else);
 * - legacy requests on the session: the server turns `input_required` into real server-to-client requests that the
 *   Client answers with the handlers registered on it, and the helper sees the complete result at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { callWithInput, type InputHandlers, StreamableHttpClientTransport } from '../../src/client/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

/** One set of handlers, counting what each was asked. */
function handlers(asked: string[]): Required<InputHandlers> {
  return {
    'elicitation/create': async (params) => {
      asked.push(`elicit:${params.message}`);
      const schema = ('requestedSchema' in params ? params.requestedSchema : undefined) as
        | { properties?: Record<string, { type?: string }> }
        | undefined;
      const [prop, spec] = Object.entries(schema?.properties ?? {})[0] ?? ['x', {}];
      const value = spec.type === 'boolean' ? true : prop === 'color' ? 'green' : 'Ada';
      return { action: 'accept', content: { [prop]: value } };
    },
    'sampling/createMessage': async () => {
      asked.push('sample');
      return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test-model' };
    },
    'roots/list': async () => {
      asked.push('roots');
      return { roots: [{ uri: 'file:///work', name: 'work' }] };
    },
  };
}

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'mrtr-integration', version: '1.0.0' },
};

const textOf = (r: unknown): string | undefined =>
  (r as { content?: { text?: string }[] }).content?.[0]?.text;

describe('callWithInput against sluice serve (demo MRTR fixtures), both eras', () => {
  let served: SpawnedServe;
  let client: Client;
  const asked: string[] = [];
  const h = handlers(asked);

  before(async () => {
    served = await spawnServe();
    client = new Client(
      { name: 'mrtr-integration', version: '1.0.0' },
      { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
    );
    // The legacy era: the server's shim sends real requests; the same functions answer them.
    client.setRequestHandler(ElicitRequestSchema, async (r) => h['elicitation/create'](r.params, {}));
    client.setRequestHandler(CreateMessageRequestSchema, async (r) =>
      h['sampling/createMessage'](r.params, {}),
    );
    client.setRequestHandler(ListRootsRequestSchema, async (r) => h['roots/list'](r.params ?? {}, {}));
    await withDeadline(
      client.connect(new StreamableHttpClientTransport(new URL(served.url))),
      15_000,
      'connect',
    );
  });
  after(async () => {
    await client.close();
    await served.close();
  });

  const tool = (name: string, modern: boolean) => ({
    method: 'tools/call',
    params: { name, arguments: {}, ...(modern ? { _meta: MODERN_META } : {}) },
  });

  for (const modern of [true, false]) {
    const era = modern ? '2026-07-28' : 'legacy session';
    let legs = 0;
    /** The Client, counting the requests the helper sends (each leg of the loop is one). */
    const counting: Pick<Client, 'request'> = {
      request: ((...args: Parameters<Client['request']>) => {
        legs++;
        return client.request(...args);
      }) as Client['request'],
    };
    const run = (request: { method: string; params: Record<string, unknown> }, label: string) =>
      withDeadline(callWithInput(counting, request, h), 10_000, `${era} ${label}`);

    test(`${era}: one elicitation, one sampling, one roots request`, async () => {
      asked.length = 0;
      legs = 0;
      assert.equal(
        textOf(await run(tool('test_input_required_result_elicitation', modern), 'elicit')),
        'Hello, Ada!',
      );
      assert.equal(
        textOf(await run(tool('test_input_required_result_sampling', modern), 'sample')),
        'The model said: Paris',
      );
      assert.equal(
        textOf(await run(tool('test_input_required_result_list_roots', modern), 'roots')),
        'Roots: file:///work',
      );
      assert.deepEqual(asked, ['elicit:What is your name?', 'sample', 'roots']);
      // 2026-07-28: each call is answered input_required once, then retried; on the legacy session the server
      // asked the Client directly and each call took one request.
      assert.equal(legs, modern ? 6 : 3);
      legs = 0;
    });

    test(`${era}: three inputs at once, and two rounds with the server's sealed requestState`, async () => {
      asked.length = 0;
      assert.equal(
        textOf(await run(tool('test_input_required_result_multiple_inputs', modern), 'multiple')),
        'All inputs received: Ada / Paris',
      );
      assert.equal(
        textOf(await run(tool('test_input_required_result_multi_round', modern), 'multi round')),
        'Ada likes green',
      );
      legs = 0;
      assert.equal(
        textOf(await run(tool('test_input_required_result_request_state', modern), 'state')),
        'state-ok: confirmed',
      );
      assert.equal(legs, modern ? 2 : 1, 'the requestState leg');
      assert.deepEqual(asked.slice(-3), [
        'elicit:Step 1: What is your name?',
        'elicit:Step 2: What is your favorite color?',
        'elicit:Please confirm',
      ]);
    });

    test(`${era}: input_required on prompts/get`, async () => {
      const r = await run(
        {
          method: 'prompts/get',
          params: { name: 'test_input_required_result_prompt', ...(modern ? { _meta: MODERN_META } : {}) },
        },
        'prompt',
      );
      const messages = (r as { messages?: { content: { text?: string } }[] }).messages;
      assert.equal(messages?.[0]?.content.text, 'Use this context: Ada');
    });
  }

  test('2026-07-28: the capabilities declared are the handlers given, and the server asks for nothing else', async () => {
    asked.length = 0;
    const r = await withDeadline(
      callWithInput(client, tool('test_input_required_result_capabilities', true), {
        'roots/list': h['roots/list'],
      }),
      10_000,
      'capabilities',
    );
    assert.equal(textOf(r), 'inputs received');
    assert.deepEqual(asked, ['roots']);
  });

  test('2026-07-28: a server asking for input the client lacks is refused by the server gate (-32021)', async () => {
    await assert.rejects(
      withDeadline(
        callWithInput(client, tool('test_missing_capability', true), { 'roots/list': h['roots/list'] }),
        10_000,
        'missing capability',
      ),
      (e: unknown) => (e as { code?: unknown }).code === -32021,
    );
  });
});

/**
 * SDK v2's Client needs no helper: it drives the loop itself (its `inputRequired` option) when Sluice's transport
 * hands it the `input_required` result of a 2026-07-28 request; here against the same fixtures.
 */
describe('SDK v2 Client over Sluice transport, 2026-07-28, sluice serve: the Client runs MRTR itself', () => {
  let served: SpawnedServe;
  before(async () => {
    served = await spawnServe();
  });
  after(async () => {
    await served.close();
  });

  test('several rounds with sealed requestState, and input_required on prompts/get', async () => {
    const { Client: V2Client } = await import('@modelcontextprotocol/client');
    const client = new V2Client(
      { name: 'mrtr-v2', version: '1.0.0' },
      { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } },
    );
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (r) => {
      asked.push(r.params.message);
      const props = (r.params as { requestedSchema?: { properties?: object } }).requestedSchema?.properties;
      const prop = Object.keys(props ?? {})[0] ?? 'x';
      return { action: 'accept', content: { [prop]: prop === 'color' ? 'green' : 'Ada' } };
    });
    const transport = new StreamableHttpClientTransport(new URL(served.url));
    await withDeadline(client.connect(transport), 15_000, 'v2 connect');
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      const r = await withDeadline(
        client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} }),
        10_000,
        'v2 multi round',
      );
      assert.equal(textOf(r), 'Ada likes green');
      const p = await withDeadline(
        client.getPrompt({ name: 'test_input_required_result_prompt' }),
        10_000,
        'v2 prompt',
      );
      assert.equal((p.messages[0]?.content as { text?: string } | undefined)?.text, 'Use this context: Ada');
      assert.deepEqual(asked, [
        'Step 1: What is your name?',
        'Step 2: What is your favorite color?',
        'What context should the prompt use?',
      ]);
      assert.equal(transport.sessionId, undefined, 'no session in this era');
    } finally {
      await client.close();
    }
  });
});
