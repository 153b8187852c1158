/**
 * `taskAfterMs` (src/tasks/task-after.ts): a call of an `optional` tool from a client that declared
 * the tasks extension becomes a task only when it is still running once `taskAfterMs` is up, or
 * asks for input before that. Sooner, it is answered as a plain call would be (the same status and
 * body as for a client without the extension), and the store never hears of it; the client closing
 * its request meanwhile cancels the tool; a task the store refuses when the time is up (the
 * client's limit, an unreachable store) goes on as a plain call and is answered when it ends.
 * The waits here are gates the test opens, never a race against the clock: the instances that must
 * see a call end within the wait give it 10 s.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { InvalidOptionError } from '../../src/errors.js';
import {
  createTasks,
  MemoryTaskStore,
  type Served,
  serve,
  type TaskService,
  type TaskStore,
} from '../../src/server/index.js';
import { type Loose, until } from '../helpers/http.js';
import { modernHeaders, modernOpen, modernSend } from '../helpers/modern.js';
import { callBody, newProbe, pollTask, TASK_TOOLS, taskBody, taskServer } from '../helpers/tasks.js';

/** A MemoryTaskStore that counts what it is asked, and can fail its creations. */
function recordingStore(): { store: TaskStore; calls: Map<string, number>; failCreate: { on: boolean } } {
  const inner = new MemoryTaskStore();
  const calls = new Map<string, number>();
  const failCreate = { on: false };
  const count = (m: string) => calls.set(m, (calls.get(m) ?? 0) + 1);
  const store: TaskStore = {
    create: (t, max) => {
      count('create');
      return failCreate.on ? Promise.reject(new Error('the store is down')) : inner.create(t, max);
    },
    get: (id, owner) => inner.get(id, owner),
    renew: (id, runner, until) => {
      count('renew');
      return inner.renew(id, runner, until);
    },
    progress: (id, runner, p) => {
      count('progress');
      return inner.progress(id, runner, p);
    },
    settle: (id, runner, s) => {
      count('settle');
      return inner.settle(id, runner, s);
    },
    cancel: (id, owner, message) => inner.cancel(id, owner, message),
    list: (owner, cursor, limit) => inner.list(owner, cursor, limit),
    answer: (id, owner, r, runner, until) => inner.answer(id, owner, r, runner, until),
    onCancel: (l) => inner.onCancel(l),
    close: () => inner.close(),
  };
  return { store, calls, failCreate };
}

const probe = newProbe();
const served: Served[] = [];
after(() => Promise.all(served.map((s) => s.close())));

async function start(tasks: TaskService): Promise<string> {
  return (await startServed(tasks)).url;
}

async function startServed(tasks: TaskService): Promise<Served> {
  const s = await serve({
    createServer: taskServer(probe),
    port: 0,
    host: '127.0.0.1',
    keepaliveMs: 0,
    tasks,
  });
  served.push(s);
  return s;
}

/** `body` with the client's progress token in its `_meta`. */
function withToken(body: Loose, token: string | number): Loose {
  body.params._meta = { ...body.params._meta, progressToken: token };
  return body;
}

/** `body` asking for log messages at `level` and above (2026-07-28: the request's `_meta` logLevel). */
function withLogLevel(body: Loose, level: string): Loose {
  body.params._meta = { ...body.params._meta, 'io.modelcontextprotocol/logLevel': level };
  return body;
}

/** What a `chatty` call sent on its SSE answer before the answer: log data, partial deltas. */
function chatter(messages: readonly Loose[]): string[] {
  return messages
    .filter((m) => m.method !== undefined)
    .map((m) =>
      m.method === 'notifications/message'
        ? `log ${m.params.data}`
        : m.params?._meta?.['io.sluice/partial'] !== undefined
          ? `delta ${m.params.message}`
          : `other ${m.method}`,
    );
}

/** The answer without what differs between two requests of the same call (their ids). */
function sameAnswer(r: { status: number; json(): { result?: unknown; error?: unknown } }) {
  const j = r.json();
  return { status: r.status, result: j.result, error: j.error };
}

