/**
 * The task lifecycle against a model (fast-check `commands`): generated sequences of creating tasks,
 * reading them, cancelling them, letting their tools finish and asking for tasks that do not exist,
 * each step through either of two instances sharing one task store, checked after every step against
 * what SEP-2663 allows (docs/tasks.md, "The wire"):
 * - a task is `working` until its tool finishes or it is cancelled; after the tool finished it is
 *   `working` or `completed` (the answer is settled into the store a moment later), with the tool's
 *   result inline;
 * - `tasks/cancel` is acknowledged `{resultType: "complete"}` for any task, finished or not; a task
 *   cancelled before its tool finished is `cancelled` from the acknowledgement on, and stays so even
 *   when its tool then returns; a task its tool had finished may read `completed` instead;
 * - whatever a task was once read as finished, it is read as for ever after, through either instance;
 * - an id that names no task is -32602, as a forged one is;
 * and once every tool is let go: every task ends as the model says, each tool ran exactly once, and
 * every tool of a task cancelled while it ran saw its AbortSignal.
 * Two stores: the in-memory one (one instance, both "instances" the same), and Redis (two
 * instances, so reads, cancels and results cross between them: the cancel reaches the tool on the
 * other instance through the store's channel). FUZZ_SEED / FUZZ_PATH replay a failure,
 * FUZZ_RUNS draws more (test/helpers/fuzz.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { JsonRpcCode as C } from '../../src/jsonrpc/codes.js';
import { createTasks, RedisTaskStore, type Served, serve } from '../../src/server/index.js';
import { catchEscapes, fuzzParameters } from '../helpers/fuzz.js';
import { until } from '../helpers/http.js';
import { modernSend } from '../helpers/modern.js';
import { findRedis, type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';
import {
  createTask,
  getTask,
  newProbe,
  TASK_TOOLS,
  type ToolProbe,
  taskBody,
  taskServer,
} from '../helpers/tasks.js';

/** Runs per store and the time they may take in all (fast-check stops drawing at the limit). */
const RUNS = 40;
const TIME_LIMIT_MS = 12_000;
/** Every wait on the servers (a tool starting, a result settling) has this deadline. */
const WAIT_MS = 5_000;

type Status = 'working' | 'completed' | 'cancelled';

interface ModelTask {
  readonly id: string;
  readonly gate: string;
  /** The tool was let go (its gate opened). */
  released: boolean;
  /** A cancel was acknowledged, and whether the tool had been let go before it. */
  cancelled: { afterRelease: boolean } | undefined;
  /** What the task was first read as once finished: it must read so for ever after. */
  final: Status | undefined;
}

interface Model {
  tasks: ModelTask[];
}

interface Real {
  readonly urls: readonly [string, string];
  readonly probe: ToolProbe;
}

let gates = 0;
/** What the runs did, for the log: a property that never reached a case tests nothing of it. */
const tally = { created: 0, raced: 0, completed: 0, cancelled: 0, cancelledAfterRelease: 0 };

/** The statuses a task may be read as now. */
function allowed(t: ModelTask): readonly Status[] {
  if (t.final !== undefined) return [t.final];
  if (t.cancelled !== undefined) return t.cancelled.afterRelease ? ['cancelled', 'completed'] : ['cancelled'];
  return t.released ? ['working', 'completed'] : ['working'];
}

function checkRead(
  t: ModelTask,
  read: { result?: { status?: string; result?: unknown }; error?: unknown },
  where: string,
): void {
  const r = read.result;
  assert.ok(r !== undefined, `${where}: tasks/get answered ${JSON.stringify(read)}`);
  const status = r.status as Status;
  assert.ok(
    allowed(t).includes(status),
    `${where}: ${t.gate} read ${status}, allowed ${allowed(t).join('|')}`,
  );
  if (status === 'completed') {
    assert.deepEqual(
      (r.result as { content?: unknown } | undefined)?.content,
      [{ type: 'text', text: `done ${t.gate}` }],
      `${where}: the result inline`,
    );
  }
  if (status !== 'working') t.final = status;
}

class Create implements fc.AsyncCommand<Model, Real> {
  readonly via: 0 | 1;
  constructor(via: 0 | 1) {
    this.via = via;
  }
  check(m: Readonly<Model>): boolean {
    return m.tasks.length < 10;
  }
  async run(m: Model, r: Real): Promise<void> {
    const gate = `g${++gates}`;
    const created = await createTask(r.urls[this.via], 'slow', { gate });
    assert.equal(created.status, 'working');
    tally.created++;
    m.tasks.push({
      id: String(created.taskId),
      gate,
      released: false,
      cancelled: undefined,
      final: undefined,
    });
  }
  toString(): string {
    return `create via ${this.via}`;
  }
}

