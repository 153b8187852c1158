// `sluice doctor` as a process against a local Sluice server (no proxy): it says up front how long it
// will take, shows progress while it holds the idle stream, and --quick skips the hold (saying what that
// gives up) and exits promptly; bad usage exits 2 with the usage.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createDemoServer } from '../../src/demo/demo-server.js';
import type { DoctorReport } from '../../src/doctor/types.js';
import { type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const CLI = join(repoRoot(), 'dist', 'src', 'cli', 'main.js');

interface Run {
  code: number | null;
  out: string;
  /** stderr lines with the ms since start at which each arrived. */
  lines: { at: number; text: string }[];
}

function doctor(args: string[], ms: number): Promise<Run> {
  let spawned: ChildProcess | undefined;
  return withDeadline(
    new Promise<Run>((resolve) => {
      const start = Date.now();
      const c = spawn(process.execPath, [CLI, 'doctor', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      spawned = c;
      let out = '';
      let partial = '';
      const lines: Run['lines'] = [];
      c.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      c.stderr.setEncoding('utf8').on('data', (d: string) => {
        partial += d;
        const parts = partial.split('\n');
        partial = parts.pop() ?? '';
        for (const text of parts) lines.push({ at: Date.now() - start, text });
      });
      c.on('close', (code) => resolve({ code, out, lines }));
    }),
    ms,
    `sluice doctor ${args.join(' ')}`,
  ).catch((error: unknown) => {
    // A process still running at the deadline is killed, not left behind.
    spawned?.kill('SIGKILL');
    throw error;
  });
}

describe('sluice doctor (CLI)', () => {
  let served: Served;
  before(async () => {
    served = await serve({ createServer: createDemoServer, port: 0 });
  });
  after(async () => {
    await served.close({ graceMs: 100 });
  });

  test('says how long it will take, then shows progress while the idle stream is held', async () => {
    const run = await doctor([served.url, '--idle-seconds', '3', '--json'], 60_000);
    assert.equal(run.code, 0, run.lines.map((l) => l.text).join('\n'));
    assert.match(
      run.lines[0]?.text ?? '',
      /^sluice doctor: about 5 s: a quiet stream is held 3 s to find idle timeouts \(--quick skips that\)$/,
    );
    const progress = run.lines.filter((l) => /^… idle: \d s of 3 s held$/.test(l.text));
    assert.ok(progress.length >= 2, `progress lines while holding: ${JSON.stringify(run.lines)}`);
    assert.deepEqual(
      progress.map((l) => l.text),
      progress.map((_, i) => `… idle: ${i + 1} s of 3 s held`),
    );
    const report = JSON.parse(run.out) as DoctorReport;
    // Held 3 s without being cut; the default 15 s keepalive did not fire in that time, hence the warning.
    const idle = report.verdicts.find((v) => v.id === 'idle');
    assert.equal(idle?.status, 'warn');
    assert.match(idle?.reason ?? '', /survived 3 s/);
  });

  test('--quick skips the idle hold, says what that gives up, and exits promptly', async () => {
    const run = await doctor([served.url, '--quick', '--json'], 60_000);
    assert.equal(run.code, 0);
    assert.equal(run.lines[0]?.text, 'sluice doctor: a few seconds (--quick: the idle check is skipped)');
    assert.ok(!run.lines.some((l) => /idle: \d/.test(l.text)), 'no hold, no progress');
    const report = JSON.parse(run.out) as DoctorReport;
    const idle = report.verdicts.find((v) => v.id === 'idle');
    assert.equal(idle?.status, 'skip');
    assert.match(idle?.reason ?? '', /--quick.*idle timeouts on the path .* are not known/);
    for (const id of [
      'initialize',
      'buffering',
      'headers',
      'unknown-session',
      'method-not-allowed',
      'delete',
    ])
      assert.ok(
        report.verdicts.some((v) => v.id === id),
        `${id} still runs`,
      );
  });

  test('bad usage exits 2 with the reason and one line of usage on stderr', async () => {
    for (const [args, reason] of [
      [[], /^sluice doctor: expected exactly one URL$/],
      [[served.url, '--bogus'], /^sluice doctor: Unknown option '--bogus'/],
      [[served.url, '--idle-seconds', '0'], /^sluice doctor: --idle-seconds must be a number >= 1$/],
      [['not a url'], /^sluice doctor: 'not a url' is not a URL$/],
    ] as const) {
      const run = await doctor([...args], 20_000);
      assert.equal(run.code, 2, `doctor ${args.join(' ')}`);
      assert.match(run.lines[0]?.text ?? '', reason);
      assert.ok(
        run.lines.some((l) => l.text.startsWith('usage: sluice doctor URL [--header')),
        `usage after: ${args.join(' ')}`,
      );
      assert.equal(run.out, '');
    }
  });
});
