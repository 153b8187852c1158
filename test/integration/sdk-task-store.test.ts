/**
 * `sdkTaskStore()` on the memory store: an SDK v1 `McpServer` whose own (experimental, 2025-11-25)
 * task support keeps its tasks in Sluice's store, driven by the SDK v1 client's experimental task
 * API over Sluice's transport. A task's life (created with the requested TTL within the bound,
 * polled, its result through `tasks/result`), a failed result kept, listing with cursors, cancel
 * (the running work's later result refused), another session's task invisible and hostile ids
 * not found, the live-task bound per owner, and tasks bound to the principal across sessions.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  MemoryTaskStore,
  type Served,
  type SluiceSdkTaskStore,
  sdkTaskStore,
  serve,
} from '../../src/server/index.js';
import { until } from '../helpers/http.js';
import { newSdkJobProbe, sdkTaskClient, sdkTaskServer, startJob, textOf } from '../helpers/sdk-tasks.js';

const TOKENS: Record<string, string> = { 'alice-token-0001': 'alice', 'bob-token-000001': 'bob' };

function tokenAuth(req: { headers: Record<string, string | string[] | undefined> }) {
  const h = req.headers['authorization'];
  const p = typeof h === 'string' ? TOKENS[h.replace(/^Bearer /, '')] : undefined;
  return p === undefined ? null : { principal: p };
}

describe('sdkTaskStore in stateless mode (no session: the SDK passes none)', () => {
  const probe = newSdkJobProbe();
  const clients: Client[] = [];
  const closing: (() => unknown)[] = [];
  after(async () => {
    for (const c of clients) await c.close();
    for (const close of closing) await close();
  });

  async function client(url: string, token?: string): Promise<Client> {
    const c = await sdkTaskClient(url, token);
    clients.push(c);
    return c;
  }

  /** A stateless, authenticated server of `createServer`, closed (with `store`) after the block. */
  async function statelessServe(
    store: { close(): void },
    createServer: Parameters<typeof serve>[0]['createServer'],
  ): Promise<{ url: string }> {
    const s = await serve({
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 0,
      stateless: true,
      authenticate: tokenAuth,
      createServer,
    });
    closing.push(
      () => s.close(),
      () => store.close(),
    );
    return s;
  }

  test("unbound: tasks/list is refused, since it would list every caller's tasks", async () => {
    const store = sdkTaskStore(new MemoryTaskStore());
    const s = await statelessServe(store, sdkTaskServer(store, probe));
    const alice = await client(s.url, 'alice-token-0001');
    await startJob(alice, { n: 21, gate: 'sl1', ms: 0 });
    const bob = await client(s.url, 'bob-token-000001');
    await assert.rejects(bob.experimental.tasks.listTasks(), /tasks\/list needs/);
  });

  test("bound per server (forServer): each principal's tasks, and only them, by id and by list", async () => {
    const store = sdkTaskStore(new MemoryTaskStore());
    const s = await statelessServe(store, (ctx) => sdkTaskServer(store.forServer(ctx), probe)(ctx));
    const alice = await client(s.url, 'alice-token-0001');
    const id = await startJob(alice, { n: 22, gate: 'sl2', ms: 0 });
    assert.equal(textOf(await alice.experimental.tasks.getTaskResult(id, CallToolResultSchema)), 'done 22');
    const again = await client(s.url, 'alice-token-0001');
    assert.deepEqual(
      (await again.experimental.tasks.listTasks()).tasks.map((t) => t.taskId),
      [id],
    );
    const bob = await client(s.url, 'bob-token-000001');
    await assert.rejects(bob.experimental.tasks.getTask(id), /not found/i);
    await assert.rejects(bob.experimental.tasks.getTaskResult(id, CallToolResultSchema), /not found/i);
    await assert.rejects(bob.experimental.tasks.cancelTask(id), /not found/i);
    assert.deepEqual((await bob.experimental.tasks.listTasks()).tasks, []);
  });
});