/** A step on one of the tasks created so far (`pick` modulo their number), through instance `via`. */
abstract class OnTask implements fc.AsyncCommand<Model, Real> {
  readonly pick: number;
  readonly via: 0 | 1;
  constructor(pick: number, via: 0 | 1) {
    this.pick = pick;
    this.via = via;
  }
  check(m: Readonly<Model>): boolean {
    return m.tasks.length > 0;
  }
  protected task(m: Model): ModelTask {
    return m.tasks[this.pick % m.tasks.length] as ModelTask;
  }
  abstract run(m: Model, r: Real): Promise<void>;
}

class Get extends OnTask {
  async run(m: Model, r: Real): Promise<void> {
    const t = this.task(m);
    checkRead(t, await getTask(r.urls[this.via], t.id), `get via ${this.via}`);
  }
  override toString(): string {
    return `get #${this.pick} via ${this.via}`;
  }
}

class Cancel extends OnTask {
  async run(m: Model, r: Real): Promise<void> {
    const t = this.task(m);
    const ack = await modernSend(r.urls[this.via], taskBody('tasks/cancel', { taskId: t.id }));
    assert.deepEqual(ack.json(), { jsonrpc: '2.0', id: ack.json().id, result: { resultType: 'complete' } });
    if (t.final === undefined && t.cancelled === undefined) t.cancelled = { afterRelease: t.released };
    // Straight after the acknowledgement, through the other instance too.
    const other = this.via === 0 ? 1 : 0;
    checkRead(t, await getTask(r.urls[other], t.id), `get after cancel via ${other}`);
  }
  override toString(): string {
    return `cancel #${this.pick} via ${this.via}`;
  }
}

/** Lets a task's tool finish: waits (bounded) until it runs, then opens its gate. */
class Release extends OnTask {
  async run(m: Model, r: Real): Promise<void> {
    const t = this.task(m);
    if (t.released || t.cancelled !== undefined) return;
    await release(r, t);
  }
  override toString(): string {
    return `release #${this.pick}`;
  }
}

/** Lets a task's tool finish and cancels it at the same moment: either may win, and then stays. */
class Race extends OnTask {
  /** The gate opens this long after the cancel was sent: either may reach the store first. */
  readonly delayMs: number;
  constructor(pick: number, via: 0 | 1, delayMs: number) {
    super(pick, via);
    this.delayMs = delayMs;
  }
  async run(m: Model, r: Real): Promise<void> {
    const t = this.task(m);
    if (t.released || t.cancelled !== undefined) return;
    await until(() => r.probe.gates.has(t.gate), WAIT_MS, `the tool of ${t.gate} running`);
    const open = r.probe.gates.get(t.gate);
    const [ack] = await Promise.all([
      modernSend(r.urls[this.via], taskBody('tasks/cancel', { taskId: t.id })),
      new Promise<void>((res) => setTimeout(res, this.delayMs)).then(() => open?.()),
    ]);
    assert.deepEqual(ack.json().result, { resultType: 'complete' });
    t.released = true;
    t.cancelled = { afterRelease: true };
    tally.raced++;
  }
  override toString(): string {
    return `cancel #${this.pick} via ${this.via} and release it ${this.delayMs} ms later`;
  }
}

class Forged implements fc.AsyncCommand<Model, Real> {
  readonly id: string;
  readonly via: 0 | 1;
  constructor(id: string, via: 0 | 1) {
    this.id = id;
    this.via = via;
  }
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    // A drawn id could only name a task by a collision with 128 random bits.
    if (m.tasks.some((t) => t.id === this.id)) return;
    const read = await getTask(r.urls[this.via], this.id);
    assert.equal(read.error?.code, C.InvalidParams, `an unknown task id: ${JSON.stringify(read)}`);
  }
  toString(): string {
    return `get ${JSON.stringify(this.id)} via ${this.via}`;
  }
}

async function release(r: Real, t: ModelTask): Promise<void> {
  await until(() => r.probe.gates.has(t.gate), WAIT_MS, `the tool of ${t.gate} running`);
  r.probe.gates.get(t.gate)?.();
  t.released = true;
}

