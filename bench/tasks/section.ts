// Section (j) of `npm run bench`: tasks (issue 23, docs/tasks.md). (1) Server CPU per echo in one
// server process (bench/tasks/server.ts, memory store): a plain 2026-07-28 `tools/call` echo
// against a task-augmented one (the CreateTaskResult, the run, and `tasks/get` polls until it is
// completed), C=16, interleaved over repetitions (medians); target ≤ 2x. (2) `tasks/get` latency,
// one request at a time, of a completed task: on the memory store, and on two instances sharing a
// private redis-server, read through the instance that ran it (owner-local) and through the other;
// target p50 ≤ 1 ms on loopback Redis. (3) A task echo on Redis with its writes kept to be sent
// again after a failover, against without (cluster/recent-writes.ts). Every loop is bounded in count.
import { type ChildProcess, fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../../test/helpers/redis.js';

const C = 16;
const EXT = 'io.modelcontextprotocol/tasks';
const PLAIN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const TASK_META = {
  ...PLAIN_META,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } },
};

interface Child {
  proc: ChildProcess;
  port: number;
  cpu(): Promise<number>;
}

async function start(args: string[]): Promise<Child> {
  const proc = fork(fileURLToPath(new URL('./server.js', import.meta.url)), args);
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('message', (m) => resolve((m as { port: number }).port));
    proc.once('error', reject);
    setTimeout(() => reject(new Error(`tasks bench ${args[0]}: no port within 10 s`)), 10_000).unref();
  });
  const cpu = (): Promise<number> =>
    new Promise((resolve) => {
      proc.once('message', (r) => resolve((r as { cpu: number }).cpu));
      proc.send('cpu');
    });
  return { proc, port, cpu };
}

async function stop(c: Child): Promise<void> {
  c.proc.send('exit');
  await new Promise((r) => c.proc.once('exit', r));
}

type Json = { result?: Record<string, unknown>; error?: unknown };

function post(
  port: number,
  agent: Agent,
  method: string,
  params: Record<string, unknown>,
  name: string,
  path = '/mcp',
) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  return new Promise<Json>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': method,
          'mcp-name': name,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let t = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          t += c;
        });
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(t) as Json) : reject(new Error(t))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The three cells: `plain` (no extension declared), `task` (declared, at /mcp where every declared
 * echo is a task), `direct` (declared, at /quick: the default taskAfterMs answers it as a plain call).
 */
type Cell = 'plain' | 'task' | 'direct';

const call = (port: number, agent: Agent, cell: Cell) =>
  post(
    port,
    agent,
    'tools/call',
    { name: 'echo', arguments: { text: 'hi' }, _meta: cell === 'plain' ? PLAIN_META : TASK_META },
    'echo',
    cell === 'direct' ? '/quick' : '/mcp',
  );
const get = (port: number, agent: Agent, taskId: string) =>
  post(port, agent, 'tasks/get', { taskId, _meta: TASK_META }, taskId);

/** One echo; as a task: created, then polled until completed (bounded). */
async function once(port: number, agent: Agent, cell: Cell): Promise<number> {
  const r = await call(port, agent, cell);
  if (cell !== 'task') {
    if (r.result?.['resultType'] === 'task') throw new Error(`a ${cell} echo became a task`);
    return 0;
  }
  const taskId = r.result?.['taskId'];
  if (typeof taskId !== 'string') throw new Error(`no task: ${JSON.stringify(r)}`);
  for (let polls = 1; polls <= 1000; polls++) {
    const t = await get(port, agent, taskId);
    if (t.result?.['status'] === 'completed') return polls;
    if (t.result?.['status'] !== 'working') throw new Error(`task ended ${JSON.stringify(t)}`);
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`task ${taskId} not completed after 1000 polls`);
}

