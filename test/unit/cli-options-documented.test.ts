/**
 * Every option a `sluice` command's parser accepts is described in its `--help` and listed on its
 * line of the README's CLI block, and neither lists an option the parser would refuse: the three
 * drift apart silently otherwise (the README once lacked `call --task`, the `task` command and four
 * `serve` options that `--help` described).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CALL_COMMAND } from '../../src/cli/spec/call.js';
import { DOCTOR_COMMAND } from '../../src/cli/spec/doctor.js';
import { LOGIN_COMMAND, LOGOUT_COMMAND } from '../../src/cli/spec/login.js';
import { SERVE_COMMAND } from '../../src/cli/spec/serve.js';
import { TOOLS_COMMAND } from '../../src/cli/spec/tools.js';
import { TOP_COMMAND } from '../../src/cli/spec/top.js';
import { TASK_COMMAND } from '../../src/cli/task.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const COMMANDS = [
  SERVE_COMMAND,
  CALL_COMMAND,
  TASK_COMMAND,
  TOOLS_COMMAND,
  DOCTOR_COMMAND,
  TOP_COMMAND,
  LOGIN_COMMAND,
  LOGOUT_COMMAND,
];

/** The options a help text describes: those that open one of its lines (`  --name …`). */
function described(help: string): Set<string> {
  return new Set([...help.matchAll(/^\s+(?:-\w, )?--([a-z][a-z0-9-]*)/gm)].map((m) => m[1] ?? ''));
}

/** The README's CLI block (the fenced block that opens with `sluice serve`), by command. */
function readmeLines(): Map<string, string> {
  const readme = readFileSync(join(repoRoot(), 'README.md'), 'utf8');
  const block = /\n```\n(sluice serve[\s\S]*?)\n```/.exec(readme)?.[1];
  assert.ok(block !== undefined, "the README's CLI block (a fence opening with 'sluice serve')");
  const by = new Map<string, string>();
  let current = '';
  for (const line of block.split('\n')) {
    const name = /^sluice ([a-z]+)/.exec(line)?.[1];
    if (name !== undefined) current = name;
    by.set(current, `${by.get(current) ?? ''} ${line}`);
  }
  return by;
}

describe('every CLI option is described in --help and listed in the README', () => {
  const readme = readmeLines();
  for (const c of COMMANDS) {
    const options = Object.keys(c.options);
    test(`sluice ${c.command}`, () => {
      const help = described(c.help);
      for (const o of options) assert.ok(help.has(o), `--${o} is accepted but not described in --help`);
      for (const o of help)
        assert.ok(options.includes(o) || o === 'help', `--help describes --${o}, which is refused`);
      const line = readme.get(c.command);
      assert.ok(line !== undefined, `the README's CLI block has no line for 'sluice ${c.command}'`);
      const listed = new Set([...line.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1] ?? ''));
      for (const o of options) assert.ok(listed.has(o), `the README's 'sluice ${c.command}' lacks --${o}`);
      for (const o of listed)
        assert.ok(options.includes(o), `the README's 'sluice ${c.command}' lists --${o}, which is refused`);
    });
  }
});

/**
 * Every check `sluice doctor` reports is named in its `--help` and has a row in docs/deploy.md's
 * table: the `forwarding` check had neither, so a user met a verdict no document explained. The
 * ids are read from the checks' sources (`id: '…'`), where a new check must declare its own.
 */
test('every sluice doctor check is in its --help and in docs/deploy.md', () => {
  const dir = join(repoRoot(), 'src', 'doctor');
  const ids = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.startsWith('check-') && f.endsWith('.ts'))) {
    for (const m of readFileSync(join(dir, file), 'utf8').matchAll(/\bid: '([a-z-]+)'/g)) ids.add(m[1] ?? '');
  }
  assert.ok(ids.size >= 8, `found the checks' ids: ${[...ids].join(', ')}`);
  const deploy = readFileSync(join(repoRoot(), 'docs', 'deploy.md'), 'utf8');
  for (const id of ids) {
    assert.match(
      DOCTOR_COMMAND.help,
      new RegExp(`\\b${id}\\b`),
      `sluice doctor --help does not name '${id}'`,
    );
    assert.ok(deploy.includes(`\n| \`${id}\` |`), `docs/deploy.md's table of checks has no row for '${id}'`);
  }
});

/**
 * docs/client.md's CLI section gives each client command's synopsis too (and docs/authorization.md
 * login's): they lacked `call --task`, `tools --header/--token` and `login --timeout-seconds`.
 */
test("docs/client.md's and docs/authorization.md's synopses list every option the command accepts", () => {
  const synopses = [
    ...readFileSync(join(repoRoot(), 'docs', 'client.md'), 'utf8').matchAll(/^- `sluice ([a-z]+) ([^`]*)`/gm),
    ...readFileSync(join(repoRoot(), 'docs', 'authorization.md'), 'utf8').matchAll(
      /^sluice (login) (https:.*)$/gm,
    ),
  ];
  const seen = new Set<string>();
  for (const [, name, text] of synopses) {
    const c = COMMANDS.find((x) => x.command === name);
    if (c === undefined) continue;
    seen.add(`${name}`);
    const listed = new Set([...(text ?? '').matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1] ?? ''));
    for (const o of Object.keys(c.options))
      assert.ok(listed.has(o), `the synopsis of 'sluice ${name}' lacks --${o}`);
    for (const o of listed)
      assert.ok(o in c.options, `the synopsis of 'sluice ${name}' lists --${o}, which is refused`);
  }
  assert.deepEqual([...seen].sort(), ['call', 'login', 'tools']);
});
