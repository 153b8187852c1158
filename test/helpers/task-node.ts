/**
 * One instance of a tasks cluster as a child process (for kill -9): serves the task test tools
 * (helpers/tasks.ts) with a RedisTaskStore on the Redis given as argv[2], lease argv[3] ms, on
 * 127.0.0.1:0, and prints `task-node <url>` once listening. Run by task-cluster.test.ts with
 * SLUICE_TASK_NODE=1; without it (the test runner loads every file under test/) it does nothing.
 */
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import { createTasks, RedisTaskStore, serve } from '../../src/server/index.js';
import { newProbe, TASK_TOOLS, taskServer } from './tasks.js';

const [redisUrl, lease] = process.argv.slice(2);
if (process.env['SLUICE_TASK_NODE'] === '1') await main();

async function main(): Promise<void> {
  const link = await connectNodeRedis({ url: redisUrl ?? '', commandTimeoutMs: 2000 });
  const store = new RedisTaskStore(link);
  await store.start();
  const served = await serve({
    createServer: taskServer(newProbe()),
    port: 0,
    host: '127.0.0.1',
    keepaliveMs: 0,
    tasks: createTasks({
      taskAfterMs: 0,
      store,
      tools: TASK_TOOLS,
      leaseMs: Number(lease ?? 1000),
      pollIntervalMs: 50,
    }),
  });
  process.stdout.write(`task-node ${served.url}\n`);
}
