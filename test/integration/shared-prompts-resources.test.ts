// sharedPrompt / sharedResource: a prompt, resource or resource template defined once is registered
// into every session's McpServer as one frozen record (learnt on a throwaway McpServer), and behaves
// as registerPrompt/registerResource did: listed, read, argument-checked, and completed (the SDK's
// completion handler and `completions` capability only when an item needs them). A subclass of
// McpServer, or an SDK whose record has other fields, gets registerPrompt/registerResource per server.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import {
  registerSharedPrompts,
  registerSharedResources,
  SharedRecordError,
  serve,
  sharedPrompt,
  sharedResource,
} from '../../src/server/index.js';
import { RawSession } from '../helpers/http.js';

const GREET = sharedPrompt(
  'greet',
  {
    description: 'greets',
    argsSchema: {
      name: completable(z.string().max(10), (v) => ['Ada', 'Alan'].filter((n) => n.startsWith(v))),
    },
  },
  ({ name }, extra) => ({
    messages: [
      { role: 'user', content: { type: 'text', text: `hello ${name} ${extra.sessionId ?? ''}`.trim() } },
    ],
  }),
);
const PLAIN = sharedPrompt('plain', { description: 'no args' }, () => ({
  messages: [{ role: 'user', content: { type: 'text', text: 'plain' } }],
}));
const README = sharedResource('readme', 'test://readme', { mimeType: 'text/plain' }, async (uri) => ({
  contents: [{ uri: uri.href, text: 'read me' }],
}));
const ITEM = sharedResource(
  'item',
  new ResourceTemplate('test://item/{id}', {
    list: undefined,
    complete: { id: (v) => ['1', '2', '10'].filter((id) => id.startsWith(v)) },
  }),
  { mimeType: 'text/plain' },
  async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `item ${String(id)}` }] }),
);

type Tables = Record<
  '_registeredPrompts' | '_registeredResources' | '_registeredResourceTemplates',
  Record<string, Record<string, unknown>>
>;
const tables = (s: McpServer): Tables => s as unknown as Tables;

/** One JSON-RPC request in `s`, its parsed answer. */
async function rpc(s: RawSession, id: number, method: string, params?: object) {
  return (await s.post({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) })).json();
}

