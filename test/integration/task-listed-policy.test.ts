/**
 * A tool's task policy from its own definition: an SDK low-level Server lists tools with
 * `execution.taskSupport` and `createTasks({ taskAfterMs: 0, tools })` does not name them. `optional` runs as a task
 * for a client that declared the extension and plain otherwise, `required` refuses a client that
 * did not declare it (-32021), no `execution` is forbidden, configuration wins over the
 * declaration, and `toolsFromList: false` ignores declarations.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  type CreateServer,
  createTasks,
  type Served,
  serve,
  type TaskOptions,
} from '../../src/server/index.js';
import { modernSend } from '../helpers/modern.js';
import { callBody, pollTask } from '../helpers/tasks.js';

const TOOLS = [
  { name: 'auto', execution: { taskSupport: 'optional' } },
  { name: 'strict', execution: { taskSupport: 'required' } },
  { name: 'plain' },
  { name: 'odd', execution: { taskSupport: 'sometimes' } },
  { name: 'overridden', execution: { taskSupport: 'optional' } },
].map((t) => ({ ...t, inputSchema: { type: 'object' as const, properties: {} } }));

let lists = 0;

const declaring: CreateServer = () => {
  const server = new Server({ name: 'declares', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    lists++;
    return { tools: TOOLS } as never;
  });
  server.setRequestHandler(CallToolRequestSchema, async (req) => ({
    content: [{ type: 'text', text: `ran ${req.params.name}` }],
  }));
  return server as unknown as ReturnType<CreateServer>;
};

describe('task policy from tools/list (execution.taskSupport)', () => {
  const served: Served[] = [];
  after(async () => {
    for (const s of served) await s.close();
  });
  async function start(o: TaskOptions): Promise<string> {
    const s = await serve({
      createServer: declaring,
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 0,
      tasks: createTasks({ taskAfterMs: 0, pollIntervalMs: 50, ...o }),
    });
    served.push(s);
    return s.url;
  }
  const call = async (url: string, name: string, declared: boolean) =>
    (await modernSend(url, callBody(name, {}, declared))).json();

  test('declared policies apply to tools the configuration does not name; configuration wins', async () => {
    const url = await start({ tools: { overridden: 'forbidden' } });
    const task = await call(url, 'auto', true);
    const listsAfterFirst = lists;
    assert.equal(task.result?.resultType, 'task', JSON.stringify(task));
    const done = await pollTask(url, task.result.taskId, (t) => t.status === 'completed');
    assert.equal(done.result.content[0].text, 'ran auto');
    assert.equal(
      (await call(url, 'auto', false)).result?.content?.[0]?.text,
      'ran auto',
      'plain when undeclared',
    );
    const refused = await call(url, 'strict', false);
    assert.equal(refused.error?.code, -32021, JSON.stringify(refused));
    assert.equal((await call(url, 'strict', true)).result?.resultType, 'task');
    assert.equal((await call(url, 'plain', true)).result?.content?.[0]?.text, 'ran plain');
    assert.equal(
      (await call(url, 'odd', true)).result?.content?.[0]?.text,
      'ran odd',
      'unknown value: forbidden',
    );
    assert.equal((await call(url, 'overridden', true)).result?.content?.[0]?.text, 'ran overridden');
    assert.equal(lists, listsAfterFirst, 'the list is read for the first call and reused');
  });

  test('a tool list read that never answers: forbidden after the deadline, not kept', async () => {
    // Only the first tools/list hangs (the task service's read comes before the era's own).
    let reads = 0;
    const hanging: CreateServer = () => {
      const server = new Server({ name: 'hangs', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () =>
        reads++ === 0 ? new Promise<never>(() => undefined) : Promise.resolve({ tools: TOOLS } as never),
      );
      server.setRequestHandler(CallToolRequestSchema, async (req) => ({
        content: [{ type: 'text', text: `ran ${req.params.name}` }],
      }));
      return server as unknown as ReturnType<CreateServer>;
    };
    const s = await serve({
      createServer: hanging,
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 0,
      tasks: createTasks({ taskAfterMs: 0, pollIntervalMs: 50 }),
    });
    served.push(s);
    const t0 = Date.now();
    const r = (await modernSend(s.url, callBody('auto', {}, true), {}, { timeoutMs: 15_000 })).json();
    assert.equal(r.result?.content?.[0]?.text, 'ran auto', JSON.stringify(r));
    assert.ok(Date.now() - t0 < 12_000, 'answered once the list read gave up');
    const again = (await modernSend(s.url, callBody('auto', {}, true))).json();
    assert.equal(again.result?.resultType, 'task', `the failed read was not kept: ${JSON.stringify(again)}`);
  });

  test('toolsFromList: false ignores declarations', async () => {
    const url = await start({ toolsFromList: false });
    assert.equal((await call(url, 'auto', true)).result?.content?.[0]?.text, 'ran auto');
    assert.equal((await call(url, 'strict', false)).result?.content?.[0]?.text, 'ran strict');
  });
});
