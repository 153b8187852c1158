/**
 * `sdkTaskStore()` on the Redis store: two Sluice instances, each hosting an SDK v1 `McpServer`
 * whose own task support keeps its tasks in one real redis-server (skipped loudly without one),
 * driven by the SDK v1 client's experimental task API. A finished task's result is read, and
 * listed, through the other instance after the one that ran it closed (the principal's new
 * session there); a task running on A is cancelled through B (A's work then cannot store its
 * result); another principal sees nothing; a task whose instance stopped renewing its lease reads
 * `failed` with the owner-lost error, never `working` forever.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import {
  OWNER_LOST,
  RedisTaskStore,
  type Served,
  type SluiceSdkTaskStore,
  sdkTaskStore,
  serve,
} from '../../src/server/index.js';
import { until } from '../helpers/http.js';
import { findRedis, type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';
import {
  newSdkJobProbe,
  type SdkJobProbe,
  sdkTaskClient,
  sdkTaskServer,
  startJob,
  textOf,
} from '../helpers/sdk-tasks.js';

const TOKENS: Record<string, string> = { 'alice-token-0001': 'alice', 'bob-token-000001': 'bob' };
const ALICE = 'alice-token-0001';
const BOB = 'bob-token-000001';

describe('sdkTaskStore on Redis: SDK v1 tasks any instance answers for', () => {
  let redis: Redis | undefined;
  const links: RedisLink[] = [];
  const clients: Client[] = [];
  const instances: { served: Served; store: SluiceSdkTaskStore; closed: boolean }[] = [];

  async function instance(probe: SdkJobProbe, leaseMs = 3000) {
    const link = await connectNodeRedis({ url: redis?.url ?? '', commandTimeoutMs: 2000 });
    links.push(link);
    const store = sdkTaskStore(new RedisTaskStore(link), { leaseMs });
    const served = await serve({
      createServer: sdkTaskServer(store, probe),
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 0,
      authenticate: (req) => {
        const h = req.headers.authorization;
        const p = h === undefined ? undefined : TOKENS[h.replace(/^Bearer /, '')];
        return p === undefined ? null : { principal: p };
      },
      onSessionStart: store.sessionStarted,
      onSessionEnd: store.sessionEnded,
    });
    const it = { served, store, closed: false };
    instances.push(it);
    return it;
  }

  async function client(url: string, token: string): Promise<Client> {
    const c = await sdkTaskClient(url, token);
    clients.push(c);
    return c;
  }

  before(async () => {
    if (findRedis() !== undefined) redis = await startRedis();
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const i of instances) {
      i.store.close();
      if (!i.closed) await i.served.close();
    }
    for (const l of links) await l.close();
    await redis?.stop();
  });

  test('needs redis-server', (t) => {
    skipWithoutRedis(t);
  });
  if (findRedis() === undefined) return;

  test('a result outlives the instance that ran it: read and listed through the other', async () => {
    const probe = newSdkJobProbe();
    const a = await instance(probe);
    const b = await instance(probe);
    const onA = await client(a.served.url, ALICE);
    const id = await startJob(onA, { n: 1, gate: 'r1' });
    const onB = await client(b.served.url, ALICE);
    assert.equal((await onB.experimental.tasks.getTask(id)).status, 'working', 'visible at once on B');
    probe.gates.get('r1')?.();
    assert.equal(textOf(await onA.experimental.tasks.getTaskResult(id, CallToolResultSchema)), 'done 1');
    await onA.close();
    await a.served.close();
    a.closed = true;
    a.store.close();
    const later = await client(b.served.url, ALICE);
    const t = await later.experimental.tasks.getTask(id);
    assert.equal(t.status, 'completed');
    assert.equal(textOf(await later.experimental.tasks.getTaskResult(id, CallToolResultSchema)), 'done 1');
    assert.ok((await later.experimental.tasks.listTasks()).tasks.some((x) => x.taskId === id));
    const bob = await client(b.served.url, BOB);
    await assert.rejects(bob.experimental.tasks.getTask(id), /not found/i);
    await assert.rejects(bob.experimental.tasks.getTaskResult(id, CallToolResultSchema), /not found/i);
    assert.deepEqual((await bob.experimental.tasks.listTasks()).tasks, []);
  });

  test('a task running on A is cancelled through B; A cannot store its result after', async () => {
    const probe = newSdkJobProbe();
    const a = await instance(probe);
    const b = await instance(probe);
    const onA = await client(a.served.url, ALICE);
    const onB = await client(b.served.url, ALICE);
    const id = await startJob(onA, { n: 2, gate: 'c1' });
    const ack = await onB.experimental.tasks.cancelTask(id);
    assert.equal(ack.status, 'cancelled');
    probe.gates.get('c1')?.();
    await until(() => probe.storeErrors.has('c1'), 5000, "A's work tried to store its result");
    assert.equal((await onA.experimental.tasks.getTask(id)).status, 'cancelled');
  });

  test('an instance that stops renewing: its task reads failed (owner lost), through the other', async () => {
    const probe = newSdkJobProbe();
    const a = await instance(probe, 600);
    const b = await instance(probe);
    const onA = await client(a.served.url, ALICE);
    const id = await startJob(onA, { n: 3, gate: 'd1' });
    const onB = await client(b.served.url, ALICE);
    await new Promise((r) => setTimeout(r, 900));
    assert.equal((await onB.experimental.tasks.getTask(id)).status, 'working', 'A renews its lease');
    a.store.close(); // as a dead instance would: no more renewals
    const deadline = Date.now() + 5000;
    let t = await onB.experimental.tasks.getTask(id);
    while (t.status === 'working' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      t = await onB.experimental.tasks.getTask(id);
    }
    assert.equal(t.status, 'failed', 'the lease lapsed');
    assert.equal(t.statusMessage, OWNER_LOST.message);
    await assert.rejects(onB.experimental.tasks.getTaskResult(id, CallToolResultSchema), /lease lapsed/);
    probe.gates.get('d1')?.();
    await until(() => probe.storeErrors.has('d1'), 5000, "A's late result is refused");
  });
});
