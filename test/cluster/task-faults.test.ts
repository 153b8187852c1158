/**
 * Tasks under faults, with real processes: three task instances (helpers/task-node.ts) on one
 * Redis, fifteen tasks created round-robin across them, one instance killed with SIGKILL while its
 * tasks run and a new one started in its place. Every task must end `completed` with its own
 * result or `failed` with the owner-lost error (exactly the killed instance's tasks), read through
 * any surviving instance; none stays `working`, and no task's tool runs twice (each instance logs
 * every run start to one file). Skipped loudly without redis-server.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OWNER_LOST } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { until } from '../helpers/http.js';
import { reapWithMe } from '../helpers/reaper.js';
import { type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';
import { createTask, pollTask } from '../helpers/tasks.js';

const script = fileURLToPath(new URL('../helpers/task-node.js', import.meta.url));

interface Node {
  child: ChildProcess;
  url: string;
}

describe('tasks under faults', () => {
  const children: ChildProcess[] = [];
  let redis: Redis | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-task-faults-'));
  const runlog = join(dir, 'runs.log');
  writeFileSync(runlog, '');
  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(): Promise<Node> {
    const child = spawn(process.execPath, [script, redis?.url ?? '', '900'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SLUICE_TASK_NODE: '1', SLUICE_TASK_RUNLOG: runlog },
    });
    reapWithMe(child);
    children.push(child);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await until(() => /task-node (\S+)\n/.test(out), 15_000, 'a task instance listening');
    return { child, url: /task-node (\S+)\n/.exec(out)?.[1] ?? '' };
  }

  test('SIGKILL and restart mid-run: every task completed or failed with owner-lost, none twice', async (t) => {
    if (skipWithoutRedis(t)) return;
    redis = await startRedis();
    const nodes = [await start(), await start(), await start()];
    const tasks: { id: string; gate: string; on: number }[] = [];
    for (let i = 0; i < 15; i++) {
      const on = i % 3;
      const gate = `fault-${i}`;
      const created = await createTask(nodes[on]?.url ?? '', 'slow', { gate, ms: 1500 + (i % 5) * 300 });
      tasks.push({ id: created.taskId, gate, on });
    }
    const victim = nodes[1];
    assert.ok(victim);
    const gone = new Promise((r) => victim.child.once('exit', r));
    victim.child.kill('SIGKILL');
    await withDeadline(gone, 5000, 'the victim exits');
    nodes[1] = await start();
    for (const task of tasks) {
      // Read through an instance other than the one that ran it (the restarted one included).
      const via = nodes[(task.on + 1) % 3]?.url ?? '';
      const end = await pollTask(via, task.id, (x) => x.status !== 'working', 15_000);
      if (task.on === 1) {
        assert.equal(end.status, 'failed', `${task.gate} ran on the killed instance`);
        assert.deepEqual(end.error, OWNER_LOST);
      } else {
        assert.equal(end.status, 'completed', `${task.gate}: ${JSON.stringify(end)}`);
        assert.equal(end.result.content[0].text, `done ${task.gate}`);
      }
    }
    const runs = readFileSync(runlog, 'utf8').trim().split('\n');
    for (const task of tasks) {
      assert.equal(runs.filter((g) => g === task.gate).length, 1, `${task.gate} ran exactly once`);
    }
  });
});
