/**
 * The fault run of issue 23, with real processes: three `sluice serve --redis` behind nginx
 * round-robin (helpers/cluster-fixture.ts), 50 task-augmented `reindex`/`generate` calls through
 * nginx while members are killed with SIGKILL and restarted on their port at random (seeded; the
 * seed is printed, replay with SLUICE_TASK_FAULT_SEED). Every task must end `completed` with its own
 * result or `failed` with the owner-lost error; none lost (every id resolves), none stuck (each
 * reaches a final status within a deadline), none run twice: each instance logs (`--log json`) a
 * `tasks.run` line per round it starts, and the lines of all processes, killed ones included, name
 * each task at most once (exactly once when it completed). Meanwhile a client creates a long task,
 * goes away for 30 s, and comes back through another instance than the one running it: it gets the
 * result. Skipped loudly without nginx or redis-server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { shortHash } from '../../src/core/observe/probe.js';
import { generateText } from '../../src/demo/generate.js';
import { OWNER_LOST } from '../../src/server/index.js';
import { type ClusterFixture, startClusterFixture } from '../helpers/cluster-fixture.js';
import { withDeadline } from '../helpers/deadline.js';
import { type Loose, sleep, until } from '../helpers/http.js';
import { modernSend } from '../helpers/modern.js';
import { findNginx, NGINX_MISSING } from '../helpers/nginx.js';
import { prng } from '../helpers/prng.js';
import { topologySkip } from '../helpers/redis-topology.js';
import { callBody, taskBody } from '../helpers/tasks.js';

const SEED = Number(process.env['SLUICE_TASK_FAULT_SEED'] ?? Date.now() % 1_000_000);
const CALLS = 50;
const LEASE_MS = 1_000;
const AWAY_MS = 30_000;
const skip = findNginx() === undefined ? NGINX_MISSING : topologySkip('single');

interface Call {
  label: string;
  name: 'reindex' | 'generate';
  args: Record<string, unknown>;
  expected: string;
}

/** A task's final tasks/get result, or a thrown error naming what it last saw. */
async function settled(url: string, taskId: string, ms: number): Promise<Loose> {
  const deadline = Date.now() + ms;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const r = await modernSend(url, taskBody('tasks/get', { taskId }), {}, { timeoutMs: 3_000 });
      last = `${r.status} ${r.text.slice(0, 200)}`;
      const t = r.status === 200 ? r.json().result : undefined;
      if (t !== undefined && t.status !== 'working') return t;
    } catch (error) {
      last = String(error); // the instance behind nginx died mid-request: poll again
    }
    await sleep(100);
  }
  throw new Error(`task ${taskId} not settled within ${ms} ms; last: ${last}`);
}

/** Creates the task through `url`, retrying while no instance answers (a kill, a restart). */
async function create(url: string, c: Call, ms: number): Promise<{ taskId: string; attempts: number }> {
  const deadline = Date.now() + ms;
  let last = '';
  for (let attempts = 1; Date.now() < deadline; attempts++) {
    try {
      const r = await modernSend(url, callBody(c.name, c.args), {}, { timeoutMs: 5_000 });
      const result = r.status === 200 ? r.json().result : undefined;
      if (result?.resultType === 'task') return { taskId: result.taskId, attempts };
      last = `${r.status} ${r.text.slice(0, 200)}`;
    } catch (error) {
      last = String(error);
    }
    await sleep(100);
  }
  throw new Error(`${c.label}: no task created within ${ms} ms; last: ${last}`);
}

