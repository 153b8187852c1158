/**
 * `callToolAsTask` (sluice/client) with the SDK v1 Client and Sluice's client transport against a
 * server with the tasks extension: a handle on a running task (status, result at the server's
 * polling pace), input answered by the caller's handlers, cancel, typed errors (failed,
 * cancelled, expired at the TTL, unknown), a tool that is not a task (an immediate handle), and
 * polling that survives a cut connection (a TCP proxy refusing everything for a while) and gives up
 * with a typed error after `maxOutageMs` of it; every status read reaches `onStatus`, and the progress
 * of a call the server holds before it would become a task reaches `onProgress`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import {
  callToolAsTask,
  callToolDurably,
  StreamableHttpClientTransport,
  TaskCancelledError,
  TaskExpiredError,
  TaskFailedError,
  TaskInputRequiredError,
  type TaskState,
  TaskUnreachableError,
} from '../../src/client/index.js';
import { createTasks, type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { until } from '../helpers/http.js';
import { newProbe, TASK_TOOLS, taskServer } from '../helpers/tasks.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'tasks-client', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
};

const textOf = (r: unknown): string | undefined =>
  (r as { content?: { text?: string }[] }).content?.[0]?.text;

describe('callToolAsTask', () => {
  const probe = newProbe();
  let served: Served;
  let short: Served;
  let proxy: TcpProxy;
  /** Holds an optional tool's call 10 s before it would become a task (task-after.ts). */
  let holding: Served;
  /** Holds it 150 ms: a tool waiting on its gate becomes a task. */
  let brief: Served;
  const clients: Client[] = [];

  async function connect(url: string): Promise<Client> {
    const c = new Client({ name: 'tasks-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    await withDeadline(c.connect(new StreamableHttpClientTransport(new URL(url))), 10_000, 'connect');
    clients.push(c);
    return c;
  }

  before(async () => {
    const base = { createServer: taskServer(probe), port: 0, host: '127.0.0.1', keepaliveMs: 0 } as const;
    served = await serve({
      ...base,
      tasks: createTasks({ taskAfterMs: 0, tools: TASK_TOOLS, pollIntervalMs: 40 }),
    });
    short = await serve({
      ...base,
      tasks: createTasks({ taskAfterMs: 0, tools: TASK_TOOLS, pollIntervalMs: 40, ttlMs: 1000 }),
    });
    proxy = await startTcpProxy(Number(new URL(served.url).port));
    holding = await serve({
      ...base,
      tasks: createTasks({ taskAfterMs: 10_000, tools: TASK_TOOLS, pollIntervalMs: 40 }),
    });
    brief = await serve({
      ...base,
      tasks: createTasks({ taskAfterMs: 150, tools: TASK_TOOLS, pollIntervalMs: 40 }),
    });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await proxy.close();
    await served.close();
    await short.close();
    await holding.close();
    await brief.close();
  });

  test('a running task: status, then the result once it finished', async () => {
    const client = await connect(served.url);
    const task = await callToolAsTask(client, { name: 'slow', arguments: { gate: 'c1' }, _meta: META });
    assert.equal(task.immediate, false);
    assert.match(task.taskId, /^[A-Za-z0-9_-]{43}$/);
    assert.equal((await task.status()).status, 'working');
    const result = task.result();
    await until(() => probe.gates.has('c1'), 5000, 'running');
    probe.gates.get('c1')?.();
    assert.equal(textOf(await result), 'done c1');
  });

  test('input required: answered by the handlers through tasks/update', async () => {
    const client = await connect(served.url);
    const names = ['ann', 'ben'];
    const task = await callToolAsTask(
      client,
      { name: 'ask', _meta: META },
      {
        inputHandlers: {
          'elicitation/create': async () => ({ action: 'accept', content: { name: names.shift() ?? '' } }),
        },
      },
    );
    assert.equal(textOf(await task.result()), 'answers ann,ben state round-1');
    const bare = await callToolAsTask(client, { name: 'ask', _meta: META });
    await assert.rejects(bare.result(), TaskInputRequiredError);
    await bare.cancel();
  });

  test('typed errors: failed, cancelled, expired at the TTL', async () => {
    const client = await connect(served.url);
    const failing = await callToolAsTask(client, { name: 'sampler', _meta: META });
    const e = await failing.result().catch((x: unknown) => x);
    assert.ok(e instanceof TaskFailedError);
    assert.equal(e.error.code, -32021);
    const c = await callToolAsTask(client, { name: 'slow', arguments: { gate: 'c-cancel' }, _meta: META });
    await c.cancel();
    await assert.rejects(c.result(), TaskCancelledError);
    const shortClient = await connect(short.url);
    const t0 = Date.now();
    const x = await callToolAsTask(shortClient, {
      name: 'slow',
      arguments: { gate: 'c-ttl', ms: 60_000 },
      _meta: META,
    });
    await assert.rejects(x.result(), TaskExpiredError);
    assert.ok(Date.now() - t0 < 3000, 'stops at the TTL');
    probe.gates.get('c-ttl')?.();
  });

  test('onProgress: the progress a server sends while it holds the call, answered directly or made a task', async () => {
    const seen: Progress[] = [];
    const direct = callToolAsTask(
      await connect(holding.url),
      { name: 'progress', arguments: { gate: 'cp-direct' }, _meta: META },
      { onProgress: (p) => seen.push(p) },
    );
    await until(() => seen.length > 0, 5000, 'the progress, while held');
    assert.deepEqual(seen, [{ progress: 1, total: 3, message: 'step 1 of cp-direct' }]);
    probe.gates.get('cp-direct')?.();
    const handle = await direct;
    assert.equal(handle.immediate, true, 'answered within the hold');
    assert.equal(textOf(await handle.result()), 'progressed cp-direct');

    const later: Progress[] = [];
    const task = await callToolAsTask(
      await connect(brief.url),
      { name: 'progress', arguments: { gate: 'cp-task' }, _meta: META },
      { onProgress: (p) => later.push(p) },
    );
    assert.equal(task.immediate, false);
    assert.deepEqual(later, [{ progress: 1, total: 3, message: 'step 1 of cp-task' }], 'before the task id');
    probe.gates.get('cp-task')?.();
    assert.equal(textOf(await task.result()), 'progressed cp-task');
  });

  test('a tool that is not a task: an immediate handle', async () => {
    const client = await connect(served.url);
    const h = await callToolAsTask(client, { name: 'greet', arguments: { name: 'W' }, _meta: META });
    assert.equal(h.immediate, true);
    assert.equal(textOf(await h.result()), 'Hello, W!');
  });

  test('the transparent mode: a result either way, durable where the server makes a task', async () => {
    const client = await connect(served.url);
    const pending = callToolDurably(client, { name: 'slow', arguments: { gate: 'c-dur' }, _meta: META });
    await until(() => probe.gates.has('c-dur'), 5000, 'running as a task');
    probe.gates.get('c-dur')?.();
    assert.equal(textOf(await pending), 'done c-dur');
    const plain = await callToolDurably(client, { name: 'greet', arguments: { name: 'P' }, _meta: META });
    assert.equal(textOf(plain), 'Hello, P!');
  });

  test('polling survives a lost connection', async () => {
    const proxied = `http://127.0.0.1:${proxy.port}${new URL(served.url).pathname}`;
    const client = await connect(proxied);
    const task = await callToolAsTask(client, { name: 'slow', arguments: { gate: 'c-cut' }, _meta: META });
    const result = task.result();
    await until(() => probe.gates.has('c-cut'), 5000, 'running');
    proxy.cut();
    await new Promise((r) => setTimeout(r, 300));
    probe.gates.get('c-cut')?.();
    await new Promise((r) => setTimeout(r, 300));
    proxy.restore();
    assert.equal(textOf(await withDeadline(result, 10_000, 'the result after the cut')), 'done c-cut');
  });

  test('an outage longer than maxOutageMs: TaskUnreachableError, and every status read reaches onStatus', async () => {
    const proxied = `http://127.0.0.1:${proxy.port}${new URL(served.url).pathname}`;
    const client = await connect(proxied);
    const seen: TaskState[] = [];
    const task = await callToolAsTask(
      client,
      { name: 'progress', arguments: { gate: 'c-out' }, _meta: META },
      { maxOutageMs: 500, onStatus: (s) => seen.push(s) },
    );
    const result = task.result().catch((x: unknown) => x);
    await until(() => seen.some((s) => s.statusMessage === 'step 1 of c-out'), 5000, 'the status message');
    proxy.cut();
    const t0 = Date.now();
    try {
      const e = await withDeadline(result, 10_000, 'giving up after the outage');
      assert.ok(e instanceof TaskUnreachableError, String(e));
      assert.equal(e.code, 'SLUICE_CLIENT_TASK_UNREACHABLE');
      assert.equal(e.taskId, task.taskId);
      assert.ok(e.cause !== undefined, 'the last polling error is the cause');
      assert.ok(Date.now() - t0 >= 450, 'not before the outage lasted maxOutageMs');
    } finally {
      proxy.restore();
    }
    // The task ran on: it is still there to read.
    assert.equal((await task.status()).status, 'working');
    probe.gates.get('c-out')?.();
    assert.equal(
      textOf(await withDeadline(task.result(), 10_000, 'the result after the outage')),
      'progressed c-out',
    );
  });

  test('maxOutageMs is validated', async () => {
    const client = await connect(served.url);
    await assert.rejects(
      callToolAsTask(client, { name: 'greet', arguments: { name: 'V' }, _meta: META }, { maxOutageMs: 0 }),
      /maxOutageMs must be a positive integer/,
    );
  });
});
