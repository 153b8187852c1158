/**
 * The 2025-11-25 experimental tasks (SEP-1686) served by Sluice on 2025 sessions of a server that
 * does not manage tasks itself (the tasks test server, SDK v1 `registerTool` tools), driven by the
 * SDK v1 client's experimental task API: the capability in `initialize`, `execution.taskSupport`
 * in `tools/list`, a task-augmented call (CreateTaskResult, tasks/get, tasks/result blocking until
 * final with the related-task `_meta`), a tool error failing the task, -32601 for a forbidden
 * tool with `task` and a required one without, listing, cancel reaching the tool's AbortSignal
 * (and -32602 for a finished task), another session's tasks invisible, a tool that asks the client
 * for input (the request on the client's GET stream, its answer back to the tool), and a server
 * with its own task store left alone (the SDK answers).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  createTasks,
  MemoryTaskStore,
  type Served,
  type SluiceSdkTaskStore,
  sdkTaskStore,
  serve,
} from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { LATEST, RawSession, rpc, until } from '../helpers/http.js';
import {
  elicitingClient,
  newSdkJobProbe,
  sdkTaskClient,
  sdkTaskServer,
  serveAsksTool,
  startJob,
  startToolTask,
  taskResultText,
  textOf,
} from '../helpers/sdk-tasks.js';
import { newProbe, TASK_TOOLS, taskServer } from '../helpers/tasks.js';

/** Calls a tool as a task through the SDK client's stream: the task id, then the rest of the stream. */
async function callAsTask(c: Client, name: string, args: Record<string, unknown>) {
  const seen: string[] = [];
  let taskId: string | undefined;
  let result: unknown;
  let error: unknown;
  const stream = c.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
    task: { ttl: 60_000 },
  });
  for await (const m of stream) {
    seen.push(m.type);
    if (m.type === 'taskCreated') taskId = m.task.taskId;
    if (m.type === 'result') result = m.result;
    if (m.type === 'error') error = m.error;
  }
  return { taskId, result, error, seen };
}

/**
 * A server whose `asks` tool asks the client through `extra.sendRequest` (related to its call, with
 * a `_meta` of its own), then waits for `gate`.
 */
function serveRelatedAsker(gate: Promise<void>): Promise<Served> {
  return serveAsksTool(async (_server, extra) => {
    const r = await extra.sendRequest(
      {
        method: 'elicitation/create',
        params: {
          message: 'name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
          _meta: { 'example.com/keep': 1 },
        },
      },
      ElicitResultSchema,
    );
    await gate;
    return { content: [{ type: 'text', text: `got ${JSON.stringify(r.content)}` }] };
  });
}

