// A benchmark server child for section (j), tasks: createMcpHandler hosting a v1 McpServer with an
// `echo` tool whose task policy is `optional` (so a client declaring the tasks extension gets a
// task, any other a plain call, from the same process), on the memory store (`memory`) or on the
// Redis given as argv[3] (`redis`, or `redis-kept`: on a link that can fail over, the writes kept to
// be sent again after one); at /quick the same with the default taskAfterMs. It reports its port,
// then answers `cpu`, `kept` (the kept writes' stats) and `exit` over IPC.
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import {
  createMcpHandler,
  createTasks,
  RedisTaskStore,
  registerSharedTools,
  sharedJsonSchemaValidator,
  sharedTool,
  type TaskStore,
} from '../../src/server/index.js';

const [kind, redisUrl] = process.argv.slice(2);

let redisStore: RedisTaskStore | undefined;

async function store(): Promise<TaskStore | undefined> {
  if (kind !== 'redis' && kind !== 'redis-kept') return undefined;
  const link = await connectNodeRedis({ url: redisUrl ?? '', commandTimeoutMs: 2000 });
  // `redis-kept`: the link says it can fail over (as a Sentinel or Cluster link does), so the store
  // keeps its recent writes to send them again after a failover (none comes here).
  const s = new RedisTaskStore(kind === 'redis-kept' ? { ...link, onFailover: () => () => undefined } : link);
  await s.start();
  redisStore = s;
  return s;
}

const validator = sharedJsonSchemaValidator();
const echo = sharedTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: 'text', text }],
}));
const taskStore = await store();
const benchServer = () => {
  const s = new McpServer({ name: 'bench', version: '1' }, { jsonSchemaValidator: validator });
  registerSharedTools(s, [echo]);
  return s;
};
const handler = createMcpHandler({
  createServer: benchServer,
  tasks: createTasks({
    tools: { echo: 'optional' },
    // Every declared echo a task at once: /mcp measures the task path.
    taskAfterMs: 0,
    pollIntervalMs: 1,
    ...(taskStore === undefined ? {} : { store: taskStore }),
  }),
});
// /quick: the default taskAfterMs (250 ms), where an echo this quick is answered as a plain call.
const quick = createMcpHandler({
  createServer: benchServer,
  tasks: createTasks({ tools: { echo: 'optional' }, pollIntervalMs: 1 }),
});
const srv = createServer((req, res) => (req.url === '/quick' ? quick : handler)(req, res)).listen(
  0,
  '127.0.0.1',
  () => {
    const a = srv.address();
    process.send?.({ port: typeof a === 'object' && a !== null ? a.port : 0 });
  },
);
process.on('message', (m: unknown) => {
  if (m === 'exit') process.exit(0);
  if (m === 'kept') process.send?.({ kept: redisStore?.recentWrites() ?? null });
  if (m === 'cpu') {
    const u = process.cpuUsage();
    process.send?.({ cpu: u.user + u.system });
  }
});