describe('shared prompts and resources', () => {
  test('served to two sessions from one record each: list, get, read, argument checks and completion', async () => {
    const servers: McpServer[] = [];
    const served = await serve({
      port: 0,
      createServer: () => {
        const s = new McpServer({ name: 'shared', version: '1' });
        registerSharedPrompts(s, [GREET, PLAIN]);
        registerSharedResources(s, [README, ITEM]);
        servers.push(s);
        return s;
      },
    });
    after(() => served.close());
    const a = new RawSession(served.url);
    const b = new RawSession(served.url);
    const init = (await a.init()).json();
    await b.init();
    assert.deepEqual(init.result.capabilities.completions, {}, 'a completable argument turns completions on');
    const [sa, sb] = servers as [McpServer, McpServer];
    for (const [table, key] of [
      ['_registeredPrompts', 'greet'],
      ['_registeredResources', 'test://readme'],
      ['_registeredResourceTemplates', 'item'],
    ] as const) {
      const ra = tables(sa)[table][key];
      assert.ok(ra !== undefined && Object.isFrozen(ra), `${table} ${key} frozen`);
      assert.equal(ra, tables(sb)[table][key], `${table} ${key}: one record for both servers`);
    }

    const prompts = (await rpc(a, 1, 'prompts/list')).result.prompts;
    assert.deepEqual(
      prompts.map((p: { name: string; arguments?: { name: string; required?: boolean }[] }) => [
        p.name,
        p.arguments?.map((arg) => [arg.name, arg.required]),
      ]),
      [
        ['greet', [['name', true]]],
        ['plain', undefined],
      ],
    );
    const get = await rpc(b, 2, 'prompts/get', { name: 'greet', arguments: { name: 'Ada' } });
    assert.equal(get.result.messages[0].content.text, `hello Ada ${b.sid}`);
    const tooLong = await rpc(a, 3, 'prompts/get', { name: 'greet', arguments: { name: 'much too long' } });
    assert.equal(tooLong.error?.code, -32602, 'arguments are checked against the shared schema');
    const done = await rpc(a, 4, 'completion/complete', {
      ref: { type: 'ref/prompt', name: 'greet' },
      argument: { name: 'name', value: 'A' },
    });
    assert.deepEqual(done.result.completion.values, ['Ada', 'Alan']);

    const list = (await rpc(b, 5, 'resources/list')).result.resources;
    assert.deepEqual(
      list.map((r: { uri: string; name: string }) => [r.uri, r.name]),
      [['test://readme', 'readme']],
    );
    const read = await rpc(b, 6, 'resources/read', { uri: 'test://readme' });
    assert.equal(read.result.contents[0].text, 'read me');
    const templ = await rpc(a, 7, 'resources/templates/list');
    assert.equal(templ.result.resourceTemplates[0].uriTemplate, 'test://item/{id}');
    const item = await rpc(a, 8, 'resources/read', { uri: 'test://item/2' });
    assert.equal(item.result.contents[0].text, 'item 2');
    const ids = await rpc(b, 9, 'completion/complete', {
      ref: { type: 'ref/resource', uri: 'test://item/{id}' },
      argument: { name: 'id', value: '1' },
    });
    assert.deepEqual(ids.result.completion.values, ['1', '10']);
  });

  test('no completion handler or capability when no shared item needs one', async () => {
    const served = await serve({
      port: 0,
      createServer: () => {
        const s = new McpServer({ name: 'plain', version: '1' });
        registerSharedPrompts(s, [PLAIN]);
        registerSharedResources(s, [README]);
        return s;
      },
    });
    after(() => served.close());
    const a = new RawSession(served.url);
    const init = (await a.init()).json();
    assert.equal(init.result.capabilities.completions, undefined);
    assert.deepEqual(Object.keys(init.result.capabilities).sort(), ['prompts', 'resources']);
  });

  test('a shared record refuses changes with SharedRecordError; a name twice is refused as the SDK does', () => {
    const s = new McpServer({ name: 'r', version: '1' });
    registerSharedPrompts(s, [PLAIN]);
    registerSharedResources(s, [README, ITEM]);
    const records = [
      ['prompt', tables(s)._registeredPrompts['plain']],
      ['resource', tables(s)._registeredResources['test://readme']],
      ['resource template', tables(s)._registeredResourceTemplates['item']],
    ] as const;
    for (const [kind, record] of records) {
      assert.ok(record !== undefined);
      for (const op of ['enable', 'disable', 'update', 'remove']) {
        assert.throws(
          () => (record[op] as (u?: unknown) => void)({}),
          (e: unknown) =>
            e instanceof SharedRecordError &&
            e.code === 'SLUICE_SHARED_RECORD' &&
            e.message.startsWith(`${kind} `) &&
            e.message.includes(`${op}()`),
          `${kind} ${op}`,
        );
      }
      assert.equal(record['enabled'], true);
    }
    assert.throws(() => registerSharedPrompts(s, [PLAIN]), {
      code: 'SLUICE_ALREADY_REGISTERED',
      name: 'AlreadyRegisteredError',
      message: /Prompt plain is already registered/,
    });
    assert.throws(() => registerSharedResources(s, [README]), {
      code: 'SLUICE_ALREADY_REGISTERED',
      kind: 'Resource',
      key: 'test://readme',
      message: /Resource test:\/\/readme is already registered/,
    });
    assert.throws(() => registerSharedResources(s, [ITEM]), {
      code: 'SLUICE_ALREADY_REGISTERED',
      name: 'AlreadyRegisteredError',
      message: /Resource template item is already registered/,
    });
  });

  test('a subclass of McpServer gets registerPrompt for every server (its constructor is never run to learn)', () => {
    let built = 0;
    class Mine extends McpServer {
      constructor() {
        super({ name: 'mine', version: '1' });
        built++;
      }
    }
    const prompt = sharedPrompt('mine', {}, () => ({ messages: [] }));
    const records = [1, 2, 3].map(() => {
      const s = new Mine();
      registerSharedPrompts(s, [prompt]);
      return tables(s)._registeredPrompts['mine'];
    });
    assert.equal(built, 3, 'no probe of the subclass');
    assert.equal(new Set(records).size, 3, 'a record of its own for each server');
    assert.ok(records.every((r) => r !== undefined && !Object.isFrozen(r)));
  });

  test('an SDK whose records have other fields gets registerPrompt/registerResource for every server', () => {
    // A later SDK that adds a field to its records (as it did to tools'), patched in for this test.
    const proto = McpServer.prototype as unknown as Record<
      string,
      (...a: unknown[]) => Record<string, unknown>
    >;
    const registerPrompt = proto['registerPrompt'] as (...a: unknown[]) => Record<string, unknown>;
    const registerResource = proto['registerResource'] as (...a: unknown[]) => Record<string, unknown>;
    const withIcons = (f: (...a: unknown[]) => Record<string, unknown>) =>
      function (this: unknown, ...a: unknown[]) {
        const r = f.apply(this, a);
        r['icons'] = undefined;
        return r;
      };
    proto['registerPrompt'] = withIcons(registerPrompt);
    proto['registerResource'] = withIcons(registerResource);
    try {
      const prompt = sharedPrompt('later', {}, () => ({ messages: [] }));
      const resource = sharedResource('later', 'test://later', {}, (uri) => ({
        contents: [{ uri: uri.href, text: '' }],
      }));
      const made = [1, 2, 3].map(() => {
        const s = new McpServer({ name: 'later', version: '1' });
        registerSharedPrompts(s, [prompt]);
        registerSharedResources(s, [resource]);
        return [tables(s)._registeredPrompts['later'], tables(s)._registeredResources['test://later']];
      });
      for (const k of [0, 1]) {
        const records = made.map((m) => m[k]);
        assert.equal(new Set(records).size, 3, 'a record of its own for each server');
        assert.ok(records.every((r) => r !== undefined && !Object.isFrozen(r) && 'icons' in r));
      }
    } finally {
      proto['registerPrompt'] = registerPrompt;
      proto['registerResource'] = registerResource;
    }
  });
});
