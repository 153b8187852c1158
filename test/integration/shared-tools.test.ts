// sharedTool / registerSharedTools: a tool defined once is registered into every session's McpServer
// with the same schema objects (nothing rebuilt per session), and behaves like registerTool: its
// input is validated, tools/list shows its JSON schema, the handler gets the session's extra. After
// its first registration every server holds one frozen record (no closures over any server); an SDK
// whose record has other fields gets registerTool every time.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { registerSharedTools, SharedToolError, serve, sharedTool } from '../../src/server/index.js';
import { RawSession, toolCall } from '../helpers/http.js';

const ECHO = sharedTool(
  'echo',
  { description: 'echo', inputSchema: { text: z.string().max(10) } },
  ({ text }, extra) => ({ content: [{ type: 'text', text: `${text} ${extra.sessionId ?? ''}`.trim() }] }),
);
const PING = sharedTool('noargs', { description: 'no input' }, () => ({
  content: [{ type: 'text', text: 'ok' }],
}));

describe('shared tools', () => {
  test('two sessions share one schema object; validation, tools/list and calls work as with registerTool', async () => {
    const servers: McpServer[] = [];
    const served = await serve({
      port: 0,
      createServer: () => {
        const s = new McpServer({ name: 'shared', version: '1' });
        registerSharedTools(s, [ECHO, PING]);
        servers.push(s);
        return s;
      },
    });
    after(() => served.close());
    const a = new RawSession(served.url);
    const b = new RawSession(served.url);
    await a.init();
    await b.init();
    assert.equal(servers.length, 2);
    const schemaOf = (s: McpServer) =>
      (s as unknown as { _registeredTools: Record<string, { inputSchema: unknown }> })._registeredTools[
        'echo'
      ]?.inputSchema;
    assert.ok(schemaOf(servers[0] as McpServer) !== undefined);
    assert.equal(
      schemaOf(servers[0] as McpServer),
      schemaOf(servers[1] as McpServer),
      'one schema object for both',
    );

    const list = (await a.post({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).json();
    const echo = list.result.tools.find((t: { name: string }) => t.name === 'echo');
    assert.deepEqual(echo.inputSchema.required, ['text']);
    assert.equal(echo.inputSchema.properties.text.maxLength, 10);

    const ok = (await a.post(toolCall('echo', { text: 'hi' }))).json();
    assert.equal(ok.result.content[0].text, `hi ${a.sid}`);
    const okB = (await b.post(toolCall('echo', { text: 'yo' }))).json();
    assert.equal(okB.result.content[0].text, `yo ${b.sid}`);
    const bad = (await a.post(toolCall('echo', { text: 'much too long for it' }))).json();
    assert.equal(bad.result.isError, true);
    assert.equal((await a.post(toolCall('noargs', {}))).json().result.content[0].text, 'ok');
  });

  test('after the first server, every server holds one frozen record; its changers throw SharedToolError', () => {
    const tool = sharedTool('record', { description: 'r' }, () => ({
      content: [{ type: 'text', text: 'r' }],
    }));
    const recordOf = (s: McpServer) =>
      (s as unknown as { _registeredTools: Record<string, Record<string, unknown>> })._registeredTools[
        'record'
      ];
    const [first, second, third] = [1, 2, 3].map(() => {
      const s = new McpServer({ name: 'r', version: '1' });
      registerSharedTools(s, [tool]);
      return s;
    }) as [McpServer, McpServer, McpServer];
    const own = recordOf(first);
    const shared = recordOf(second);
    assert.ok(own !== undefined && shared !== undefined);
    assert.notEqual(own, shared, 'the first server keeps the record registerTool made');
    assert.equal(recordOf(third), shared, 'one record for every later server');
    assert.ok(Object.isFrozen(shared));
    assert.deepEqual(Object.keys(shared).sort(), Object.keys(own).sort());
    for (const k of [
      'title',
      'description',
      'inputSchema',
      'outputSchema',
      'annotations',
      '_meta',
      'handler',
      'enabled',
    ])
      assert.equal(shared[k], own[k], k);
    assert.deepEqual(shared['execution'], own['execution']);
    for (const op of ['enable', 'disable', 'update', 'remove']) {
      assert.throws(
        () => (shared[op] as (u?: unknown) => void)({}),
        (e: unknown) =>
          e instanceof SharedToolError && e.code === 'SLUICE_SHARED_TOOL' && e.message.includes(`${op}()`),
      );
    }
    // The first server's own record still changes that server alone.
    (own['disable'] as () => void)();
    assert.equal(recordOf(first)?.['enabled'], false);
    assert.equal(shared['enabled'], true);
    // As registerTool: one name once per server.
    assert.throws(() => registerSharedTools(second, [tool]), {
      code: 'SLUICE_ALREADY_REGISTERED',
      name: 'AlreadyRegisteredError',
      message: /Tool record is already registered/,
    });
  });

  test('an SDK whose tool record has other fields gets registerTool for every server', () => {
    // An SDK that added a field to its record (as a later release might).
    const withIcons = (s: McpServer): McpServer => {
      const made = s.registerTool.bind(s) as (...a: unknown[]) => Record<string, unknown>;
      (s as unknown as { registerTool: (...a: unknown[]) => unknown }).registerTool = (...a: unknown[]) => {
        const r = made(...a);
        r['icons'] = undefined;
        return r;
      };
      return s;
    };
    const tool = sharedTool('other', {}, () => ({ content: [{ type: 'text', text: 'o' }] }));
    const records = [1, 2, 3].map(() => {
      const s = withIcons(new McpServer({ name: 'o', version: '1' }));
      registerSharedTools(s, [tool]);
      return (s as unknown as { _registeredTools: Record<string, object> })._registeredTools['other'];
    });
    assert.equal(new Set(records).size, 3, 'a record of its own for each server');
    assert.ok(records.every((r) => r !== undefined && !Object.isFrozen(r)));
  });
});