describe('an optional tool that answers within taskAfterMs (10 s here)', () => {
  const rec = recordingStore();
  const tasks = createTasks({ tools: TASK_TOOLS, taskAfterMs: 10_000, pollIntervalMs: 50, store: rec.store });
  let url: string;
  before(async () => {
    url = await start(tasks);
  });

  test('a result, a tool error and a refused argument are answered as plain calls; the store is never asked', async () => {
    for (const [name, args] of [
      ['slow', { gate: 'quick', ms: 1 }],
      ['fails', {}],
      ['slow', { gate: 42 }],
    ] as const) {
      const body = callBody(name, args);
      const declared = await modernSend(url, body);
      const plain = await modernSend(url, callBody(name, args, false));
      assert.deepEqual(sameAnswer(declared), sameAnswer(plain), `${name} ${JSON.stringify(args)}`);
      assert.notEqual(declared.json().result?.resultType, 'task');
      assert.equal(declared.json().id, body.id, 'under its own request id');
    }
    assert.equal(
      (await modernSend(url, callBody('slow', { gate: 'q2', ms: 1 }))).json().result.content[0].text,
      'done q2',
    );
    assert.deepEqual([...rec.calls], [], 'no create, progress, renew or settle');
    assert.equal(tasks.stats().created, 0);
    assert.equal(tasks.stats().answeredDirectly, 4, 'three declared calls and q2');
  });

  test('a tool that asks for input at once becomes a task: input_required, answered by tasks/update', async () => {
    const r = await modernSend(url, callBody('ask'));
    const created = r.json().result;
    assert.equal(created.resultType, 'task', r.text);
    const t = await pollTask(url, created.taskId, (x) => x.status === 'input_required');
    assert.deepEqual(Object.keys(t.inputRequests).sort(), ['first', 'second']);
    const answer = (name: string) => ({ action: 'accept', content: { name } });
    const u = await modernSend(
      url,
      taskBody('tasks/update', {
        taskId: created.taskId,
        inputResponses: { first: answer('a'), second: answer('b') },
      }),
    );
    assert.equal(u.status, 200, u.text);
    const done = await pollTask(url, created.taskId, (x) => x.status === 'completed');
    assert.match(done.result.content[0].text, /^answers a,b/);
  });

  test('a call with a progressToken gets its progress on an SSE answer whose last event is the result; nothing is stored', async () => {
    const before = rec.calls.get('create') ?? 0;
    const body = withToken(callBody('progress', { gate: 'streamed' }), 'tok-streamed');
    const r = await modernOpen(url, body);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/event-stream');
    const p = await r.waitMessage(
      (m) => m.method === 'notifications/progress',
      5_000,
      'the progress, while held',
    );
    assert.deepEqual(p.params, {
      progressToken: 'tok-streamed',
      progress: 1,
      total: 3,
      message: 'step 1 of streamed',
    });
    probe.gates.get('streamed')?.();
    await r.finished(5_000, 'the answer ends the stream');
    const last = r.messages().at(-1);
    assert.equal(last.id, body.id, 'under its own request id');
    assert.equal(last.result.content[0].text, 'progressed streamed');
    assert.equal(r.messages().length, 2, 'the progress, then the result');
    assert.equal(rec.calls.get('create') ?? 0, before, 'no task was created');
  });

  test('its log messages and partial output reach the client while held, as a plain call would send them; nothing is stored', async () => {
    const before = rec.calls.get('create') ?? 0;
    const body = withLogLevel(withToken(callBody('chatty', { gate: 'chatty-plain' }), 'tok-chatty'), 'info');
    const r = await modernOpen(url, body);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/event-stream');
    await r.waitMessage((m) => m.params?.message === 'chatty-plain', 5_000, 'the second delta, while held');
    probe.gates.get('chatty-plain')?.();
    await r.finished(5_000, 'the answer ends the stream');
    const all = r.messages();
    assert.deepEqual(chatter(all), ['log starting chatty-plain', 'delta Hello, ', 'delta chatty-plain']);
    const deltas = all.filter((m) => m.method === 'notifications/progress');
    assert.ok(
      deltas.every((m) => m.params.progressToken === 'tok-chatty'),
      "partial output under the client's token",
    );
    assert.equal(all.at(-1).id, body.id);
    assert.equal(all.at(-1).result.content[0].text, 'Hello, chatty-plain');
    assert.equal(rec.calls.get('create') ?? 0, before, 'no task was created');
  });

  test('without a progressToken or a logLevel it is answered in one JSON body: nothing it sent was asked for', async () => {
    const body = callBody('chatty', { gate: 'chatty-quiet' });
    const pending = modernSend(url, body, {}, { timeoutMs: 10_000 });
    await until(() => probe.gates.has('chatty-quiet'), 5_000, 'the tool waits on its gate');
    probe.gates.get('chatty-quiet')?.();
    const r = await pending;
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'] ?? '', /^application\/json/);
    assert.equal(r.json().result.content[0].text, 'Hello, chatty-quiet');
  });

  test('the client closing its request while it runs cancels the tool; nothing is stored', async () => {
    const before = rec.calls.get('create') ?? 0;
    const body = callBody('slow', { gate: 'walked-away' });
    const req = httpRequest(url, { method: 'POST', headers: modernHeaders(body), agent: false });
    req.on('error', () => undefined);
    req.end(JSON.stringify(body));
    await until(() => probe.gates.has('walked-away'), 5_000, 'the tool started');
    req.destroy();
    await until(() => probe.aborted.includes('walked-away'), 5_000, "the tool's AbortSignal fired");
    assert.equal(rec.calls.get('create') ?? 0, before, 'no task was created');
  });
});

