// `sluice call --task` and `sluice task get|cancel`, spawned as real processes against `sluice serve`: the task
// id printed at once, the result at the end; the progress of a call the server holds before it would become a
// task; a running task read and cancelled from "another terminal" (the
// running call then ends with exit 3, saying it was cancelled); a server gone mid-task makes the call give up
// after --timeout (exit 3, how to read the task later) rather than poll on; an unknown id is exit 3; usage
// errors exit 2. A CLI process still running at its deadline or at the end is killed, never left behind.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withDeadline } from '../helpers/deadline.js';
import { until } from '../helpers/http.js';
import { type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** CLI processes not yet exited: killed at their deadline and after the suite. */
const running = new Set<ChildProcess>();

function sluice(args: string[], live?: (r: Run) => void): Promise<Run> {
  const r: Run = { code: null, stdout: '', stderr: '' };
  let child: ChildProcess | undefined;
  const run = new Promise<Run>((resolve, reject) => {
    const c = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    running.add(c);
    c.on('exit', () => running.delete(c));
    c.stdout.on('data', (d: Buffer) => {
      r.stdout += d.toString();
      live?.(r);
    });
    c.stderr.on('data', (d: Buffer) => {
      r.stderr += d.toString();
      live?.(r);
    });
    c.on('error', reject);
    c.on('close', (code) => {
      r.code = code;
      resolve(r);
    });
  });
  return withDeadline(run, 30_000, `sluice ${args.join(' ')}`).catch((error: unknown) => {
    child?.kill('SIGKILL');
    throw error;
  });
}

describe('sluice call --task, sluice task get|cancel', () => {
  let server: SpawnedServe;
  before(async () => {
    server = await spawnServe();
  });
  after(async () => {
    for (const c of running) c.kill('SIGKILL');
    await server.close();
  });

  test('call --task prints the task id, then the result', async () => {
    const r = await sluice([
      'call',
      server.url,
      'slow_compute',
      '--arg',
      'seconds=1',
      '--arg',
      'label=t1',
      '--task',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^task [A-Za-z0-9_-]{43}$/m);
    assert.equal(r.stdout.trim(), 'computed t1 after 1s');
  });

  test('call --task --json: the progress a server sends while it holds the call, then the result', async () => {
    // `reindex` is an optional task tool: 5 documents, 20 ms each, end within the demo's 250 ms hold, so
    // the server answers directly, its progress on the call's own answer (docs/tasks.md). On a machine
    // slow enough to outlast the hold the call becomes a task after the first progress: the same lines.
    const r = await sluice([
      'call',
      server.url,
      'reindex',
      '--arg',
      'corpus=cli-held',
      '--arg',
      'docs=5',
      '--arg',
      'delayMs=20',
      '--task',
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; message?: string; progress?: number; total?: number });
    const progress = lines.filter((l) => l.type === 'progress');
    assert.ok(progress.length > 0, `progress lines: ${r.stdout}`);
    assert.match(progress[0]?.message ?? '', /^indexed \d\/5 of cli-held$/);
    assert.equal(progress[0]?.total, 5);
    assert.equal(lines.at(-1)?.type, 'result', r.stdout);
    assert.match(r.stdout, /reindexed 5 docs/);
  });

  test("call --task: partial output while the server holds the call goes to stdout as a plain call's, not as progress", async () => {
    // `generate` is an optional task tool streaming one delta per word; 30 words at 1 ms end within the hold.
    const args = [
      'call',
      server.url,
      'generate',
      '--arg',
      'words=30',
      '--arg',
      'delayMs=1',
      '--arg',
      'seed=7',
      '--task',
    ];
    const [text, json] = await Promise.all([sluice(args), sluice([...args, '--json'])]);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(json.code, 0, json.stderr);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; text?: string; content?: { text?: string }[] });
    const deltas = lines.filter((l) => l.type === 'partial');
    assert.ok(deltas.length > 1, `partial lines: ${json.stdout}`);
    assert.deepEqual(
      lines.filter((l) => l.type === 'progress'),
      [],
      'no delta shown as progress',
    );
    const full = lines.at(-1)?.content?.[0]?.text ?? '';
    assert.equal(lines.at(-1)?.type, 'result');
    assert.equal(deltas.map((l) => l.text).join(''), full, 'the deltas are the result, in order');
    // Text mode: the streamed text once (the result adds nothing to it), and no status lines on stderr.
    assert.equal(text.stdout, full.endsWith('\n') ? full : `${full}\n`);
    assert.doesNotMatch(text.stderr, /^ {2}/m);
  });

  test('a running task: get and cancel from another terminal', async () => {
    let seen: Run | undefined;
    const running = sluice(
      ['call', server.url, 'slow_compute', '--arg', 'seconds=60', '--task', '--json'],
      (r) => {
        seen = r;
      },
    );
    await until(() => /"taskId"/.test(seen?.stdout ?? ''), 10_000, 'the task id');
    const id = /"taskId":"([^"]+)"/.exec(seen?.stdout ?? '')?.[1] ?? '';
    const got = await sluice(['task', 'get', id, server.url]);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(JSON.parse(got.stdout).status, 'working');
    const cancelled = await sluice(['task', 'cancel', id, server.url]);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.deepEqual(JSON.parse(cancelled.stdout), { resultType: 'complete' });
    const end = await running;
    assert.equal(end.code, 3);
    assert.match(end.stdout, /was cancelled/);
    const after = await sluice(['task', 'get', id, server.url]);
    assert.equal(JSON.parse(after.stdout).status, 'cancelled');
  });

  test('a server gone mid-task: the call gives up after --timeout (exit 3) and says how to read it later', async () => {
    const doomed = await spawnServe();
    try {
      let seen: Run | undefined;
      const call = sluice(
        ['call', doomed.url, 'slow_compute', '--arg', 'seconds=60', '--task', '--timeout', '1500'],
        (r) => {
          seen = r;
        },
      );
      await until(() => /^task /m.test(seen?.stderr ?? ''), 10_000, 'the task id');
      const id = /^task ([A-Za-z0-9_-]+)$/m.exec(seen?.stderr ?? '')?.[1] ?? '';
      await doomed.close();
      const end = await call;
      assert.equal(end.code, 3, end.stderr);
      assert.match(end.stderr, /could not be reached for 1500 ms/);
      assert.ok(end.stderr.includes(`sluice task get ${id} ${doomed.url}`), end.stderr);
    } finally {
      await doomed.close();
    }
  });

  test('an unknown id is exit 3; a missing verb or id is a usage error', async () => {
    const unknown = await sluice(['task', 'get', 'no-such-task-id-0123456789', server.url]);
    assert.equal(unknown.code, 3);
    assert.match(unknown.stderr, /does not know task no-such-task-id-0123456789/);
    assert.equal((await sluice(['task', 'list', 'x', server.url])).code, 2);
    assert.equal((await sluice(['task', 'get', server.url])).code, 2);
  });

  test('an id beginning with "-" is an id, not an option, before or after the options', async () => {
    // A base64url id starts with "-" one time in 64 (any server's, not only Sluice's): CI once drew one.
    for (const args of [
      ['task', 'get', '-t0123456789', server.url],
      ['task', 'cancel', '-t0123456789', server.url, '--header', 'X-Probe: 1'],
      ['task', 'get', '--token=abc', '-t0123456789', server.url],
      ['task', 'get', '--token', 'abc', '-t0123456789', server.url],
      // A boolean option of the command stands alone: the word after it is still the id.
      ['task', 'get', '--follow-redirects', '-t0123456789', server.url],
    ]) {
      const r = await sluice(args);
      assert.equal(r.code, 3, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /does not know task -t0123456789/);
    }
    const unknownOption = await sluice(['task', 'get', 'x', server.url, '--tokn', 'T']);
    assert.equal(unknownOption.code, 2);
    assert.match(unknownOption.stderr, /Unknown option '--tokn'/);
  });
});