describe('sdkTaskStore: SDK v1 task support on the memory store', () => {
  const probe = newSdkJobProbe();
  const stores: SluiceSdkTaskStore[] = [];
  const clients: Client[] = [];
  let anon: Served;
  let authed: Served;

  async function client(url: string, token?: string): Promise<Client> {
    const c = await sdkTaskClient(url, token);
    clients.push(c);
    return c;
  }

  before(async () => {
    const a = sdkTaskStore(new MemoryTaskStore(), { pageSize: 2, maxLivePerOwner: 4, maxTtlMs: 60_000 });
    const b = sdkTaskStore(new MemoryTaskStore(), { pageSize: 2 });
    stores.push(a, b);
    const base = { port: 0, host: '127.0.0.1', keepaliveMs: 0 } as const;
    anon = await serve({ ...base, createServer: sdkTaskServer(a, probe) });
    authed = await serve({
      ...base,
      createServer: sdkTaskServer(b, probe),
      authenticate: (req) => {
        const h = req.headers.authorization;
        const p = h === undefined ? undefined : TOKENS[h.replace(/^Bearer /, '')];
        return p === undefined ? null : { principal: p };
      },
      onSessionStart: b.sessionStarted,
      onSessionEnd: b.sessionEnded,
    });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await anon.close();
    await authed.close();
    for (const s of stores) s.close();
  });

  test('a task: created with the TTL asked for (within the bound), polled, its result', async () => {
    const c = await client(anon.url);
    const id = await startJob(c, { n: 1, gate: 'm1' }, 30_000);
    const t = await c.experimental.tasks.getTask(id);
    assert.equal(t.status, 'working');
    assert.equal(t.ttl, 30_000);
    assert.equal(t.pollInterval, 100, 'the 50 ms asked for is raised to minPollIntervalMs');
    assert.ok(Date.parse(t.createdAt) <= Date.now());
    const capped = await startJob(c, { n: 2, gate: 'm2', ms: 0 }, 10 * 24 * 3600_000);
    assert.equal((await c.experimental.tasks.getTask(capped)).ttl, 60_000, 'the ttl asked for is capped');
    await until(() => probe.gates.has('m1'), 5000, 'job m1 running');
    probe.gates.get('m1')?.();
    // tasks/result blocks until the task is final (the SDK polls the store at pollInterval).
    const r = await c.experimental.tasks.getTaskResult(id, CallToolResultSchema);
    assert.equal(textOf(r), 'done 1');
    const done = await c.experimental.tasks.getTask(id);
    assert.equal(done.status, 'completed');
    assert.ok(Date.parse(done.lastUpdatedAt) >= Date.parse(done.createdAt));
  });

  test('a failed result is kept for tasks/result', async () => {
    const c = await client(anon.url);
    const id = await startJob(c, { n: 3, gate: 'm3', ms: 0, fail: true });
    const r = await c.experimental.tasks.getTaskResult(id, CallToolResultSchema);
    assert.equal(textOf(r), 'bad 3');
    assert.equal(r.isError, true);
    assert.equal((await c.experimental.tasks.getTask(id)).status, 'failed');
  });

  test('listing pages through this session only; a bad cursor is refused', async () => {
    const c = await client(anon.url);
    const ids = [
      await startJob(c, { n: 4, gate: 'l1', ms: 0 }),
      await startJob(c, { n: 5, gate: 'l2', ms: 0 }),
      await startJob(c, { n: 6, gate: 'l3', ms: 0 }),
    ];
    const first = await c.experimental.tasks.listTasks();
    assert.equal(first.tasks.length, 2);
    assert.ok(first.nextCursor !== undefined);
    const second = await c.experimental.tasks.listTasks(first.nextCursor);
    assert.equal(second.nextCursor, undefined);
    assert.deepEqual(
      [...first.tasks, ...second.tasks].map((t) => t.taskId),
      ids,
    );
    await assert.rejects(c.experimental.tasks.listTasks('not-a-cursor-of-this-session'), /Invalid cursor/);
    const other = await client(anon.url);
    assert.deepEqual(
      (await other.experimental.tasks.listTasks()).tasks,
      [],
      "another session's tasks are not listed",
    );
  });

  test("cancel: the task is cancelled, the running work's result is refused", async () => {
    const c = await client(anon.url);
    const id = await startJob(c, { n: 7, gate: 'c1' });
    const ack = await c.experimental.tasks.cancelTask(id);
    assert.equal(ack.status, 'cancelled');
    assert.equal(ack.statusMessage, 'Client cancelled task execution.');
    probe.gates.get('c1')?.();
    await until(() => probe.storeErrors.has('c1'), 5000, 'the work tried to store its result');
    assert.match(probe.storeErrors.get('c1') ?? '', /terminal status 'cancelled'/);
    assert.equal((await c.experimental.tasks.getTask(id)).status, 'cancelled');
    await assert.rejects(c.experimental.tasks.cancelTask(id), /terminal status/);
  });

  test("another session's task, and hostile ids, are not found", async () => {
    const mine = await client(anon.url);
    const theirs = await client(anon.url);
    const id = await startJob(mine, { n: 8, gate: 'o1', ms: 0 });
    await assert.rejects(theirs.experimental.tasks.getTask(id), /not found/i);
    await assert.rejects(theirs.experimental.tasks.getTaskResult(id, CallToolResultSchema), /not found/i);
    await assert.rejects(theirs.experimental.tasks.cancelTask(id), /not found/i);
    for (const hostile of ['../../etc/passwd', 'x', 'A'.repeat(5000), '{sl:task}', '__proto__']) {
      await assert.rejects(mine.experimental.tasks.getTask(hostile), /not found/i, hostile.slice(0, 20));
      await assert.rejects(mine.experimental.tasks.cancelTask(hostile), /not found/i);
    }
    assert.equal((await mine.experimental.tasks.getTask(id)).taskId, id);
  });

  test('unfinished tasks are bounded per owner', async () => {
    const c = await client(anon.url);
    for (let i = 0; i < 4; i++) await startJob(c, { n: 9, gate: `b${i}` });
    // The SDK's McpServer turns the store's refusal into a tool error (isError) even for a
    // task-augmented call, which the SDK client then rejects as no CreateTaskResult.
    await assert.rejects(startJob(c, { n: 9, gate: 'b4' }), /Invalid task creation result/);
    const first = await c.experimental.tasks.listTasks();
    const second = await c.experimental.tasks.listTasks(first.nextCursor);
    assert.equal(second.nextCursor, undefined);
    assert.equal(first.tasks.length + second.tasks.length, 4, 'the fifth was not created');
    for (let i = 0; i < 4; i++) probe.gates.get(`b${i}`)?.();
  });

  test("authenticated: the principal's other sessions find its tasks, another principal's do not", async () => {
    const a1 = await client(authed.url, 'alice-token-0001');
    const id = await startJob(a1, { n: 10, gate: 'p1', ms: 0 });
    await a1.experimental.tasks.getTaskResult(id, CallToolResultSchema);
    const a2 = await client(authed.url, 'alice-token-0001');
    assert.equal(textOf(await a2.experimental.tasks.getTaskResult(id, CallToolResultSchema)), 'done 10');
    assert.deepEqual(
      (await a2.experimental.tasks.listTasks()).tasks.map((t) => t.taskId),
      [id],
    );
    const bob = await client(authed.url, 'bob-token-000001');
    await assert.rejects(bob.experimental.tasks.getTask(id), /not found/i);
    assert.deepEqual((await bob.experimental.tasks.listTasks()).tasks, []);
  });
});
