/**
 * The writes sent again after a failover (tasks/redis-rewrite.ts), over random lives: seeded
 * sequences of every task store step — create, progress, renew, settle (completed, failed, or
 * waiting for input with or without keeping the lease), answer (part or all), cancel, read — each
 * through either of two instances (an instance is its own runner), on up to four tasks; refused
 * steps included.
 * Each sequence runs on a real redis-server with every command recorded; then at random cuts Redis
 * is emptied and given the commands before the cut, both instances are told of a failover (in a
 * random order), and once both have stopped passing the state must be that of the whole run,
 * exactly: however the steps of one instance wait on the other's, the passes go on while either
 * changes something (recent-writes.ts).
 * Replay a failing sequence with SLUICE_TRIAL_SEED=<seed>.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newTaskId, type TaskRecord } from '../../src/tasks/model.js';
import { RedisTaskStore } from '../../src/tasks/redis-store.js';
import { FailoverLink, redisForDescribe, snapshot } from '../helpers/failover-link.js';
import { until } from '../helpers/http.js';
import { prng } from '../helpers/prng.js';

const SEQUENCES = 8;
const CUTS = 5;
const STEPS = 20;
const MAX_TASKS = 4;
const STEPS_PER_TASK = 8;
/** Watching after a failover, quick for a test: a look every 10 ms, done after 150 ms without a change. */
const WATCH = { pollMs: 10, quietMs: 150 };
const OWNER = 'p:alice';

type Who = 0 | 1;

describe('task store: writes sent again after a failover, random lives and cuts', () => {
  const { available, connect } = redisForDescribe();
  if (!available) return;

  /** One random life on two stores; returns what each step was, for the failure message. */
  async function life(rand: () => number, stores: RedisTaskStore[]): Promise<string[]> {
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
    const tasks: { id: string; steps: number }[] = [];
    const done: string[] = [];
    const lease = () => Date.now() + 60_000;
    for (let i = 0; i < STEPS; i++) {
      const via = pick([0, 1] as const) as Who;
      const store = stores[via] as RedisTaskStore;
      // A runner is an instance: its steps go through that instance's store.
      const runner = `R${via}`;
      const open = tasks.filter((t) => t.steps < STEPS_PER_TASK);
      if (open.length === 0 || (tasks.length < MAX_TASKS && rand() < 0.25)) {
        const now = Date.now();
        const t: TaskRecord = {
          taskId: newTaskId(),
          owner: OWNER,
          client: 'c-alice',
          status: 'working',
          createdAt: now,
          lastUpdatedAt: now,
          ttlMs: 600_000,
          pollIntervalMs: 100,
          call: JSON.stringify({ name: 'x', arguments: { i } }),
          leaseOwner: runner,
          leaseUntil: lease(),
        };
        tasks.push({ id: t.taskId, steps: 1 });
        done.push(`${via}:create(${runner})=${await store.create(t, 10)}`);
        continue;
      }
      const task = pick(open);
      task.steps++;
      const id = task.id;
      const keys = pick([['a'], ['b'], ['a', 'b']]);
      const step = pick([
        'progress',
        'renew',
        'complete',
        'fail',
        'ask',
        'askKeep',
        'answer',
        'cancel',
        'get',
      ]);
      let outcome: unknown;
      if (step === 'progress')
        outcome = await store.progress(id, runner, { message: `m${i}`, partialText: `p${i}` });
      else if (step === 'renew') outcome = await store.renew(id, runner, lease());
      else if (step === 'complete')
        outcome = await store.settle(id, runner, { status: 'completed', result: `{"i":${i}}` });
      else if (step === 'fail')
        outcome = await store.settle(id, runner, {
          status: 'failed',
          error: { code: -32603, message: `e${i}` },
        });
      else if (step === 'ask' || step === 'askKeep') {
        const inputRequests = Object.fromEntries(keys.map((k) => [k, `{"q":${i}}`]));
        outcome = await store.settle(id, runner, {
          status: 'input_required',
          inputRequests,
          requestState: `rs${i}`,
          ...(step === 'askKeep' ? { leaseUntil: lease() } : {}),
        });
      } else if (step === 'answer') {
        // One answer per question, as a client's retry through another instance carries. Two
        // different answers to one question in the writes a failover lost may keep either (docs/tasks.md).
        const answers = Object.fromEntries(keys.map((k) => [k, `{"a":"${k}${tasks.indexOf(task)}"}`]));
        outcome = (await store.answer(id, OWNER, answers, runner, lease()))?.resume;
      } else if (step === 'cancel') outcome = (await store.cancel(id, OWNER, `c${i}`))?.status;
      else outcome = (await store.get(id, OWNER))?.status;
      done.push(`${via}:${step}(${tasks.indexOf(task)},${runner},${keys.join('')})=${String(outcome)}`);
    }
    return done;
  }

  test(`${SEQUENCES} random lives, ${CUTS} random cuts each: every cut ends in the state of the whole run`, async () => {
    const seed = Number(process.env['SLUICE_TRIAL_SEED'] ?? Date.now() % 1_000_000);
    const rand = prng(seed);
    const admin = await connect();
    for (let n = 0; n < SEQUENCES; n++) {
      const label = `sequence ${n} (SLUICE_TRIAL_SEED=${seed})`;
      await admin.send(['FLUSHALL']);
      const log: string[][] = [];
      const fl = [new FailoverLink(await connect(), log), new FailoverLink(await connect(), log)];
      const stores = fl.map((l) => new RedisTaskStore(l, { recentWrites: WATCH }));
      const steps = await life(rand, stores);
      for (const l of fl) l.stopRecording();
      const whole = await snapshot(admin);
      for (let c = 0; c < CUTS; c++) {
        const k = Math.floor(rand() * (log.length + 1));
        await admin.send(['FLUSHALL']);
        for (const command of log.slice(0, k)) await admin.send(command);
        const order = rand() < 0.5 ? [0, 1] : [1, 0];
        for (const i of order) fl[i]?.failOver();
        const what = `${label}, cut ${k} of ${log.length}, instance ${order[0]} told first; steps:\n${steps.join('\n')}`;
        await until(
          () => stores.every((s) => !s.recentWrites()?.watching),
          10_000,
          `the passes of ${what}\n`,
        );
        assert.deepEqual(await snapshot(admin), whole, what);
      }
      for (const s of stores) await s.close();
    }
  });
});
