/**
 * Tasks for an SDK v2 server hosted by Sluice (@modelcontextprotocol/server), fresh per request
 * and shared per principal (statelessSafe), with no task code in the tools: a task runs a v2 tool
 * whose argument travels as an `Mcp-Param-*` header; an MRTR round of such a tool is answered by
 * `tasks/update` and its second round still passes the header check (it carries the headers of the
 * call that created the task, not those of the update); a cancel fires the v2 tool's signal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { inputRequired, McpServer as V2McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { encodeHeaderValue } from '../../src/http/param-headers.js';
import { type CreateServer, createTasks, type Served, serve, statelessSafe } from '../../src/server/index.js';
import { until } from '../helpers/http.js';
import { modernSend } from '../helpers/modern.js';
import { callBody, pollTask, taskBody } from '../helpers/tasks.js';

const aborted: string[] = [];
const started: string[] = [];

function buildV2(): V2McpServer {
  const m = new V2McpServer({ name: 'v2-tasks', version: '2.4.0' }, { capabilities: { tools: {} } });
  m.registerTool(
    'region_ask',
    { inputSchema: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }) }) },
    async ({ region }, ctx) => {
      const answer = ctx.mcpReq.inputResponses?.['ok'] as { content?: { ok?: unknown } } | undefined;
      if (answer === undefined) {
        return inputRequired({
          inputRequests: {
            ok: inputRequired.elicit({
              message: `Reindex ${region}?`,
              requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
            }),
          },
        });
      }
      return { content: [{ type: 'text', text: `${region}: ${String(answer.content?.ok)}` }] };
    },
  );
  m.registerTool('wait', { inputSchema: z.object({ tag: z.string() }) }, async ({ tag }, ctx) => {
    started.push(tag);
    await new Promise<void>((resolve) => {
      if (ctx.mcpReq.signal.aborted) resolve();
      ctx.mcpReq.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    aborted.push(tag);
    return { content: [{ type: 'text', text: 'aborted' }] };
  });
  return m;
}

for (const shared of [false, true]) {
  describe(`tasks on an SDK v2 server${shared ? ' (shared per principal)' : ''}`, () => {
    let s: Served;
    before(async () => {
      const create = (() => buildV2()) as unknown as CreateServer;
      s = await serve({
        createServer: shared ? statelessSafe(create) : create,
        port: 0,
        host: '127.0.0.1',
        keepaliveMs: 0,
        tasks: createTasks({
          taskAfterMs: 0,
          tools: { region_ask: 'optional', wait: 'optional' },
          pollIntervalMs: 20,
        }),
      });
    });
    after(() => s.close());

    test('Mcp-Param headers hold on every round; tasks/update resumes the v2 tool', async () => {
      const region = { 'mcp-param-region': encodeHeaderValue('eu-west') };
      const created = await modernSend(s.url, callBody('region_ask', { region: 'eu-west' }), region);
      assert.equal(created.json().result?.resultType, 'task', created.text);
      const id = created.json().result.taskId as string;
      const ir = await pollTask(s.url, id, (t) => t.status === 'input_required');
      assert.equal(ir.inputRequests.ok.method, 'elicitation/create');
      const upd = await modernSend(
        s.url,
        taskBody('tasks/update', {
          taskId: id,
          inputResponses: { ok: { action: 'accept', content: { ok: true } } },
        }),
      );
      assert.deepEqual(upd.json().result, { resultType: 'complete' });
      const done = await pollTask(s.url, id, (t) => t.status !== 'working');
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(done.result.content[0].text, 'eu-west: true');
      // Without the header: the check runs with the tool (it needs the tool's declarations), so the
      // task is created and fails with the refusal the plain call would have had.
      const missing = await modernSend(s.url, callBody('region_ask', { region: 'eu-west' }));
      const failed = await pollTask(s.url, missing.json().result.taskId, (t) => t.status !== 'working');
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error.code, -32020);
    });

    test('tasks/cancel fires the v2 tool signal', async () => {
      const tag = `w-${shared}`;
      const created = await modernSend(s.url, callBody('wait', { tag }));
      const id = created.json().result.taskId as string;
      await until(() => started.includes(tag), 5000, 'the v2 tool runs');
      await modernSend(s.url, taskBody('tasks/cancel', { taskId: id }));
      await until(() => aborted.includes(tag), 5000, 'the v2 tool saw its signal');
      assert.equal((await pollTask(s.url, id, () => true)).status, 'cancelled');
    });
  });
}

describe('taskAfterMs on an SDK v2 server (10 s: every call here ends or asks within it)', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      createServer: (() => buildV2()) as unknown as CreateServer,
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 0,
      tasks: createTasks({ taskAfterMs: 10_000, tools: { region_ask: 'optional' }, pollIntervalMs: 20 }),
    });
  });
  after(() => s.close());

  test('a missing Mcp-Param header is refused as the plain call is (400/-32020); a round that asks becomes a task', async () => {
    const declared = await modernSend(s.url, callBody('region_ask', { region: 'eu-west' }));
    const plain = await modernSend(s.url, callBody('region_ask', { region: 'eu-west' }, false));
    assert.equal(declared.status, plain.status);
    assert.equal(declared.status, 400, declared.text);
    assert.deepEqual(declared.json().error, plain.json().error);
    assert.equal(declared.json().error.code, -32020);
    const region = { 'mcp-param-region': encodeHeaderValue('eu-west') };
    const asks = await modernSend(s.url, callBody('region_ask', { region: 'eu-west' }), region);
    assert.equal(asks.json().result?.resultType, 'task', asks.text);
    const ir = await pollTask(s.url, asks.json().result.taskId, (t) => t.status === 'input_required');
    assert.equal(ir.inputRequests.ok.method, 'elicitation/create');
  });
});