async function cpuPer(c: Child, cell: Cell, n: number): Promise<{ us: number; polls: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: C });
  let left = n;
  let polls = 0;
  const batch = () =>
    Promise.all(
      Array.from({ length: C }, async () => {
        while (left-- > 0) {
          const p = await once(c.port, agent, cell);
          polls += p;
        }
      }),
    );
  const c0 = await c.cpu();
  try {
    await batch();
  } finally {
    agent.destroy();
  }
  // The cell's own tail (sockets closing, a last settle, a collection it started) lands in this
  // cell, not the next: without the pause, cells of one kind run twice in a row (the interleaved
  // order) measured 20-30 % apart.
  await new Promise((r) => setTimeout(r, 150));
  const c1 = await c.cpu();
  return { us: (c1 - c0) / n, polls: polls / n };
}

async function latency(port: number, taskId: string, n: number): Promise<{ p50: number; p99: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const xs: number[] = [];
  try {
    for (let i = 0; i < n + 50; i++) {
      const t0 = performance.now();
      const r = await get(port, agent, taskId);
      const dt = performance.now() - t0;
      if (r.result?.['status'] !== 'completed') throw new Error(`tasks/get: ${JSON.stringify(r)}`);
      if (i >= 50) xs.push(dt); // the first 50 warm the connection and the code paths
    }
  } finally {
    agent.destroy();
  }
  xs.sort((a, b) => a - b);
  const at = (q: number): number => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99) };
}

