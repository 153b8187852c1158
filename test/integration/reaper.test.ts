/**
 * test/helpers/reaper.ts: the processes a test file started are stopped when the file dies without
 * stopping them (the runner's per-file timeout, a kill), whether they obey SIGTERM or not, and with
 * `group` their own children with them.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { withDeadline } from '../helpers/deadline.js';
import { startTime } from '../helpers/reaper.js';

const REAPER = fileURLToPath(new URL('../helpers/reaper.js', import.meta.url));
const WATCH = fileURLToPath(new URL('../helpers/reaper-watch.js', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await delay(50);
  }
  return !alive(pid);
}

/**
 * A stand-in for a test file: starts a child running `childCode` (with `group`, in a process group
 * of its own) under the reaper, prints its pid (and the pids it prints), then idles until killed.
 */
async function file(
  childCode: string,
  signal: string,
  group: boolean,
): Promise<{ pids: number[]; kill: () => void }> {
  const code = `
    import { spawn } from 'node:child_process';
    import { reapWithMe } from ${JSON.stringify(REAPER)};
    const c = spawn(process.execPath, ['-e', ${JSON.stringify(childCode)}], { stdio: ['ignore', 'pipe', 'ignore'], detached: ${group} });
    reapWithMe(c, ${JSON.stringify(signal)}, ${group});
    c.stdout.setEncoding('utf8');
    c.stdout.on('data', (d) => process.stdout.write(d));
    process.stdout.write('pid ' + c.pid + '\\n');
    setInterval(() => {}, 1000);
  `;
  const f = spawn(process.execPath, ['--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  f.stdout.setEncoding('utf8');
  let out = '';
  const want = childCode.includes('grandchild') ? 2 : 1;
  const pids = await withDeadline(
    new Promise<number[]>((resolve, reject) => {
      f.stdout.on('data', (d: string) => {
        out += d;
        const found = [...out.matchAll(/pid (\d+)\n/g)].map((m) => Number(m[1]));
        if (found.length >= want) resolve(found);
      });
      f.once('exit', () => reject(new Error(`the file exited early: ${out}`)));
    }),
    10_000,
    'the stand-in file printing its children',
  );
  return {
    pids,
    kill: () => {
      f.kill('SIGKILL');
    },
  };
}

const IDLE = 'setInterval(() => {}, 1000);';

test('a child is stopped when its file is killed with SIGKILL', async () => {
  const f = await file(IDLE, 'SIGTERM', false);
  const [pid] = f.pids;
  assert.ok(pid !== undefined && alive(pid));
  f.kill();
  assert.ok(await gone(pid, 5_000), `child ${pid} outlived its file`);
});

test('a child that ignores its signal is killed after the grace period', async () => {
  const f = await file(`process.on('SIGTERM', () => {}); ${IDLE}`, 'SIGTERM', false);
  const [pid] = f.pids;
  assert.ok(pid !== undefined);
  f.kill();
  await delay(1_000);
  assert.ok(alive(pid), 'the child ignoring SIGTERM is still there within the grace period');
  assert.ok(await gone(pid, 8_000), `child ${pid} outlived its file past the grace period`);
});

test('with group, the child and the processes it started are stopped', async () => {
  const grandchild = `
    const { spawn } = require('node:child_process');
    const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    process.stdout.write('pid ' + g.pid + '\\n'); // grandchild
    ${IDLE}`;
  const f = await file(grandchild, 'SIGTERM', true);
  assert.equal(f.pids.length, 2);
  for (const pid of f.pids) assert.ok(alive(pid));
  f.kill();
  for (const pid of f.pids) assert.ok(await gone(pid, 5_000), `process ${pid} outlived its file`);
});

test('a file that ends normally is not held open by the watchdog', async () => {
  const code = `
    import { spawn } from 'node:child_process';
    import { reapWithMe } from ${JSON.stringify(REAPER)};
    const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 100)'], { stdio: 'ignore' });
    reapWithMe(c);
  `;
  const f = spawn(process.execPath, ['--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  f.stdout.resume();
  f.stderr.resume();
  // 'close' waits for the file's pipes too: a watchdog holding them would hold this.
  const [exit] = (await withDeadline(once(f, 'close'), 10_000, 'the file ending with its child')) as [number];
  assert.equal(exit, 0);
});

test('a pid taken by another process since it was registered is not signalled', async () => {
  const spawnIdle = () => spawn(process.execPath, ['-e', IDLE], { stdio: 'ignore' });
  const ours = spawnIdle();
  const bystander = spawnIdle();
  try {
    assert.ok(ours.pid !== undefined && bystander.pid !== undefined);
    const registry = join(tmpdir(), `sluice-reaper-test-${process.pid}.txt`);
    // The bystander's pid, registered with a start time it does not have: as if its pid were reused.
    writeFileSync(
      registry,
      `watch ${ours.pid} SIGTERM ${startTime(ours.pid)}\nwatch ${bystander.pid} SIGTERM 1\n`,
    );
    const watchdog = spawn(process.execPath, [WATCH, registry], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    await withDeadline(once(watchdog, 'spawn'), 5_000, 'the watchdog starting');
    watchdog.disconnect();
    assert.ok(await gone(ours.pid, 5_000), 'the registered process is stopped');
    await withDeadline(once(watchdog, 'exit'), 10_000, 'the watchdog ending');
    assert.ok(alive(bystander.pid), 'the process that has the pid now is left alone');
  } finally {
    ours.kill('SIGKILL');
    bystander.kill('SIGKILL');
  }
});