describe('an optional tool still running when taskAfterMs (100 ms here) is up', () => {
  const rec = recordingStore();
  const tasks = createTasks({
    tools: TASK_TOOLS,
    taskAfterMs: 100,
    pollIntervalMs: 50,
    maxLivePerClient: 1,
    store: rec.store,
  });
  let url: string;
  let s: Served;
  before(async () => {
    s = await startServed(tasks);
    url = s.url;
  });

  test('becomes a task then: readable at once, completed with the result when the tool ends', async () => {
    const r = await modernSend(url, callBody('slow', { gate: 'long' }));
    const created = r.json().result;
    assert.equal(created.resultType, 'task', r.text);
    assert.equal((await pollTask(url, created.taskId, () => true)).status, 'working');
    probe.gates.get('long')?.();
    const done = await pollTask(url, created.taskId, (x) => x.status === 'completed');
    assert.equal(done.result.content[0].text, 'done long');
    assert.equal(probe.runs.get('long'), 1, 'the tool ran once');
  });

  test('progress it reported while held reaches the task once it is stored', async () => {
    const created = (await modernSend(url, callBody('progress', { gate: 'held-progress' }))).json().result;
    assert.equal(created.resultType, 'task');
    const t = await pollTask(url, created.taskId, (x) => x.statusMessage !== undefined);
    assert.equal(t.statusMessage, 'step 1 of held-progress');
    assert.equal(t.status, 'working');
    probe.gates.get('held-progress')?.();
    const done = await pollTask(url, created.taskId, (x) => x.status === 'completed');
    assert.equal(done.result.content[0].text, 'progressed held-progress');
  });

  test('a call with a progressToken gets its progress while held, then the CreateTaskResult as the last event', async () => {
    const body = withToken(callBody('progress', { gate: 'streamed-task' }), 7);
    const r = await modernOpen(url, body);
    assert.equal(r.headers['content-type'], 'text/event-stream');
    await r.finished(5_000, 'the CreateTaskResult ends the stream');
    const [p, created, ...rest] = r.messages();
    assert.deepEqual(rest, []);
    assert.equal(p.method, 'notifications/progress');
    assert.equal(p.params.progressToken, 7, "the client's token, a number as it sent it");
    assert.equal(created.id, body.id);
    assert.equal(created.result.resultType, 'task', JSON.stringify(created));
    const t = await pollTask(url, created.result.taskId, (x) => x.statusMessage !== undefined);
    assert.equal(t.statusMessage, 'step 1 of streamed-task');
    probe.gates.get('streamed-task')?.();
    const done = await pollTask(url, created.result.taskId, (x) => x.status === 'completed');
    assert.equal(done.result.content[0].text, 'progressed streamed-task');
  });

  test('its log messages and partial output reach the client while held, then the CreateTaskResult; the task has the whole text', async () => {
    const body = withLogLevel(
      withToken(callBody('chatty', { gate: 'chatty-task' }), 'tok-chatty-task'),
      'info',
    );
    const r = await modernOpen(url, body);
    assert.equal(r.headers['content-type'], 'text/event-stream');
    await r.finished(5_000, 'the CreateTaskResult ends the stream');
    const all = r.messages();
    assert.deepEqual(chatter(all), ['log starting chatty-task', 'delta Hello, ', 'delta chatty-task']);
    const created = all.at(-1);
    assert.equal(created.id, body.id);
    assert.equal(created.result.resultType, 'task', JSON.stringify(created));
    probe.gates.get('chatty-task')?.();
    const done = await pollTask(url, created.result.taskId, (x) => x.status === 'completed');
    assert.equal(done.result.content[0].text, 'Hello, chatty-task');
  });

  test("over the client's task limit it goes on as a plain call and is answered when it ends", async () => {
    const first = (await modernSend(url, callBody('slow', { gate: 'holds-the-slot' }))).json().result;
    assert.equal(first.resultType, 'task');
    const refusedBefore = tasks.stats().refusedLimit;
    const pending = modernSend(url, callBody('slow', { gate: 'over-limit' }), {}, { timeoutMs: 10_000 });
    await until(() => tasks.stats().refusedLimit > refusedBefore, 5_000, 'the store refused the task');
    probe.gates.get('over-limit')?.();
    const r = await pending;
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json().result.content[0].text, 'done over-limit', 'answered, not 429');
    probe.gates.get('holds-the-slot')?.();
    await pollTask(url, first.taskId, (x) => x.status === 'completed');
  });

  test('with the store unreachable it goes on as a plain call and is answered when it ends', async () => {
    rec.failCreate.on = true;
    try {
      const tried = rec.calls.get('create') ?? 0;
      const pending = modernSend(url, callBody('slow', { gate: 'store-down' }), {}, { timeoutMs: 10_000 });
      await until(() => (rec.calls.get('create') ?? 0) > tried, 5_000, 'a creation was tried');
      probe.gates.get('store-down')?.();
      const r = await pending;
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json().result.content[0].text, 'done store-down', 'answered, not 503');
    } finally {
      rec.failCreate.on = false;
    }
  });

  test('stats().tasks and /metrics count the tasks and the calls kept plain', () => {
    const t = s.handler.stats().tasks;
    // long, held-progress, streamed-task, chatty-task and holds-the-slot; over-limit and store-down
    // were kept plain.
    assert.deepEqual(t, { created: 5, refusedLimit: 1, answeredDirectly: 0, keptPlain: 2, running: 0 });
    const text = s.handler.metrics();
    assert.match(text, /^sluice_tasks_created_total 5$/m);
    assert.match(text, /^sluice_tasks_running 0$/m);
    assert.match(text, /^sluice_task_limit_refusals_total 1$/m);
    assert.match(text, /^sluice_task_calls_plain_total\{outcome="within-time"\} 0$/m);
    assert.match(text, /^sluice_task_calls_plain_total\{outcome="task-refused"\} 2$/m);
  });
});

