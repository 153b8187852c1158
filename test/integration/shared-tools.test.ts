// sharedTool / registerSharedTools: a tool defined once is registered into every session's McpServer
// with the same schema objects (nothing rebuilt per session), and behaves like registerTool: its
// input is validated, tools/list shows its JSON schema, the handler gets the session's extra.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { registerSharedTools, serve, sharedTool } from '../../src/server/index.js';
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
});
