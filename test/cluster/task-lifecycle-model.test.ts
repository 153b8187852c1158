/**
 * The task lifecycle against a model (fast-check `commands`, test/helpers/task-model.ts): generated
 * sequences of creating tasks (`slow`, which waits for its gate, and `ask`, an MRTR round of two
 * questions), reading them, cancelling them, letting their tools finish, answering questions one at a
 * time or both at once through the two instances, cancelling at the moment a tool is let go, and
 * asking for tasks that do not exist, each step through either of two instances sharing one task
 * store, checked after every step against what SEP-2663 allows (docs/tasks.md, "The wire"):
 * - an `ask` task is `working` or `input_required` until both questions are answered, and its
 *   `inputRequests` are exactly the questions still open (an answered one leaves);
 * - a task is `working` until its tool finishes or it is cancelled; after the tool finished it is
 *   `working` or `completed` (the answer is settled into the store a moment later), with the tool's
 *   result inline;
 * - `tasks/cancel` is acknowledged `{resultType: "complete"}` for any task, finished or not; a task
 *   cancelled before its tool finished is `cancelled` from the acknowledgement on, and stays so even
 *   when its tool then returns; a task its tool had finished may read `completed` instead;
 * - whatever a task was once read as finished, it is read as for ever after, through either instance;
 * - an id that names no task is -32602, as a forged one is;
 * and once every tool is let go: every task ends as the model says, each tool ran exactly once (an
 * answered round once, whichever instance's update resumed it; never after a cancel), and every
 * tool of a task cancelled while it ran saw its AbortSignal.
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
import { createTasks, RedisTaskStore, type Served, serve } from '../../src/server/index.js';
import { catchEscapes, fuzzParameters } from '../helpers/fuzz.js';
import { findRedis, type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';
import { commands, type Model, type Real, report, settle } from '../helpers/task-model.js';
import { newProbe, TASK_TOOLS, type ToolProbe, taskServer } from '../helpers/tasks.js';

/** Runs per store and the time they may take in all (fast-check stops drawing at the limit). */
const RUNS = 40;
const TIME_LIMIT_MS = 12_000;

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
        taskAfterMs: 0,
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