async function completedTask(port: number): Promise<string> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const r = await call(port, agent, 'task');
    const taskId = String(r.result?.['taskId']);
    await once(port, agent, 'plain');
    for (let i = 0; i < 1000; i++) {
      if ((await get(port, agent, taskId)).result?.['status'] === 'completed') return taskId;
      await new Promise((r) => setTimeout(r, 1));
    }
    throw new Error('the latency task never completed');
  } finally {
    agent.destroy();
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** What keeping the writes for a failover costs a task echo on Redis (cluster/recent-writes.ts). */
export interface KeptCost {
  /** Server CPU µs per task echo on Redis, writes not kept (a single Redis) and kept (Sentinel, Cluster). */
  plainUs: number;
  keptUs: number;
  /** Median over repetitions of kept ÷ not kept, the two cells back to back. */
  pairedRatio: number;
  /** Writes kept and their bytes after the first cell of `tasks` task echoes. */
  writes: number;
  bytes: number;
  tasks: number;
}

async function keptCost(
  plain: Child,
  kept: Child,
  calls: number,
  reps: number,
  log: (line: string) => void,
): Promise<KeptCost> {
  const us: { plain: number[]; kept: number[] } = { plain: [], kept: [] };
  // The kept child is fresh: after one cell it keeps exactly that cell's writes (well within a
  // minute and 16 MiB), so per task they are these over `calls`.
  for (const c of [plain, kept]) await cpuPer(c, 'task', calls);
  const stats = await new Promise<{ kept: number; bytes: number } | null>((resolve) => {
    kept.proc.once('message', (m) => resolve((m as { kept: { kept: number; bytes: number } | null }).kept));
    kept.proc.send('kept');
  });
  for (let rep = 0; rep < reps; rep++) {
    const order: ['plain' | 'kept', Child][] = [
      ['plain', plain],
      ['kept', kept],
    ];
    if (rep % 2 === 1) order.reverse();
    for (const [name, c] of order) {
      // As above: each measured cell after an unmeasured one of its own kind.
      await cpuPer(c, 'task', calls);
      const r = await cpuPer(c, 'task', calls);
      us[name].push(r.us);
      log(
        `(j) rep ${rep + 1}/${reps} Redis task echo, writes ${name === 'kept' ? 'kept' : 'not kept'}: ${r.us.toFixed(0)} µs`,
      );
    }
  }
  return {
    plainUs: median(us.plain),
    keptUs: median(us.kept),
    pairedRatio: median(us.kept.map((x, i) => x / (us.plain[i] ?? Number.NaN))),
    writes: stats?.kept ?? 0,
    bytes: stats?.bytes ?? 0,
    tasks: calls,
  };
}

export interface TasksBench {
  calls: number;
  reps: number;
  concurrency: number;
  /** Server CPU µs per echo, one entry per repetition. */
  cpuUs: Record<Cell, number[]>;
  median: Record<Cell, number>;
  /**
   * Median over repetitions of task ÷ plain within the repetition (the cells run back to back,
   * under the same machine load): steadier than a ratio of medians on a shared machine.
   */
  pairedRatio: number;
  /** The same for a declared echo answered within taskAfterMs (`direct`) ÷ plain. */
  directRatio: number;
  /** tasks/get polls per task echo (mean of the last repetition). */
  pollsPerTask: number;
  gets: number;
  /** tasks/get latency, ms (the Redis rows absent when no redis-server could start: `redisUnavailable`). */
  getMs: Partial<Record<'memory' | 'redisLocal' | 'redisOther', { p50: number; p99: number }>>;
  redisUnavailable?: string;
  /** A task echo on Redis with the writes kept for a failover against without (absent without Redis). */
  kept?: KeptCost;
}

export async function runTasks(
  quick: boolean,
  reps: number,
  log: (line: string) => void,
): Promise<TasksBench> {
  const calls = quick ? 1_000 : 3_000;
  const gets = quick ? 500 : 2_000;
  const cpu: TasksBench['cpuUs'] = { plain: [], task: [], direct: [] };
  let pollsPerTask = 0;
  const mem = await start(['memory']);
  let memoryGet: { p50: number; p99: number };
  try {
    // Warm both paths to steady state first: with a few hundred calls each, the first repetition
    // still paid for compilation (a plain echo measured 400 µs, then 150), and the median of three
    // moved with whichever path that landed on. Two cells' worth each, interleaved.
    const cells: Cell[] = ['plain', 'task', 'direct'];
    for (let i = 0; i < 2; i++) for (const cell of cells) await cpuPer(mem, cell, calls);
    for (let rep = 0; rep < reps; rep++) {
      // The order rotates with the repetition.
      for (const cell of [...cells.slice(rep % 3), ...cells.slice(0, rep % 3)]) {
        // Each measured cell follows an unmeasured cell of its own kind. A cell leaves garbage
        // that later collections pay for (a task echo far more than a plain one), and the 150 ms
        // pause does not settle it: measured after a cell of the other kind, a plain echo paid
        // part of the task echo's collections (107 -> 150 µs) and the ratio swung 1.3-2.1 with
        // the order. After a cell of its own kind a cell pays its own kind's steady-state debt.
        await cpuPer(mem, cell, calls);
        const r = await cpuPer(mem, cell, calls);
        cpu[cell].push(r.us);
        if (cell === 'task') pollsPerTask = r.polls;
        log(`(j) rep ${rep + 1}/${reps} ${cell} echo: ${r.us.toFixed(0)} µs server CPU`);
      }
    }
    memoryGet = await latency(mem.port, await completedTask(mem.port), gets);
  } finally {
    await stop(mem);
  }
  const out: TasksBench = {
    calls,
    reps,
    concurrency: C,
    cpuUs: cpu,
    median: { plain: median(cpu.plain), task: median(cpu.task), direct: median(cpu.direct) },
    pairedRatio: median(cpu.task.map((t, i) => t / (cpu.plain[i] ?? Number.NaN))),
    directRatio: median(cpu.direct.map((t, i) => t / (cpu.plain[i] ?? Number.NaN))),
    pollsPerTask,
    gets,
    getMs: { memory: memoryGet },
  };
  let redis: Awaited<ReturnType<typeof startRedis>>;
  try {
    redis = await startRedis();
  } catch (err) {
    // No redis-server here: the memory rows still count.
    out.redisUnavailable = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
    log(`(j) Redis rows unavailable: ${out.redisUnavailable}`);
    return out;
  }
  const a = await start(['redis', redis.url]);
  const b = await start(['redis', redis.url]);
  const k = await start(['redis-kept', redis.url]);
  let redisLocal: { p50: number; p99: number };
  let redisOther: { p50: number; p99: number };
  try {
    const taskId = await completedTask(a.port);
    redisLocal = await latency(a.port, taskId, gets);
    redisOther = await latency(b.port, taskId, gets);
    out.kept = await keptCost(a, k, calls, reps, log);
  } finally {
    await stop(a);
    await stop(b);
    await stop(k);
    await redis.stop();
  }
  out.getMs.redisLocal = redisLocal;
  out.getMs.redisOther = redisOther;
  log(
    `(j) tasks/get p50 memory ${memoryGet.p50.toFixed(2)} ms, Redis owner ${redisLocal.p50.toFixed(2)} ms, other ${redisOther.p50.toFixed(2)} ms`,
  );
  return out;
}

export function renderTasks(r: TasksBench): string {
  const ms = (x: { p50: number; p99: number } | undefined): string =>
    x === undefined
      ? `unavailable (${r.redisUnavailable ?? '?'}) | –`
      : `${x.p50.toFixed(2)} ms | ${x.p99.toFixed(2)} ms`;
  const { plain, task, direct } = r.median;
  return [
    '## (j) Tasks (io.modelcontextprotocol/tasks)',
    '',
    `Server CPU per 2026-07-28 echo, one process, memory store, C=${r.concurrency}, ${r.calls} calls per cell, median of ${r.reps}, each measured cell after an unmeasured one of its own kind; a task echo is its CreateTaskResult, its run and its \`tasks/get\` polls until completed (${r.pollsPerTask.toFixed(2)} per task):`,
    '',
    '| call | CPU per echo (median) | ÷ plain, medians | ÷ plain, median of per-repetition ratios (target ≤ 2x) |',
    '|---|---:|---:|---:|',
    `| plain \`tools/call\` | ${plain.toFixed(0)} µs | 1.00x | 1.00x |`,
    `| task-augmented | ${task.toFixed(0)} µs | ${plain > 0 ? (task / plain).toFixed(2) : 'n/a'}x | ${r.pairedRatio.toFixed(2)}x |`,
    `| declared, answered within \`taskAfterMs\` (default 250 ms) | ${direct.toFixed(0)} µs | ${plain > 0 ? (direct / plain).toFixed(2) : 'n/a'}x | ${r.directRatio.toFixed(2)}x |`,
    '',
    `\`tasks/get\` of a completed task, one at a time, ${r.gets} requests (target p50 ≤ 1 ms on loopback Redis):`,
    '',
    '| store, read through | p50 | p99 |',
    '|---|---:|---:|',
    `| memory, the same process | ${ms(r.getMs.memory)} |`,
    `| Redis, the instance that ran it | ${ms(r.getMs.redisLocal)} |`,
    `| Redis, another instance | ${ms(r.getMs.redisOther)} |`,
    '',
    ...(r.kept === undefined
      ? []
      : [
          `A task echo on Redis (C=${r.concurrency}, ${r.calls} per cell, median of ${r.reps}), its writes kept to be sent again after a failover (on a Sentinel or Cluster link: cluster/recent-writes.ts) or not (a single Redis):`,
          '',
          '| task echo on Redis | CPU per echo (median) | ÷ not kept, median of per-repetition ratios |',
          '|---|---:|---:|',
          `| writes not kept | ${r.kept.plainUs.toFixed(0)} µs | 1.00x |`,
          `| writes kept | ${r.kept.keptUs.toFixed(0)} µs | ${r.kept.pairedRatio.toFixed(2)}x |`,
          '',
          `Kept after ${r.kept.tasks} task echoes: ${r.kept.writes} writes, ${(r.kept.bytes / 1024).toFixed(0)} KiB (${r.kept.tasks > 0 ? (r.kept.writes / r.kept.tasks).toFixed(1) : '–'} writes and ${r.kept.tasks > 0 ? (r.kept.bytes / r.kept.tasks).toFixed(0) : '–'} B of arguments per task, kept for the window: 15 s, 8 MiB at most).`,
          '',
        ]),
  ].join('\n');
}