describe('tasks: 3 sluice serve --redis behind nginx, members killed at random', { skip }, () => {
  let fx: ClusterFixture;
  /** `tasks.run` lines per task hash, from every process ever started (killed ones too). */
  const runs = new Map<string, number[]>();

  /** Fed from each member's spawn on: a restarted member takes requests before its listening line. */
  function watch(i: number, line: string): void {
    if (!line.includes('"tasks.run"')) return;
    const task = String(JSON.parse(line).task);
    runs.set(task, [...(runs.get(task) ?? []), i]);
  }

  before(async () => {
    fx = await startClusterFixture({
      leaseMs: LEASE_MS,
      args: ['--log', 'json', '--task-lease-ms', String(LEASE_MS)],
      onStderrLine: watch,
    });
  });
  after(async () => {
    await fx?.stop();
  });

  test(`${CALLS} reindex/generate tasks under SIGKILL: completed or owner-lost, none lost, stuck or run twice; a client away ${AWAY_MS / 1000} s gets its result`, async () => {
    process.stderr.write(`task fault run: seed ${SEED} (replay with SLUICE_TASK_FAULT_SEED=${SEED})\n`);
    const rnd = prng(SEED);
    const started = Date.now();

    // The client that goes away: a reindex running longer than its absence.
    const away: Call = {
      label: 'away',
      name: 'reindex',
      args: { corpus: 'away', docs: 70, delayMs: 500 },
      expected: 'reindexed 70 docs',
    };
    const awayTask = await create(fx.url, away, 10_000);
    const awayHash = shortHash(awayTask.taskId);
    await until(() => runs.has(awayHash), 10_000, 'the away task started on some instance');
    const awayOwner = runs.get(awayHash)?.[0] ?? -1;
    const killable = [0, 1, 2].filter((i) => i !== awayOwner);

    // Killer: until the calls are done, SIGKILL a member (never the away task's) every 1.5–4 s
    // and start it again on its port.
    let stop = false;
    let kills = 0;
    const killer = (async () => {
      while (!stop) {
        await sleep(1_500 + Math.floor(rnd() * 2_500));
        if (stop) break;
        const victim = killable[Math.floor(rnd() * killable.length)] ?? 0;
        const member = fx.members[victim];
        if (member === undefined) continue;
        const gone = new Promise((r) => member.child.once('exit', r));
        member.child.kill('SIGKILL');
        await withDeadline(gone, 5_000, `member ${victim} exits after SIGKILL`);
        kills++;
        await fx.restart(victim);
      }
    })();

    // The calls, one started every 300 ms, each polled through nginx until it is final.
    const outcomes: Promise<{ c: Call; taskId: string; end: Loose }>[] = [];
    for (let i = 0; i < CALLS; i++) {
      const c: Call =
        i % 2 === 0
          ? {
              label: `call ${i}`,
              name: 'reindex',
              args: { corpus: `c${i}`, docs: 10 + (i % 7) * 5, delayMs: 100 },
              expected: `reindexed ${10 + (i % 7) * 5} docs`,
            }
          : {
              label: `call ${i}`,
              name: 'generate',
              args: { words: 10 + (i % 5) * 5, delayMs: 80, seed: i },
              expected: generateText(10 + (i % 5) * 5, i),
            };
      outcomes.push(
        (async () => {
          const { taskId } = await create(fx.url, c, 20_000);
          return { c, taskId, end: await settled(fx.url, taskId, 30_000) };
        })(),
      );
      await sleep(300);
    }
    let results: { c: Call; taskId: string; end: Loose }[];
    try {
      results = await Promise.all(outcomes);
    } finally {
      stop = true;
      await withDeadline(killer, 60_000, 'the killer stops');
    }

    let completed = 0;
    let lost = 0;
    for (const { c, taskId, end } of results) {
      const n = runs.get(shortHash(taskId))?.length ?? 0;
      assert.ok(n <= 1, `${c.label} (${taskId.slice(0, 8)}…) ran ${n} times`);
      if (end.status === 'completed') {
        completed++;
        assert.equal(end.result?.content?.[0]?.text, c.expected, `${c.label}: ${JSON.stringify(end)}`);
        assert.equal(n, 1, `${c.label} completed, so it ran once`);
      } else {
        lost++;
        assert.equal(end.status, 'failed', `${c.label}: ${JSON.stringify(end)}`);
        assert.deepEqual(end.error, OWNER_LOST, c.label);
      }
    }

    // Back after AWAY_MS, through a member other than the one running the task (all are up now).
    await sleep(Math.max(0, started + AWAY_MS - Date.now()));
    const via = fx.members[(awayOwner + 1) % 3]?.url ?? '';
    const end = await settled(via, awayTask.taskId, 30_000);
    assert.equal(end.status, 'completed', JSON.stringify(end));
    assert.equal(end.result?.content?.[0]?.text, away.expected);
    assert.equal(runs.get(awayHash)?.length, 1, 'the away task ran once');

    process.stderr.write(
      `task fault run: ${CALLS} tasks, ${kills} kills, ${completed} completed, ${lost} failed owner-lost, ` +
        `${Math.round((Date.now() - started) / 1000)} s\n`,
    );
    assert.ok(kills > 0, 'members were killed');
    assert.ok(lost > 0 && completed > 0, 'kills hit running tasks, and tasks completed');
  });
});