describe('a call kept plain after its task was refused, on an endpoint with keepaliveMs (100 ms here)', () => {
  const rec = recordingStore();
  const tasks = createTasks({ tools: TASK_TOOLS, taskAfterMs: 50, pollIntervalMs: 50, store: rec.store });
  let url: string;
  before(async () => {
    const s = await serve({
      createServer: taskServer(probe),
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 100,
      tasks,
    });
    served.push(s);
    url = s.url;
  });

  test('its answer becomes an SSE stream kept alive with comments while the tool is silent; the result is its last event', async () => {
    rec.failCreate.on = true;
    const body = callBody('slow', { gate: 'kept-alive' });
    const r = await modernOpen(url, body);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/event-stream');
    await r.waitFor((x) => x.comments.length >= 2, 5_000, 'keepalive comments while the tool is silent');
    assert.deepEqual([...new Set(r.comments)], ['keepalive']);
    assert.equal(tasks.stats().keptPlain, 1, 'the task was refused, the call kept plain');
    probe.gates.get('kept-alive')?.();
    await r.finished(5_000, 'the result ends the stream');
    const messages = r.messages();
    assert.equal(messages.length, 1, JSON.stringify(messages));
    assert.equal(messages[0].id, body.id);
    assert.equal(messages[0].result.content[0].text, 'done kept-alive');
  });
});

describe('taskAfterMs: the option', () => {
  test('250 ms by default; 0 makes a quick call a task at once; out of range is refused', async () => {
    assert.equal(createTasks().options.taskAfterMs, 250);
    const url = await start(createTasks({ tools: TASK_TOOLS, taskAfterMs: 0, pollIntervalMs: 50 }));
    const r = await modernSend(url, callBody('slow', { gate: 'at-once', ms: 1 }));
    assert.equal(r.json().result.resultType, 'task', r.text);
    for (const bad of [-1, 1.5, 60_001, Number.NaN]) {
      assert.throws(() => createTasks({ taskAfterMs: bad }), InvalidOptionError, String(bad));
    }
    assert.equal(createTasks({ taskAfterMs: 60_000 }).options.taskAfterMs, 60_000);
  });
});
