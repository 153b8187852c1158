/**
 * The tasks extension (SEP-2663) on the 2026-07-28 era, over real sockets with the in-memory store:
 * discovery, creation answered only once the task is stored, tasks/get while working and once
 * finished (inline result, tool errors as completed + isError, protocol errors as failed + error),
 * cancel reaching the tool's AbortSignal (sticky, idempotent), progress as statusMessage, an MRTR
 * round as input_required answered in two partial tasks/update calls, and the gates: no
 * declaration → plain calls or -32021, Mcp-Name must match the task id, another principal's id and
 * forged ids are the same -32602, an oversized update is refused and changes nothing, a creation
 * flood is 429 + Retry-After beyond the per-client limit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InvalidOptionError } from '../../src/errors.js';
import { mrtrInput } from '../../src/modern/mrtr.js';
import { type CreateServer, createTasks, type Served, serve, TaskService } from '../../src/server/index.js';
import { type Loose, until } from '../helpers/http.js';
import { modernSend } from '../helpers/modern.js';
import {
  callBody,
  createTask,
  EXT,
  getTask,
  newProbe,
  pollTask,
  serveTaskTools,
  TASK_TOOLS,
  taskBody,
  taskServer,
} from '../helpers/tasks.js';

const probe = newProbe();
let served: Served;
let url: string;
const alice = { 'x-user': 'alice' };
const bob = { 'x-user': 'bob' };

before(async () => {
  served = await serveTaskTools(
    probe,
    createTasks({
      taskAfterMs: 0,
      tools: TASK_TOOLS,
      maxLivePerClient: 4,
      maxUpdateBytes: 4096,
      pollIntervalMs: 50,
    }),
  );
  url = served.url;
});
after(() => served.close());

describe('tasks extension, 2026-07-28 era, in memory', () => {
  test('server/discover advertises the extension under capabilities.extensions', async () => {
    const r = await modernSend(url, taskBody('server/discover', {}));
    assert.equal(r.status, 200);
    const caps = r.json().result.capabilities;
    assert.deepEqual(caps.extensions[EXT], {});
    assert.equal(caps.tasks, undefined);
    assert.ok(caps.tools, 'the server capabilities are kept');
  });

  test('a task is created, readable at once, then completed with the result inline', async () => {
    const t = await createTask(url, 'slow', { gate: 'life' }, alice);
    assert.equal(t.status, 'working');
    assert.match(t.taskId, /^[A-Za-z0-9_-]{43}$/);
    for (const k of ['result', 'error', 'inputRequests', 'task', 'requestState', 'ttl', 'pollInterval'])
      assert.equal(k in t, false, k);
    assert.ok(Number.isInteger(t.ttlMs) && t.ttlMs > 0);
    assert.equal(t.pollIntervalMs, 50);
    assert.match(t.createdAt, /^\d{4}-\d{2}-\d{2}T/);
    const working = await getTask(url, t.taskId, alice);
    assert.equal(working.result.status, 'working');
    assert.equal(working.result.resultType, 'complete');
    assert.equal('result' in working.result, false);
    await until(() => probe.gates.has('life'), 5000, 'slow running');
    probe.gates.get('life')?.();
    const done = await pollTask(url, t.taskId, (x) => x.status === 'completed', 5000, alice);
    assert.equal(done.result.content[0].text, 'done life');
    assert.equal(probe.runs.get('life'), 1);
  });

  test('a tool error is completed + isError; a protocol error is failed + error', async () => {
    const a = await createTask(url, 'fails', {}, alice);
    const fa = await pollTask(url, a.taskId, (x) => x.status !== 'working', 5000, alice);
    assert.equal(fa.status, 'completed');
    assert.equal(fa.result.isError, true);
    const b = await createTask(url, 'sampler', {}, alice);
    const fb = await pollTask(url, b.taskId, (x) => x.status !== 'working', 5000, alice);
    assert.equal(fb.status, 'failed');
    assert.equal(fb.error.code, -32021);
    assert.equal(typeof fb.error.message, 'string');
    assert.equal('result' in fb, false);
  });

  test('tasks/cancel fires the tool AbortSignal; cancelled is sticky; cancel is idempotent', async () => {
    const t = await createTask(url, 'slow', { gate: 'cancel-me' }, alice);
    await until(() => probe.gates.has('cancel-me'), 5000, 'slow running');
    const ack = await modernSend(url, taskBody('tasks/cancel', { taskId: t.taskId }), alice);
    assert.deepEqual(ack.json().result, { resultType: 'complete' });
    await until(() => probe.aborted.includes('cancel-me'), 5000, 'the tool saw its AbortSignal');
    const got = await getTask(url, t.taskId, alice);
    assert.equal(got.result.status, 'cancelled');
    const again = await modernSend(url, taskBody('tasks/cancel', { taskId: t.taskId }), alice);
    assert.deepEqual(again.json().result, { resultType: 'complete' });
    assert.equal((await getTask(url, t.taskId, alice)).result.status, 'cancelled');
  });

  test('progress shows as statusMessage while working', async () => {
    const t = await createTask(url, 'progress', { gate: 'prog' }, alice);
    const seen = await pollTask(url, t.taskId, (x) => x.statusMessage === 'step 1 of prog', 5000, alice);
    assert.equal(seen.status, 'working');
    probe.gates.get('prog')?.();
    await pollTask(url, t.taskId, (x) => x.status === 'completed', 5000, alice);
  });

  test('an MRTR round: input_required, answered in two partial tasks/update calls', async () => {
    const t = await createTask(url, 'ask', {}, alice);
    const ir = await pollTask(url, t.taskId, (x) => x.status === 'input_required', 5000, alice);
    assert.deepEqual(Object.keys(ir.inputRequests).sort(), ['first', 'second']);
    assert.equal(ir.inputRequests.first.method, 'elicitation/create');
    assert.equal('requestState' in ir, false);
    // Oversized: refused, nothing retained.
    const huge = { first: { action: 'accept', content: { name: 'x'.repeat(5000) } } };
    const big = await modernSend(
      url,
      taskBody('tasks/update', { taskId: t.taskId, inputResponses: huge }),
      alice,
    );
    assert.equal(big.status, 413);
    assert.equal(big.json().error.code, -32602);
    const still = await getTask(url, t.taskId, alice);
    assert.deepEqual(Object.keys(still.result.inputRequests).sort(), ['first', 'second']);
    const u1 = await modernSend(
      url,
      taskBody('tasks/update', {
        taskId: t.taskId,
        inputResponses: { first: { action: 'accept', content: { name: 'ann' } }, unknown: { x: 1 } },
      }),
      alice,
    );
    assert.deepEqual(u1.json().result, { resultType: 'complete' });
    const mid = await getTask(url, t.taskId, alice);
    assert.equal(mid.result.status, 'input_required');
    assert.deepEqual(Object.keys(mid.result.inputRequests), ['second']);
    await modernSend(
      url,
      taskBody('tasks/update', {
        taskId: t.taskId,
        inputResponses: { second: { action: 'accept', content: { name: 'ben' } } },
      }),
      alice,
    );
    const done = await pollTask(url, t.taskId, (x) => x.status === 'completed', 5000, alice);
    assert.equal(done.result.content[0].text, 'answers ann,ben state round-1');
  });

  test('without the declaration: optional tools run plainly, required ones and tasks/* get -32021', async () => {
    const plain = await modernSend(url, callBody('slow', { gate: 'plain', ms: 1 }, false), alice);
    assert.equal(plain.status, 200);
    assert.equal(plain.json().result.content[0].text, 'done plain');
    assert.equal('taskId' in plain.json().result, false);
    const must = await modernSend(url, callBody('must', { gate: 'm' }, false), alice);
    assert.equal(must.status, 400);
    assert.equal(must.json().error.code, -32021);
    assert.deepEqual(must.json().error.data.requiredCapabilities.extensions[EXT], {});
    for (const m of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const r = await modernSend(
        url,
        taskBody(m, { taskId: 'gate-test-id-0123456', inputResponses: {} }, false),
        alice,
      );
      assert.equal(r.json().error.code, -32021, m);
    }
    const sync = await modernSend(url, callBody('greet', { name: 'W' }), alice);
    assert.equal(sync.json().result.resultType, 'complete');
    assert.equal(sync.json().result.content[0].text, 'Hello, W!');
  });

  test('hostile ids: forged, malformed and another principal’s are the same -32602; Mcp-Name must match', async () => {
    const t = await createTask(url, 'slow', { gate: 'mine', ms: 60_000 }, alice);
    for (const id of [t.taskId, 'A'.repeat(43), 'not a task id!', `${t.taskId}x`]) {
      for (const m of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
        const r = await modernSend(url, taskBody(m, { taskId: id, inputResponses: {} }), bob);
        assert.equal(r.json().error?.code, -32602, `${m} ${id}`);
        assert.equal(r.json().error.message, 'Invalid params: unknown taskId');
      }
    }
    assert.equal((await getTask(url, t.taskId, alice)).result.status, 'working', 'bob cancelled nothing');
    const mismatch = await modernSend(url, taskBody('tasks/get', { taskId: t.taskId }), {
      ...alice,
      'mcp-name': 'another-task-id',
    });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.json().error.code, -32020);
    await modernSend(url, taskBody('tasks/cancel', { taskId: t.taskId }), alice);
  });

  test('a creation flood is 429 + Retry-After beyond maxLivePerClient; finished tasks free slots', async () => {
    const carol = { 'x-user': 'carol' };
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await createTask(url, 'slow', { gate: `flood-${i}`, ms: 60_000 }, carol)).taskId);
    const over = await modernSend(url, callBody('slow', { gate: 'flood-x', ms: 60_000 }), carol);
    assert.equal(over.status, 429);
    assert.equal(over.headers['retry-after'], '1');
    assert.equal(over.json().error.code, -32000);
    // Another client is not affected.
    const other = await createTask(url, 'slow', { gate: 'dave', ms: 1 }, { 'x-user': 'dave' });
    assert.equal(other.status, 'working');
    await modernSend(url, taskBody('tasks/cancel', { taskId: ids[0] }), carol);
    const again = await createTask(url, 'slow', { gate: 'flood-y', ms: 1 }, carol);
    assert.equal(again.status, 'working');
    for (const id of ids) await modernSend(url, taskBody('tasks/cancel', { taskId: id }), carol);
    assert.equal(probe.runs.get('flood-x'), undefined, 'the refused call never ran');
  });

  test('options are validated once', () => {
    assert.throws(() => createTasks({ ttlMs: 0 }), InvalidOptionError);
    assert.throws(
      () => createTasks({ taskAfterMs: 0, tools: { x: 'sometimes' as 'optional' } }),
      InvalidOptionError,
    );
    assert.ok(createTasks() instanceof TaskService);
  });
});

describe("tasks extension: input request keys over a task's rounds", () => {
  test('a tool asking again under the same key in a later round: a new key on the wire, its own for the tool', async () => {
    // SEP-2663 "tasks/update": each inputRequests key MUST be unique over the task's lifetime; an
    // MRTR tool's keys are per round, so a later round's are made unique here.
    const ask = {
      method: 'elicitation/create',
      params: { message: 'name?', requestedSchema: { type: 'object' } },
    };
    const createServer = () => {
      const server = new McpServer({ name: 'reask', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.registerTool('reask', {}, async (extra) => {
        const input = mrtrInput(extra);
        const name = (input.inputResponses?.['name'] as Loose | undefined)?.content?.name;
        if (input.requestState === 'r2') return { content: [{ type: 'text', text: `names ${name}` }] };
        const requestState = input.requestState === undefined ? 'r1' : 'r2';
        return { resultType: 'input_required', inputRequests: { name: ask }, requestState } as never;
      });
      return server as unknown as ReturnType<CreateServer>;
    };
    const tasks = createTasks({ taskAfterMs: 0, tools: { reask: 'required' }, pollIntervalMs: 50 });
    const s = await serve({ createServer, port: 0, host: '127.0.0.1', keepaliveMs: 0, tasks });
    const update = (taskId: string, key: string, name: string) =>
      modernSend(
        s.url,
        taskBody('tasks/update', {
          taskId,
          inputResponses: { [key]: { action: 'accept', content: { name } } },
        }),
        alice,
      );
    try {
      const t = await createTask(s.url, 'reask', {}, alice);
      const first = await pollTask(s.url, t.taskId, (x) => x.status === 'input_required', 5000, alice);
      const key1 = Object.keys(first.inputRequests)[0] ?? '';
      assert.equal(key1, 'name', "the first round's keys are the tool's own");
      await update(t.taskId, key1, 'ann');
      const again = (x: Loose) => x.status === 'input_required' && x.lastUpdatedAt !== first.lastUpdatedAt;
      const second = await pollTask(s.url, t.taskId, again, 5000, alice);
      const key2 = Object.keys(second.inputRequests)[0] ?? '';
      assert.notEqual(key2, key1, 'a key is never used twice in one task');
      await update(t.taskId, key2, 'ben');
      const done = await pollTask(s.url, t.taskId, (x) => x.status === 'completed', 5000, alice);
      assert.equal(done.result.content[0].text, 'names ben', 'the tool reads its answer under its own key');
    } finally {
      await s.close();
    }
  });
});

describe('tasks extension: leases of runs longer than a lease', () => {
  test('two runs of three leases each stay working (one renewal timer), then complete', async () => {
    const p = newProbe();
    const tasks = createTasks({ taskAfterMs: 0, tools: TASK_TOOLS, leaseMs: 300, pollIntervalMs: 50 });
    const s = await serve({ createServer: taskServer(p), port: 0, host: '127.0.0.1', keepaliveMs: 0, tasks });
    try {
      const a = await createTask(s.url, 'slow', { gate: 'lease-a' }, alice);
      const b = await createTask(s.url, 'slow', { gate: 'lease-b' }, alice);
      await until(() => p.gates.has('lease-a') && p.gates.has('lease-b'), 5000, 'both running');
      // Three lease lengths: without renewals both would read failed (task-owner-lost) by now.
      await new Promise((r) => setTimeout(r, 900));
      for (const t of [a, b]) assert.equal((await getTask(s.url, t.taskId, alice)).result.status, 'working');
      assert.equal(tasks.stats().running, 2);
      p.gates.get('lease-a')?.();
      const doneA = await pollTask(s.url, a.taskId, (x) => x.status !== 'working', 5000, alice);
      assert.equal(doneA.status, 'completed');
      // b alone, two more lease lengths: the timer keeps renewing while any run remains.
      await new Promise((r) => setTimeout(r, 600));
      assert.equal((await getTask(s.url, b.taskId, alice)).result.status, 'working');
      p.gates.get('lease-b')?.();
      const doneB = await pollTask(s.url, b.taskId, (x) => x.status !== 'working', 5000, alice);
      assert.equal(doneB.result.content[0].text, 'done lease-b');
      await until(() => tasks.stats().running === 0, 5000, 'runs listed until settled');
    } finally {
      await s.close();
    }
  });

  test('a call held longer than a lease (taskAfterMs > leaseMs) is stored with a fresh lease: working, not owner-lost', async () => {
    // The record is built when the call arrives, its lease counted from then; stored taskAfterMs
    // later, that lease must start again (store.ts: only a lapsed lease reads as failed).
    const p = newProbe();
    const tasks = createTasks({ taskAfterMs: 1200, tools: TASK_TOOLS, leaseMs: 900, pollIntervalMs: 50 });
    const s = await serve({ createServer: taskServer(p), port: 0, host: '127.0.0.1', keepaliveMs: 0, tasks });
    try {
      const t = await createTask(s.url, 'slow', { gate: 'held-lease' }, alice);
      assert.equal(t.status, 'working');
      assert.equal((await getTask(s.url, t.taskId, alice)).result.status, 'working', 'right after creation');
      p.gates.get('held-lease')?.();
      const done = await pollTask(s.url, t.taskId, (x) => x.status !== 'working', 5000, alice);
      assert.equal(done.status, 'completed', JSON.stringify(done));
    } finally {
      await s.close();
    }
  });
});
