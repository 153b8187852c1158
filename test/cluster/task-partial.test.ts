/**
 * Partial output of a running task through `tasks/get`: a tool using partialResults sends deltas,
 * then waits for its gate; while it waits, `tasks/get` carries the text so far under
 * `_meta["dev.sluice/partialOutput"]`, on the memory store (one instance) and on the Redis store read
 * through another instance than the one running it. The bound (`maxPartialBytes`) keeps the first
 * characters and marks the text cut; once completed, the result replaces it. The Redis half is
 * skipped loudly without redis-server.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { META_TASK_PARTIAL } from '../../src/jsonrpc/meta-keys.js';
import {
  type CreateServer,
  createTasks,
  partialResults,
  RedisTaskStore,
  type Served,
  serve,
  type TaskStore,
} from '../../src/server/index.js';
import type { Loose } from '../helpers/http.js';
import { findRedis, type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';
import { createTask, pollTask } from '../helpers/tasks.js';

/** Gates of running `spell` calls, by name. */
const gates = new Map<string, () => void>();

const spellServer: CreateServer = () => {
  const server = new McpServer({ name: 'partial-tasks', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'spell',
    { inputSchema: { gate: z.string(), words: z.number() } },
    async ({ gate, words }, extra) => {
      const out = partialResults(extra);
      let full = '';
      for (let i = 0; i < words; i++) {
        full += `w${i} `;
        await out.text(`w${i} `);
      }
      await new Promise<void>((resolve) => gates.set(gate, resolve));
      gates.delete(gate);
      return { content: [{ type: 'text', text: full }] };
    },
  );
  return server as unknown as ReturnType<CreateServer>;
};

const partialOf = (t: Loose): { text: string; truncated: boolean } | undefined =>
  t._meta?.[META_TASK_PARTIAL];

async function instance(served: Served[], store?: TaskStore, maxPartialBytes?: number): Promise<Served> {
  const s = await serve({
    createServer: spellServer,
    port: 0,
    host: '127.0.0.1',
    keepaliveMs: 0,
    tasks: createTasks({
      taskAfterMs: 0,
      tools: { spell: 'optional' },
      pollIntervalMs: 50,
      ...(store === undefined ? {} : { store }),
      ...(maxPartialBytes === undefined ? {} : { maxPartialBytes }),
    }),
  });
  served.push(s);
  return s;
}

/** Runs `spell` as a task on `run`, reads it through `read`: the partial text, cut, then the result. */
async function partialThenResult(run: Served, read: Served, gate: string): Promise<void> {
  const words = 5;
  const full = 'w0 w1 w2 w3 w4 ';
  const { taskId } = await createTask(run.url, 'spell', { gate, words });
  const working = await pollTask(read.url, taskId, (t) => partialOf(t)?.text === full, 10_000);
  assert.equal(working.status, 'working');
  assert.deepEqual(partialOf(working), { text: full, truncated: false });
  gates.get(gate)?.();
  const done = await pollTask(read.url, taskId, (t) => t.status === 'completed', 10_000);
  assert.equal(done.result.content[0].text, full);
  assert.equal(partialOf(done), undefined, 'the result replaces the partial text');
}

describe('partial output of a running task in tasks/get', () => {
  const served: Served[] = [];
  const links: RedisLink[] = [];
  let redis: Redis | undefined;
  after(async () => {
    for (const resolve of gates.values()) resolve();
    for (const s of served) await s.close();
    for (const l of links) await l.close();
    await redis?.stop();
  });

  test('memory store: the text so far while working, the result once completed', async () => {
    const a = await instance(served);
    await partialThenResult(a, a, 'mem');
  });

  test('memory store: maxPartialBytes keeps the first characters and marks the text cut', async () => {
    const a = await instance(served, undefined, 7);
    const { taskId } = await createTask(a.url, 'spell', { gate: 'cut', words: 5 });
    const t = await pollTask(a.url, taskId, (x) => partialOf(x)?.truncated === true, 10_000);
    assert.deepEqual(partialOf(t), { text: 'w0 w1 w', truncated: true });
    gates.get('cut')?.();
    const done = await pollTask(a.url, taskId, (x) => x.status === 'completed', 10_000);
    assert.equal(done.result.content[0].text, 'w0 w1 w2 w3 w4 ', 'the result has all of it');
  });

  test('Redis store: the text so far read through another instance', async (t) => {
    if (skipWithoutRedis(t) || findRedis() === undefined) return;
    redis = await startRedis();
    const store = async (): Promise<RedisTaskStore> => {
      const link = await connectNodeRedis({ url: redis?.url ?? '', commandTimeoutMs: 2000 });
      links.push(link);
      const s = new RedisTaskStore(link);
      await s.start();
      return s;
    };
    const a = await instance(served, await store());
    const b = await instance(served, await store());
    await partialThenResult(a, b, 'redis');
  });
});