const via = fc.constantFrom<0 | 1>(0, 1);
const commands = fc.commands(
  [
    via.map((v) => new Create(v)),
    fc.tuple(fc.nat(), via).map(([p, v]) => new Get(p, v)),
    fc.tuple(fc.nat(), via).map(([p, v]) => new Get(p, v)),
    fc.tuple(fc.nat(), via).map(([p, v]) => new Cancel(p, v)),
    fc.nat().map((p) => new Release(p, 0)),
    fc.nat().map((p) => new Release(p, 0)),
    fc.tuple(fc.nat(), via, fc.integer({ min: 0, max: 4 })).map(([p, v, d]) => new Race(p, v, d)),
    fc
      .tuple(fc.oneof(fc.string({ maxLength: 40 }), fc.base64String({ minLength: 20, maxLength: 60 })), via)
      .map(([id, v]) => new Forged(id, v)),
  ],
  // 'medium': runs of some 10-30 steps, not fast-check's default handful.
  { maxCommands: 30, size: 'medium' },
);

/** After the steps: every tool let go, then every task ends as the model says; each tool ran once. */
async function settle(m: Model, r: Real): Promise<void> {
  for (const t of m.tasks) if (!t.released && t.cancelled === undefined) await release(r, t);
  for (const [i, t] of m.tasks.entries()) {
    const url = r.urls[i % 2] as string;
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const read = await getTask(url, t.id);
      checkRead(t, read, `settling ${t.gate}`);
      if (t.final !== undefined) break;
      assert.ok(Date.now() < deadline, `${t.gate} still ${read.result?.status} after ${WAIT_MS} ms`);
      await new Promise((res) => setTimeout(res, 10));
    }
    if (t.cancelled !== undefined && !t.cancelled.afterRelease) {
      assert.equal(t.final, 'cancelled', `${t.gate}: cancelled before its tool finished`);
      await until(
        () => r.probe.aborted.includes(t.gate),
        WAIT_MS,
        `the tool of ${t.gate} saw its AbortSignal`,
      );
    }
    if (t.cancelled === undefined) assert.equal(t.final, 'completed', `${t.gate}: let go, never cancelled`);
    assert.equal(r.probe.runs.get(t.gate), 1, `the tool of ${t.gate} ran once`);
    if (t.final === 'completed') tally.completed++;
    else tally.cancelled++;
    if (t.final === 'cancelled' && t.cancelled?.afterRelease === true) tally.cancelledAfterRelease++;
  }
}

function report(t: { diagnostic(s: string): void }): void {
  t.diagnostic(`tasks ${JSON.stringify(tally)}`);
  assert.ok(tally.completed > 0 && tally.cancelled > 0 && tally.raced > 0, 'the runs reached every ending');
  for (const k of Object.keys(tally) as (keyof typeof tally)[]) tally[k] = 0;
}

describe('the task lifecycle against a model, through either of two instances', () => {
  let redis: Redis | undefined;
  const links: RedisLink[] = [];
  const servers: Served[] = [];
  const escapes = catchEscapes();

  async function instance(
    probe: ToolProbe,
    link: RedisLink | undefined,
    shared?: ReturnType<typeof createTasks>,
  ) {
    let tasks = shared;
    if (tasks === undefined) {
      const store = link === undefined ? undefined : new RedisTaskStore(link);
      await store?.start();
      tasks = createTasks({
        ...(store === undefined ? {} : { store }),
        tools: TASK_TOOLS,
        pollIntervalMs: 50,
        maxLivePerClient: 10_000,
      });
    }
    const s = await serve({
      createServer: taskServer(probe),
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 0,
      tasks,
    });
    servers.push(s);
    return s;
  }

  before(async () => {
    escapes.start();
    if (findRedis() !== undefined) redis = await startRedis();
  });
  after(async () => {
    for (const s of servers) await s.close();
    for (const l of links) await l.close();
    await redis?.stop();
    escapes.stop();
  });

  const property = (real: Real) =>
    fc.asyncProperty(commands, async (cmds) => {
      const model: Model = { tasks: [] };
      await fc.asyncModelRun(() => ({ model, real }), cmds);
      await settle(model, real);
    });

  test('the in-memory store, one instance', async (t) => {
    const probe = newProbe();
    const s = await instance(probe, undefined);
    await fc.assert(property({ urls: [s.url, s.url], probe }), fuzzParameters(RUNS, TIME_LIMIT_MS));
    assert.deepEqual(escapes.escaped, []);
    report(t);
  });

  test('the Redis store, two instances', async (t) => {
    skipWithoutRedis(t);
    if (redis === undefined) return;
    const probe = newProbe();
    const url = redis.url;
    const link = async (): Promise<RedisLink> => {
      const l = await connectNodeRedis({ url, commandTimeoutMs: 2000 });
      links.push(l);
      return l;
    };
    const a = await instance(probe, await link());
    const b = await instance(probe, await link());
    await fc.assert(property({ urls: [a.url, b.url], probe }), fuzzParameters(RUNS, TIME_LIMIT_MS));
    assert.deepEqual(escapes.escaped, []);
    report(t);
  });
});