describe('2025-11-25 tasks served by Sluice (SEP-1686)', () => {
  const probe = newProbe();
  const sdkProbe = newSdkJobProbe();
  const clients: Client[] = [];
  let served: Served;
  let own: Served;
  let ownStore: SluiceSdkTaskStore;
  let authed: Served;

  async function client(url = served.url, token?: string): Promise<Client> {
    const c = await sdkTaskClient(url, token);
    clients.push(c);
    return c;
  }

  before(async () => {
    const base = { port: 0, host: '127.0.0.1', keepaliveMs: 0 } as const;
    served = await serve({
      ...base,
      createServer: taskServer(probe),
      tasks: createTasks({ taskAfterMs: 0, tools: TASK_TOOLS, pollIntervalMs: 50 }),
    });
    authed = await serve({
      ...base,
      createServer: taskServer(probe),
      tasks: createTasks({ taskAfterMs: 0, tools: TASK_TOOLS, pollIntervalMs: 50 }),
      authenticate: (req) =>
        req.headers.authorization === 'Bearer alice-token-0001' ? { principal: 'alice' } : null,
    });
    ownStore = sdkTaskStore(new MemoryTaskStore());
    own = await serve({
      ...base,
      createServer: sdkTaskServer(ownStore, sdkProbe),
      tasks: createTasks({ taskAfterMs: 0, tools: { job: 'optional' } }),
    });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await served.close();
    await own.close();
    await authed.close();
    ownStore.close();
  });

  test('the capability in initialize, taskSupport in tools/list', async () => {
    const c = await client();
    assert.deepEqual(c.getServerCapabilities()?.tasks, {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await c.listTools();
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    assert.equal(support['slow'], 'optional');
    assert.equal(support['must'], 'required');
    assert.equal(support['greet'], 'forbidden', 'SDK registerTool declares forbidden; not configured');
  });

  test('a task: created, polled, its result (with the related-task _meta)', async () => {
    const c = await client();
    const r = await callAsTask(c, 'slow', { gate: 'l1', ms: 100 });
    assert.equal(r.error, undefined);
    assert.equal(r.seen[0], 'taskCreated');
    assert.equal(textOf(r.result), 'done l1');
    const id = r.taskId ?? '';
    const t = await c.experimental.tasks.getTask(id);
    assert.equal(t.status, 'completed');
    assert.equal(t.ttl, 60_000);
    assert.equal(t.pollInterval, 50);
    const again = await c.experimental.tasks.getTaskResult(id, CallToolResultSchema);
    assert.equal(textOf(again), 'done l1');
    assert.deepEqual(again._meta?.['io.modelcontextprotocol/related-task'], { taskId: id });
  });

  test('progress reaches statusMessage; tasks/result blocks until the task is final', async () => {
    const c = await client();
    const id = await startToolTask(c, 'progress', { gate: 'l3' });
    await until(() => probe.gates.has('l3'), 5000, 'l3 running');
    const deadline = Date.now() + 5000;
    let t = await c.experimental.tasks.getTask(id);
    while (t.statusMessage === undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      t = await c.experimental.tasks.getTask(id);
    }
    assert.equal(t.status, 'working');
    assert.equal(t.statusMessage, 'step 1 of l3');
    const waiting = c.experimental.tasks.getTaskResult(id, CallToolResultSchema);
    let settled = false;
    void waiting.then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(settled, false, 'still working: tasks/result waits');
    probe.gates.get('l3')?.();
    assert.equal(textOf(await waiting), 'progressed l3');
  });

  test("a task's progress under the client's own token also reaches the client, with the related-task _meta", async () => {
    const c = await client();
    const seen: Record<string, unknown>[] = [];
    let taskId: string | undefined;
    const stream = c.experimental.tasks.callToolStream(
      { name: 'progress', arguments: { gate: 'l9' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 }, onprogress: (p) => seen.push(p as Record<string, unknown>) },
    );
    const done = (async () => {
      let result: unknown;
      for await (const m of stream) {
        if (m.type === 'taskCreated') taskId = m.task.taskId;
        if (m.type === 'result') result = m.result;
      }
      return result;
    })();
    await until(() => seen.length === 1 && probe.gates.has('l9'), 5000, 'the progress reached the client');
    assert.deepEqual(seen[0], {
      progress: 1,
      total: 3,
      message: 'step 1 of l9',
      _meta: { 'io.modelcontextprotocol/related-task': { taskId } },
    });
    // Still the task's status message as well.
    assert.equal((await c.experimental.tasks.getTask(taskId ?? '')).statusMessage, 'step 1 of l9');
    probe.gates.get('l9')?.();
    assert.equal(textOf(await withDeadline(done, 10_000, 'the result')), 'progressed l9');
  });

  test("a client that accepts only JSON: its task's progress still reaches statusMessage", async () => {
    const s = new RawSession(served.url);
    await s.init();
    const json = { accept: 'application/json' };
    const r = await s.post(
      rpc('tools/call', { name: 'progress', arguments: { gate: 'j1' }, task: {} }),
      json,
    );
    const id = r.json().result.task.taskId as string;
    await until(() => probe.gates.has('j1'), 5000, 'j1 running');
    let task: Record<string, unknown> = {};
    const deadline = Date.now() + 5000;
    while (task['statusMessage'] === undefined && Date.now() < deadline) {
      task = (await s.post(rpc('tasks/get', { taskId: id }), json)).json().result;
      if (task['statusMessage'] === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(task['statusMessage'], 'step 1 of j1');
    probe.gates.get('j1')?.();
  });

  test('a tool error fails the task; its result is what tasks/result returns', async () => {
    const c = await client();
    const r = await callAsTask(c, 'fails', {});
    const id = r.taskId ?? '';
    const t = await c.experimental.tasks.getTask(id);
    assert.equal(t.status, 'failed');
    const res = await c.experimental.tasks.getTaskResult(id, CallToolResultSchema);
    assert.equal(res.isError, true);
    assert.equal(textOf(res), 'it went wrong');
  });

  test('-32601: a forbidden tool with task, a required one without', async () => {
    const c = await client();
    const r = await callAsTask(c, 'greet', { name: 'x' });
    assert.match(String(r.error), /-32601|cannot be called as a task/);
    await assert.rejects(c.callTool({ name: 'must', arguments: { gate: 'x' } }), /must be called as a task/);
    assert.equal(
      textOf(await c.callTool({ name: 'slow', arguments: { gate: 'plain', ms: 10 } })),
      'done plain',
    );
  });

  test('a task param whose ttl is not a number is -32602, and nothing is stored or run', async () => {
    const c = await client();
    const any = { safeParse: (data: unknown) => ({ success: true as const, data }) } as never;
    for (const ttl of ['soon', null, {}, true]) {
      const gate = `ttl-${JSON.stringify(ttl)}`;
      const call = { name: 'slow', arguments: { gate, ms: 1 }, task: { ttl } };
      await assert.rejects(c.request({ method: 'tools/call', params: call } as never, any), (e: unknown) => {
        assert.equal((e as { code?: unknown }).code, -32602, String(e));
        return true;
      });
      assert.equal(probe.runs.get(gate), undefined, `${gate} never ran`);
    }
    const listed = (await c.request({ method: 'tasks/list', params: {} } as never, any)) as {
      tasks: unknown[];
    };
    assert.deepEqual(listed.tasks, [], 'no task stored');
  });

  test("cancel reaches the tool; a finished task is -32602; listing; another session's tasks invisible", async () => {
    const c = await client();
    const id = await startToolTask(c, 'slow', { gate: 'l4' });
    await until(() => probe.gates.has('l4'), 5000, 'l4 running');
    const ack = await c.experimental.tasks.cancelTask(id);
    assert.equal(ack.status, 'cancelled');
    await until(() => probe.aborted.includes('l4'), 5000, "the tool's AbortSignal fired");
    await assert.rejects(c.experimental.tasks.cancelTask(id), /already cancelled/);
    const listed = await c.experimental.tasks.listTasks();
    assert.deepEqual(
      listed.tasks.map((t) => t.taskId),
      [id],
    );
    const other = await client();
    await assert.rejects(other.experimental.tasks.getTask(id), /unknown taskId/);
    await assert.rejects(other.experimental.tasks.getTaskResult(id, CallToolResultSchema), /unknown taskId/);
    await assert.rejects(other.experimental.tasks.cancelTask(id), /unknown taskId/);
    assert.deepEqual((await other.experimental.tasks.listTasks()).tasks, []);
    for (const hostile of ['../x', 'A'.repeat(3000), '__proto__']) {
      await assert.rejects(c.experimental.tasks.getTask(hostile), /unknown taskId/);
    }
    await assert.rejects(c.experimental.tasks.listTasks('not-a-cursor'), /unknown cursor/);
  });

  test('a session that ends while its tasks run: they fail at once, for the principal to read', async () => {
    const first = await client(authed.url, 'alice-token-0001');
    const plain = await startToolTask(first, 'slow', { gate: 'e1' });
    const streamed = await startToolTask(first, 'progress', { gate: 'e2' });
    await until(() => probe.gates.has('e1') && probe.gates.has('e2'), 5000, 'both running');
    const second = await client(authed.url, 'alice-token-0001');
    // Progress opened the second one's response as SSE: both ways a response can end.
    const deadline = Date.now() + 5000;
    while ((await second.experimental.tasks.getTask(streamed)).statusMessage === undefined) {
      assert.ok(Date.now() < deadline, 'progress reached the task');
      await new Promise((r) => setTimeout(r, 20));
    }
    await (first.transport as unknown as StreamableHTTPClientTransport).terminateSession();
    for (const id of [plain, streamed]) {
      let t = await second.experimental.tasks.getTask(id);
      while (t.status === 'working' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        t = await second.experimental.tasks.getTask(id);
      }
      // Within the test's 5 s, so not by the lease (15 s): the run's end was noticed.
      assert.equal(t.status, 'failed', `${id} failed once its session ended`);
    }
    await until(
      () => probe.aborted.includes('e1') && probe.aborted.includes('e2'),
      5000,
      'both tools aborted',
    );
  });

  test("a tool that asks the client for input: the request reaches the client's GET stream, the answer the tool", async () => {
    // Not related to the call: no relatedRequestId.
    const asking = await serveAsksTool(async (server, extra) => {
      const r = await server.server.elicitInput(
        {
          message: 'name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
        },
        { signal: extra.signal },
      );
      return { content: [{ type: 'text', text: `got ${JSON.stringify(r.content)}` }] };
    });
    const asked: string[] = [];
    const c = await elicitingClient(asking.url, async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { name: 'x' } };
    });
    try {
      // The task's own answer was its CreateTaskResult: the request goes to the standalone stream.
      const id = await startToolTask(c, 'asks', {});
      assert.equal(await taskResultText(c, id), 'got {"name":"x"}');
      assert.deepEqual(asked, ['name?']);
      assert.equal((await c.experimental.tasks.getTask(id)).status, 'completed');
    } finally {
      await c.close();
      await asking.close();
    }
  });

  test('a tool asking in relation to its call: the request carries the related-task _meta, the task reads input_required until the answer, then working', async () => {
    let release: (() => void) | undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const asking = await serveRelatedAsker(gate);
    const metas: unknown[] = [];
    const during: string[] = [];
    const c = await elicitingClient(asking.url, async (req) => {
      const meta = req.params._meta as Record<string, unknown> | undefined;
      metas.push(meta);
      const related = meta?.['io.modelcontextprotocol/related-task'] as { taskId?: string } | undefined;
      // The task's status while this request awaits the reply, read from the id the request names.
      if (related?.taskId !== undefined)
        during.push((await c.experimental.tasks.getTask(related.taskId)).status);
      return { action: 'accept', content: { name: 'y' } };
    });
    try {
      const id = await startToolTask(c, 'asks', {});
      await until(() => metas.length === 1 && during.length === 1, 10_000, 'the request answered');
      assert.deepEqual(metas[0], {
        'example.com/keep': 1,
        'io.modelcontextprotocol/related-task': { taskId: id },
      });
      assert.deepEqual(during, ['input_required']);
      // Answered: working again (the tool now waits on its gate), not finished.
      const deadline = Date.now() + 10_000;
      let status = (await c.experimental.tasks.getTask(id)).status;
      while (status !== 'working' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        status = (await c.experimental.tasks.getTask(id)).status;
      }
      assert.equal(status, 'working');
      release?.();
      assert.equal(await taskResultText(c, id), 'got {"name":"y"}');
      assert.equal((await c.experimental.tasks.getTask(id)).status, 'completed');
    } finally {
      release?.();
      await c.close();
      await asking.close();
    }
  });

  test('a tool asking in relation to its call, of a client without a GET stream: the request fails at once, and so does the task', async () => {
    const asking = await serveRelatedAsker(Promise.resolve());
    try {
      const s = new RawSession(asking.url);
      await s.init(LATEST, { elicitation: {} });
      const r = await s.post(rpc('tools/call', { name: 'asks', arguments: {}, task: { ttl: 60_000 } }));
      const id = r.json().result.task.taskId as string;
      let task: Record<string, unknown> = {};
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline) {
        task = (await s.post(rpc('tasks/get', { taskId: id }))).json().result;
        if (task['status'] !== 'working') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(task['status'], 'failed', 'not left waiting for a reply that cannot come');
      const result = (await s.post(rpc('tasks/result', { taskId: id }))).json().result;
      assert.match(JSON.stringify(result.content), /standalone GET stream/);
    } finally {
      await asking.close();
    }
  });

  test('live tasks are bounded per client: one more is refused', async () => {
    const limited = await serve({
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 0,
      createServer: taskServer(probe),
      tasks: createTasks({ taskAfterMs: 0, tools: TASK_TOOLS, pollIntervalMs: 50, maxLivePerClient: 1 }),
    });
    try {
      const c = await client(limited.url);
      await startToolTask(c, 'slow', { gate: 'q1' });
      await assert.rejects(startToolTask(c, 'slow', { gate: 'q2' }), /already has 1 unfinished tasks/);
      await until(() => probe.gates.has('q1'), 5000, 'q1 running');
      probe.gates.get('q1')?.();
      assert.equal(probe.runs.get('q2'), undefined, 'the refused one never ran');
    } finally {
      await limited.close();
    }
  });

  test('a server with its own task store: the SDK handles tasks, Sluice stays out', async () => {
    const c = await client(own.url);
    const id = await startJob(c, { n: 1, gate: 'own1', ms: 0 });
    assert.equal(textOf(await c.experimental.tasks.getTaskResult(id, CallToolResultSchema)), 'done 1');
    assert.deepEqual(
      (await c.experimental.tasks.listTasks()).tasks.map((t) => t.taskId),
      [id],
      "the SDK's tasks/list, from its own store",
    );
    // Sluice would have declared the configured 'optional' here.
    const { tools } = await c.listTools();
    assert.equal(
      tools.find((t) => t.name === 'job')?.execution?.taskSupport,
      'required',
      "the SDK's own declaration",
    );
  });
});
