/**
 * The 2025-11-25 experimental tasks Sluice serves (SEP-1686), on a shared Redis task store: two
 * in-process instances; a task created in a session on A is read, listed, waited for
 * (`tasks/result` blocks on B while the tool runs on A) and cancelled (reaching the tool on A,
 * over pub/sub) through the same principal's session on B, and its result is still read through B
 * after A closed; another principal sees nothing. A tool that waits on the client's answer for
 * longer than its lease reads input_required meanwhile, and is neither failed nor aborted for its
 * lease, not even when the process running it stalls past the lease. Skipped loudly without
 * redis-server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { createTasks, RedisTaskStore, type Served, serve } from '../../src/server/index.js';
import { until } from '../helpers/http.js';
import { findRedis, type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';
import {
  elicitingClient,
  sdkTaskClient,
  serveAsksTool,
  startToolTask,
  taskResultText,
  textOf,
} from '../helpers/sdk-tasks.js';
import { stall } from '../helpers/stall.js';
import { newProbe, TASK_TOOLS, type ToolProbe, taskServer } from '../helpers/tasks.js';

const TOKENS: Record<string, string> = { 'alice-token-0001': 'alice', 'bob-token-000001': 'bob' };
const ALICE = 'alice-token-0001';

describe('2025-11-25 tasks served by Sluice on Redis: any instance answers', () => {
  let redis: Redis | undefined;
  const links: RedisLink[] = [];
  const clients: Client[] = [];
  const servers: { s: Served; closed: boolean }[] = [];

  async function instance(probe: ToolProbe) {
    const link = await connectNodeRedis({ url: redis?.url ?? '', commandTimeoutMs: 2000 });
    links.push(link);
    const store = new RedisTaskStore(link);
    await store.start();
    const s = await serve({
      createServer: taskServer(probe),
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 0,
      tasks: createTasks({ taskAfterMs: 0, store, tools: TASK_TOOLS, pollIntervalMs: 50, leaseMs: 3000 }),
      authenticate: (req) => {
        const h = req.headers.authorization;
        const p = h === undefined ? undefined : TOKENS[h.replace(/^Bearer /, '')];
        return p === undefined ? null : { principal: p };
      },
    });
    const it = { s, closed: false };
    servers.push(it);
    return it;
  }

  async function client(url: string, token = ALICE): Promise<Client> {
    const c = await sdkTaskClient(url, token);
    clients.push(c);
    return c;
  }

  before(async () => {
    if (findRedis() !== undefined) redis = await startRedis();
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const it of servers) if (!it.closed) await it.s.close();
    for (const l of links) await l.close();
    await redis?.stop();
  });

  test('needs redis-server', (t) => {
    skipWithoutRedis(t);
  });
  if (findRedis() === undefined) return;

  /**
   * A Redis-backed server whose tool asks the client and waits for its reply, held until `answer()`,
   * on a lease of `leaseMs`; once the request has reached the client.
   */
  async function waitingOnClient(leaseMs: number) {
    const link = await connectNodeRedis({ url: redis?.url ?? '', commandTimeoutMs: 2000 });
    links.push(link);
    const store = new RedisTaskStore(link);
    await store.start();
    const aborted: string[] = [];
    const a = await serveAsksTool(
      async (_server, extra) => {
        extra.signal.addEventListener('abort', () => aborted.push('asks'));
        const r = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: { message: 'name?', requestedSchema: { type: 'object', properties: {} } },
          },
          ElicitResultSchema,
        );
        return { content: [{ type: 'text', text: `got ${r.action}` }] };
      },
      { store, leaseMs },
    );
    servers.push({ s: a, closed: false });
    let answer: (() => void) | undefined;
    const answered = new Promise<void>((r) => {
      answer = r;
    });
    const seen: string[] = [];
    const c = await elicitingClient(a.url, async (req) => {
      const meta = req.params._meta as Record<string, { taskId?: string }> | undefined;
      seen.push(meta?.['io.modelcontextprotocol/related-task']?.taskId ?? 'none');
      await answered;
      return { action: 'accept', content: {} };
    });
    clients.push(c);
    const id = await startToolTask(c, 'asks', {});
    await until(() => seen.length === 1, 10_000, 'the request reached the client');
    assert.deepEqual(seen, [id]);
    return { c, id, aborted, answer: () => answer?.() };
  }

  test("a tool waiting on the client's answer longer than its lease: input_required meanwhile, then completed", async () => {
    const LEASE = 600;
    const { c, id, aborted, answer } = await waitingOnClient(LEASE);
    // Three leases long, while the tool waits on the client's reply (read from the Redis record).
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, LEASE / 2));
      const status = (await c.experimental.tasks.getTask(id)).status;
      assert.equal(status, 'input_required', `after ${((i + 1) * LEASE) / 2} ms`);
    }
    answer();
    assert.equal(await taskResultText(c, id), 'got accept');
    assert.equal((await c.experimental.tasks.getTask(id)).status, 'completed');
    assert.deepEqual(aborted, [], 'the tool was never aborted for its lease');
  });

  test('the process running the task stalls past its lease: the late renewal keeps it, nothing read it lapsed', async () => {
    const LEASE = 600;
    const { c, id, aborted, answer } = await waitingOnClient(LEASE);
    // The event loop held for twice the lease (a long GC, a starved CPU): no renewal meanwhile.
    stall(2 * LEASE);
    // The renewal timer, overdue, fires before anything the stall held back reads the task.
    await new Promise((r) => setTimeout(r, 0));
    assert.equal((await c.experimental.tasks.getTask(id)).status, 'input_required');
    answer();
    assert.equal(await taskResultText(c, id), 'got accept');
    assert.deepEqual(aborted, [], 'the tool was never aborted for its lease');
  });

  test('created on A: read, listed, waited for and cancelled through B; the result outlives A', async () => {
    const pa = newProbe();
    const a = await instance(pa);
    const b = await instance(newProbe());
    const onA = await client(a.s.url);
    const onB = await client(b.s.url);

    const cancelled = await startToolTask(onA, 'slow', { gate: 'x1' });
    await until(() => pa.gates.has('x1'), 5000, 'x1 running on A');
    assert.equal((await onB.experimental.tasks.getTask(cancelled)).status, 'working');
    assert.equal((await onB.experimental.tasks.cancelTask(cancelled)).status, 'cancelled');
    await until(() => pa.aborted.includes('x1'), 5000, "A's tool saw its AbortSignal");

    const id = await startToolTask(onA, 'slow', { gate: 'x2' });
    await until(() => pa.gates.has('x2'), 5000, 'x2 running on A');
    const waiting = onB.experimental.tasks.getTaskResult(id, CallToolResultSchema);
    pa.gates.get('x2')?.();
    assert.equal(textOf(await waiting), 'done x2', 'tasks/result on B blocked until A finished');
    assert.deepEqual(
      (await onB.experimental.tasks.listTasks()).tasks.map((t) => [t.taskId, t.status]),
      [
        [cancelled, 'cancelled'],
        [id, 'completed'],
      ],
    );

    await onA.close();
    await a.s.close();
    a.closed = true;
    const later = await client(b.s.url);
    assert.equal(textOf(await later.experimental.tasks.getTaskResult(id, CallToolResultSchema)), 'done x2');
    const bob = await client(b.s.url, 'bob-token-000001');
    await assert.rejects(bob.experimental.tasks.getTask(id), /unknown taskId/);
    assert.deepEqual((await bob.experimental.tasks.listTasks()).tasks, []);
  });
});
