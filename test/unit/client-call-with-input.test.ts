/**
 * callWithInput (src/client/call-with-input.ts) against a scripted server on a real socket: SDK v1's Client over
 * Sluice's transport, a server whose `tools/call` answers follow a per-test script. Proves the MRTR client rules
 * (MCP 2026-07-28 basic/patterns/mrtr): a new request id per retry, inputResponses under the server's keys,
 * requestState echoed exactly and only when sent, nothing carried over from an earlier round, the round bound,
 * undeclared input refused before any retry, malformed results refused; and, for a 2026-07-28 request, the declared
 * capabilities and the `resultType` default the transport supplies.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  callWithInput,
  InputRoundsExceededError,
  InputUnsupportedError,
  InvalidOptionError,
  MalformedMessageError,
  StreamableHttpClientTransport,
} from '../../src/client/index.js';
import { withDeadline } from '../helpers/deadline.js';

interface Call {
  id: unknown;
  params: Record<string, unknown>;
}

/** What the server answers to the n-th `tools/call` of a test (n from 0). */
type Script = (n: number, params: Record<string, unknown>) => Record<string, unknown>;

const elicit = {
  method: 'elicitation/create',
  params: { message: 'Name?', requestedSchema: { type: 'object' } },
};
const roots = { method: 'roots/list' };
const capabilitiesOf = (c: Call | undefined): unknown =>
  (c?.params['_meta'] as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/clientCapabilities'];
const done = (text: string) => ({ resultType: 'complete', content: [{ type: 'text', text }] });

describe('callWithInput against a scripted server', () => {
  let server: Server;
  let url: URL;
  let client: Client;
  let calls: Call[] = [];
  let script: Script = () => done('default');

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => {
        body += d.toString();
      });
      req.on('end', () => {
        const msg = JSON.parse(body) as { id?: unknown; method: string; params?: Record<string, unknown> };
        if (msg.id === undefined) {
          res.writeHead(202).end();
          return;
        }
        let result: Record<string, unknown>;
        if (msg.method === 'initialize') {
          result = {
            protocolVersion: '2025-11-25',
            capabilities: { tools: {} },
            serverInfo: { name: 'scripted', version: '1.0.0' },
          };
        } else {
          const params = msg.params ?? {};
          calls.push({ id: msg.id, params });
          result = script(calls.length - 1, params);
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
    client = new Client({ name: 'mrtr-unit', version: '1.0.0' });
    await withDeadline(
      client.connect(new StreamableHttpClientTransport(url, { openStandaloneStream: false })),
      10_000,
      'connect',
    );
  });
  after(async () => {
    await client.close();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    calls = [];
  });

  const call = (params: Record<string, unknown> = { name: 't', arguments: { a: 1 } }) => ({
    method: 'tools/call',
    params,
  });

  test('several rounds: new ids, answers under the same keys, requestState echoed exactly, nothing carried over', async () => {
    const state1 = ' {"opaque": "ünïcode ✓"}  ';
    script = (n) =>
      n === 0
        ? { resultType: 'input_required', inputRequests: { who: elicit, where: roots }, requestState: state1 }
        : n === 1
          ? { resultType: 'input_required', requestState: 'state-2' }
          : done('finished');
    const seen: string[] = [];
    const result = await withDeadline(
      callWithInput(client, call(), {
        'elicitation/create': async (p) => {
          seen.push(`elicit:${String(p['message'])}`);
          return { action: 'accept', content: { name: 'Ada' } };
        },
        'roots/list': async () => {
          seen.push('roots');
          return { roots: [{ uri: 'file:///w' }] };
        },
      }),
      10_000,
      'callWithInput',
    );
    assert.deepEqual(result['content'], [{ type: 'text', text: 'finished' }]);
    assert.deepEqual(seen, ['elicit:Name?', 'roots'], 'each input request answered once, in order');
    assert.equal(calls.length, 3);
    assert.equal(new Set(calls.map((c) => c.id)).size, 3, 'a new request id per leg');
    const [first, second, third] = calls;
    assert.deepEqual(first?.params, { name: 't', arguments: { a: 1 } });
    assert.deepEqual(second?.params['inputResponses'], {
      who: { action: 'accept', content: { name: 'Ada' } },
      where: { roots: [{ uri: 'file:///w' }] },
    });
    assert.equal(second?.params['requestState'], state1, 'echoed byte for byte');
    assert.deepEqual(second?.params['arguments'], { a: 1 }, 'the original request, retried');
    assert.equal(third?.params['requestState'], 'state-2');
    assert.equal('inputResponses' in (third?.params ?? {}), false, 'no answers from an earlier round');
  });

  test('no requestState from the server: none in the retry', async () => {
    script = (n) => (n === 0 ? { resultType: 'input_required', inputRequests: { who: elicit } } : done('ok'));
    await callWithInput(client, call(), { 'elicitation/create': async () => ({ action: 'decline' }) });
    assert.equal(calls.length, 2);
    assert.equal('requestState' in (calls[1]?.params ?? {}), false);
    assert.deepEqual(calls[1]?.params['inputResponses'], { who: { action: 'decline' } });
  });

  test('a server that keeps asking: InputRoundsExceededError after maxRounds retries', async () => {
    script = () => ({ resultType: 'input_required', requestState: 'again' });
    const err = await callWithInput(client, call(), {}, { maxRounds: 2 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof InputRoundsExceededError, String(err));
    assert.equal(err.code, 'SLUICE_CLIENT_INPUT_ROUNDS_EXCEEDED');
    assert.equal(err.rounds, 2);
    assert.equal(calls.length, 3, 'the first request and two retries');
  });

  test('the default bound is 8 retries', async () => {
    script = () => ({ resultType: 'input_required', requestState: 'again' });
    await assert.rejects(callWithInput(client, call(), {}), InputRoundsExceededError);
    assert.equal(calls.length, 9);
  });

  test('input the client has no handler for: InputUnsupportedError, no handler run, nothing retried', async () => {
    script = () => ({
      resultType: 'input_required',
      inputRequests: { who: elicit, model: { method: 'sampling/createMessage', params: {} } },
    });
    let ran = 0;
    const err = await callWithInput(client, call(), {
      'elicitation/create': async () => {
        ran++;
        return { action: 'accept' };
      },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof InputUnsupportedError, String(err));
    assert.equal(err.code, 'SLUICE_CLIENT_INPUT_UNSUPPORTED');
    assert.equal(err.inputMethod, 'sampling/createMessage');
    assert.equal(err.key, 'model');
    assert.equal(ran, 0);
    assert.equal(calls.length, 1);
  });

  test('an input_required result that is not one is refused', async () => {
    for (const bad of [
      { resultType: 'input_required' },
      { resultType: 'input_required', inputRequests: [elicit] },
      { resultType: 'input_required', inputRequests: { who: { params: {} } } },
      { resultType: 'input_required', inputRequests: { who: { method: 'roots/list', params: 'x' } } },
    ]) {
      script = () => bad;
      await assert.rejects(
        callWithInput(client, call(), { 'roots/list': async () => ({ roots: [] }) }),
        (e) => {
          assert.ok(e instanceof MalformedMessageError, JSON.stringify(bad));
          return true;
        },
      );
    }
  });

  test('input requests whose params are not what their method needs: MalformedMessageError, no handler run', async () => {
    const asked: string[] = [];
    const handlers = {
      'elicitation/create': async () => {
        asked.push('elicit');
        return { action: 'decline' as const };
      },
      'sampling/createMessage': async () => {
        asked.push('sample');
        return { role: 'assistant' as const, content: { type: 'text' as const, text: 'x' }, model: 'm' };
      },
    };
    for (const [bad, why] of [
      [
        { method: 'elicitation/create', params: { requestedSchema: { type: 'object' } } },
        /without a message/,
      ],
      [{ method: 'elicitation/create', params: { message: 'Name?' } }, /neither requestedSchema nor url/],
      [{ method: 'elicitation/create', params: { message: 'Go', url: 'https://x.example' } }, /neither/],
      [{ method: 'sampling/createMessage', params: { maxTokens: 5 } }, /without messages/],
      [{ method: 'sampling/createMessage', params: { messages: [] } }, /without maxTokens/],
    ] as const) {
      calls = [];
      // A well-formed request beside it: nothing is answered when one of them is malformed.
      script = () => ({ resultType: 'input_required', inputRequests: { ok: elicit, bad } });
      await assert.rejects(callWithInput(client, call(), handlers), (e) => {
        assert.ok(e instanceof MalformedMessageError, String(e));
        assert.match(e.message, why);
        return true;
      });
      assert.equal(calls.length, 1, 'nothing retried');
    }
    assert.deepEqual(asked, []);
    // A URL-mode elicitation (url and elicitationId) is one.
    calls = [];
    script = (n) =>
      n === 0
        ? {
            resultType: 'input_required',
            inputRequests: {
              go: {
                method: 'elicitation/create',
                params: { mode: 'url', message: 'Go', url: 'https://x.example', elicitationId: 'e1' },
              },
            },
          }
        : done('went');
    assert.deepEqual((await callWithInput(client, call(), handlers))['content'], [
      { type: 'text', text: 'went' },
    ]);
    assert.deepEqual(asked, ['elicit']);
  });

  test('resultSchema: the complete result is checked and typed by it; one it refuses is a MalformedMessageError', async () => {
    script = (n) =>
      n === 0 ? { resultType: 'input_required', inputRequests: { where: roots } } : done('typed');
    const rootsHandler = { 'roots/list': async () => ({ roots: [] }) };
    const typed = await callWithInput(client, call(), rootsHandler, { resultSchema: CallToolResultSchema });
    // Typed as the SDK's CallToolResult: `content` is read without a cast.
    assert.equal(typed.content[0]?.type, 'text');
    calls = [];
    script = () => ({ resultType: 'complete', content: 'not a list' });
    await assert.rejects(
      callWithInput(client, call(), rootsHandler, { resultSchema: CallToolResultSchema }),
      (e) => {
        assert.ok(e instanceof MalformedMessageError, String(e));
        assert.match(e.message, /not what resultSchema describes/);
        return true;
      },
    );
  });

  test('a handler error fails the call and nothing is retried', async () => {
    script = () => ({ resultType: 'input_required', inputRequests: { who: elicit } });
    await assert.rejects(
      callWithInput(client, call(), {
        'elicitation/create': async () => {
          throw new Error('user went away');
        },
      }),
      /user went away/,
    );
    assert.equal(calls.length, 1);
  });

  test('maxRounds is validated', async () => {
    for (const maxRounds of [0, -1, 1.5, Number.NaN]) {
      await assert.rejects(callWithInput(client, call(), {}, { maxRounds }), InvalidOptionError);
    }
    assert.equal(calls.length, 0);
  });

  test('a 2026-07-28 request declares exactly the handlers; a result without resultType is complete', async () => {
    script = (n) =>
      n === 0
        ? { resultType: 'input_required', inputRequests: { where: roots } }
        : { content: [{ type: 'text', text: 'no resultType' }] };
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
    const result = await callWithInput(client, call({ name: 't', _meta: meta }), {
      'roots/list': async () => ({ roots: [] }),
    });
    assert.equal(result['resultType'], 'complete', 'the transport supplies the default of the era');
    for (const c of calls) {
      assert.deepEqual(capabilitiesOf(c), { roots: {} });
    }
    // The caller's own declaration is left alone.
    calls = [];
    script = () => done('ok');
    const own = { ...meta, 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } };
    await callWithInput(client, call({ name: 't', _meta: own }), {
      'roots/list': async () => ({ roots: [] }),
    });
    assert.deepEqual(capabilitiesOf(calls[0]), { sampling: {} });
  });

  test('a legacy request: no capabilities added, and a result without resultType stays as it came', async () => {
    script = () => ({ content: [{ type: 'text', text: 'plain' }] });
    const result = await callWithInput(client, call(), { 'roots/list': async () => ({ roots: [] }) });
    assert.equal('resultType' in result, false);
    assert.equal('_meta' in (calls[0]?.params ?? {}), false);
  });
});
