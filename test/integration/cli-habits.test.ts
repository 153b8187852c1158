// The `sluice` command's habits, spawned as real processes against real servers on 127.0.0.1: --help and
// --version, one line per tool, short usage errors that name what was wrong, hints for a URL without its
// scheme and for TLS mistakes, a clear word when a tool needs sampling or elicitation, and server logs on stderr.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import { makeCert, type TestCert } from '../helpers/certs.js';
import { runProcess } from '../helpers/run-process.js';

const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI run to its end (killed past the deadline, not left behind). */
async function sluice(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const r = await runProcess(process.execPath, [cli, ...args], {
    ms: 20_000,
    label: `sluice ${args.join(' ')}`,
    env: { ...process.env, ...env },
  });
  return { code: r.code, stdout: r.out, stderr: r.err };
}

const lines = (text: string) => text.trimEnd().split('\n');

/** A usage error: exit 2, nothing on stdout, the reason, one line of usage and the hint — three lines. */
function assertUsage(run: Run, command: string, reason: RegExp): void {
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.stdout, '');
  const [first, usage, hint, ...rest] = lines(run.stderr);
  assert.match(first ?? '', new RegExp(`^sluice ${command}: ${reason.source}`));
  assert.match(usage ?? '', new RegExp(`^usage: sluice ${command} `));
  assert.equal(hint, `run 'sluice ${command} --help' for the options`);
  assert.deepEqual(rest, [], 'no more than three lines');
}

describe('sluice: --help, --version, bare usage', () => {
  test('sluice --help exits 0 with the command list on stdout; -h and help too', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const run = await sluice([flag]);
      assert.equal(run.code, 0, `${flag}: ${run.stderr}`);
      assert.match(run.stdout, /^usage: sluice <command> \[options\]/);
      assert.match(run.stdout, /^ {2}tools URL /m);
      assert.equal(run.stderr, '');
    }
  });

  test('sluice --version prints the package version', async () => {
    for (const flag of ['--version', '-V']) {
      const run = await sluice([flag]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, `sluice ${pkg.version}\n`);
    }
  });

  test('no command, or an unknown one: the reason, one line of usage and a hint (a near miss named)', async () => {
    const none = await sluice([]);
    assert.equal(none.code, 2);
    assert.equal(
      none.stderr,
      "sluice: expected a command\nusage: sluice <serve|call|task|tools|doctor|top|login|logout> [options]\nrun 'sluice --help' for the commands\n",
    );
    const typo = await sluice(['dcotor']);
    assert.equal(typo.code, 2);
    assert.match(
      typo.stderr,
      /^sluice: unknown command 'dcotor'\nusage: sluice <[^\n]*\ndid you mean 'doctor'\? run 'sluice --help' for the commands\n$/,
    );
    const unknown = await sluice(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /^sluice: unknown command 'frobnicate'\nusage: sluice <[^\n]*\nrun 'sluice --help' for the commands\n$/,
    );
    const option = await sluice(['--frob']);
    assert.match(option.stderr, /^sluice: unknown option '--frob'\n/);
  });
});

describe('sluice: every command reads its arguments the same way', () => {
  const commands = ['serve', 'call', 'task', 'tools', 'doctor', 'top', 'login', 'logout'];

  test('an unknown option: exit 2, the reason, one line of usage, a hint; --help and -h: exit 0 on stdout', async () => {
    for (const command of commands) {
      assertUsage(await sluice([command, '--bogus']), command, /Unknown option '--bogus'/);
      for (const flag of ['--help', '-h']) {
        const help = await sluice([command, flag]);
        assert.equal(help.code, 0, `${command} ${flag}: ${help.stderr}`);
        assert.match(help.stdout, new RegExp(`^usage: sluice ${command} `), `${command} ${flag}`);
        assert.ok(help.stdout.endsWith('\n'), `${command} ${flag}: ends with a newline`);
        assert.equal(help.stderr, '');
      }
    }
  });

  test('a missing or extra positional is bad usage too', async () => {
    assertUsage(await sluice(['login']), 'login', /expected exactly one server URL$/);
    assertUsage(await sluice(['logout']), 'logout', /expected exactly one server URL$/);
    assertUsage(
      await sluice(['logout', 'http://127.0.0.1:1/mcp', 'extra']),
      'logout',
      /expected exactly one/,
    );
    assertUsage(await sluice(['top']), 'top', /give the URL of a server/);
    assertUsage(await sluice(['task', 'get']), 'task', /expected a task ID and a URL$/);
    assertUsage(await sluice(['serve', 'extra']), 'serve', /unexpected argument 'extra'/);
    assertUsage(
      await sluice(['login', 'http://127.0.0.1:1/mcp', '--client-secret', 's']),
      'login',
      /--client-secret needs --client-id$/,
    );
  });
});

describe('sluice call / tools against sluice serve', () => {
  let served: Served;
  before(async () => {
    served = await serve({ createServer: createDemoServer, port: 0 });
  });
  after(async () => {
    await served.close({ graceMs: 100 });
  });

  test('sluice tools prints one line per tool: name, parameters, description; --schema adds the schemas', async () => {
    const list = await sluice(['tools', served.url, '--json']);
    const tools = JSON.parse(list.stdout) as { name: string }[];
    const run = await sluice(['tools', served.url]);
    assert.equal(run.code, 0, run.stderr);
    const out = lines(run.stdout);
    assert.equal(out.length, tools.length, 'one line per tool');
    assert.deepEqual(
      out.map((l) => l.split(' ')[0]),
      tools.map((t) => t.name),
    );
    assert.match(run.stdout, /^echo text {2,}Returns its input text$/m);
    assert.match(run.stdout, /^reindex corpus \[docs\] \[delayMs\] {2,}Pretends to reindex/m);
    assert.ok(
      out.every((l) => l.length <= 200),
      'descriptions are cut to one short line',
    );
    assert.doesNotMatch(run.stdout, /"type"/, 'no schema without --schema');
    const schema = await sluice(['tools', served.url, '--schema']);
    assert.equal(schema.code, 0, schema.stderr);
    assert.match(schema.stdout, /^echo text .*\n {2}\{\n {4}"type": "object",/m);
  });

  test('an unknown --arg key is a usage error naming the key and the tool’s parameters', async () => {
    const run = await sluice(['call', served.url, 'reindex', '--arg', 'corpsu=docs']);
    assertUsage(
      run,
      'call',
      /--arg corpsu: the tool 'reindex' has no parameter 'corpsu'; its parameters: corpus \[docs\] \[delayMs\]$/,
    );
  });

  test('usage errors print the reason, one line of usage and a hint', async () => {
    assertUsage(await sluice(['call', served.url]), 'call', /expected URL and TOOL$/);
    assertUsage(
      await sluice(['call', served.url, 'echo', 'text=hi']),
      'call',
      /unexpected 'text=hi' after TOOL: pass each argument as --arg text=hi$/,
    );
    assertUsage(
      await sluice(['call', served.url, 'echo', '{"text":"hi"}']),
      'call',
      /unexpected '\{"text":"hi"\}' after TOOL: pass a JSON object of arguments as --args '\{"text":"hi"\}'$/,
    );
    assertUsage(
      await sluice(['call', served.url, 'echo', 'sleep']),
      'call',
      /unexpected 'sleep' after TOOL: sluice call takes one tool; pass its arguments as --arg k=v or --args JSON$/,
    );
    assertUsage(await sluice(['call', served.url, 'echo', '--bogus']), 'call', /Unknown option '--bogus'/);
    assertUsage(await sluice(['tools']), 'tools', /expected a URL$/);
    assertUsage(await sluice(['tools', served.url, '--bogus']), 'tools', /Unknown option '--bogus'/);
    assertUsage(await sluice(['doctor']), 'doctor', /expected exactly one URL$/);
    assertUsage(await sluice(['serve', '--port', 'x']), 'serve', /--port must be an integer/);
    assertUsage(
      await sluice(['call', served.url, 'sleep', '--arg', 'ms=soon']),
      'call',
      /--arg ms: the tool expects a number/,
    );
  });

  test('--args errors name --args', async () => {
    assertUsage(
      await sluice(['call', served.url, 'echo', '--args', '{text:1}']),
      'call',
      /--args is not valid JSON \(/,
    );
    assertUsage(
      await sluice(['call', served.url, 'echo', '--args', '[1]']),
      'call',
      /--args must be a JSON object/,
    );
  });

  test('a URL without a scheme suggests http://', async () => {
    const bare = served.url.replace(/^http:\/\//, '');
    assertUsage(
      await sluice(['call', bare, 'echo', '--arg', 'text=x']),
      'call',
      /'[^']+' has no http:\/\/ or https:\/\/ scheme; did you mean http:\/\//,
    );
    const host = `localhost:${new URL(served.url).port}/mcp`;
    const run = await sluice(['tools', host]);
    assertUsage(
      run,
      'tools',
      new RegExp(`'${host}' has no http:// or https:// scheme; did you mean http://${host} \\?$`),
    );
  });

  test('https:// to a plain HTTP port says to use http://', async () => {
    const https = served.url.replace(/^http:/, 'https:');
    const run = await sluice(['call', https, 'echo', '--arg', 'text=x']);
    assert.equal(run.code, 3, run.stderr);
    assert.equal(lines(run.stderr).length, 1);
    assert.ok(
      run.stderr.includes(`does not speak TLS: it is a plain HTTP port; use ${served.url})`),
      run.stderr,
    );
  });

  test('a tool that needs sampling or elicitation: the CLI says it does not provide them', async () => {
    const sampling = await sluice(['call', served.url, 'test_sampling', '--arg', 'prompt=hi']);
    assert.equal(sampling.code, 1, sampling.stderr);
    assert.match(
      sampling.stderr,
      /^sluice call: tool 'test_sampling' failed: .*the sluice CLI does not provide sampling/,
    );
    assert.doesNotMatch(sampling.stderr, /Method not found/);
    const elicit = await sluice(['call', served.url, 'test_elicitation', '--arg', 'message=who?']);
    assert.equal(elicit.code, 1, elicit.stderr);
    assert.match(elicit.stderr, /the sluice CLI does not provide elicitation/);
  });

  test('notifications/message log records are shown on stderr, the result on stdout', async () => {
    const run = await sluice(['call', served.url, 'test_tool_with_logging']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^log info: Tool execution started$/m);
    assert.match(run.stderr, /^log info: Tool execution completed$/m);
    assert.equal(run.stdout, 'Tool with logging executed successfully\n');
  });
});

describe('sluice call against an HTTPS server with a self-signed certificate', () => {
  let served: Served | undefined;
  let cert: TestCert | undefined;
  let skip: string | undefined;
  before(async () => {
    const made = makeCert();
    if (typeof made === 'string') {
      skip = made;
      return;
    }
    cert = made;
    served = await serve({
      createServer: createDemoServer,
      port: 0,
      tls: { key: made.key, cert: made.cert },
    });
  });
  after(async () => {
    await served?.close({ graceMs: 100 });
    cert?.remove();
  });

  test('the error says how to trust the certificate, and doing that works', async (t) => {
    if (skip !== undefined || served === undefined || cert === undefined) {
      t.skip(`SKIPPED LOUDLY: no self-signed certificate (${skip})`);
      return;
    }
    assert.match(served.url, /^https:/);
    const run = await sluice(['call', served.url, 'echo', '--arg', 'text=x']);
    assert.equal(run.code, 3, run.stderr);
    assert.equal(lines(run.stderr).length, 1);
    assert.match(run.stderr, /is not trusted, e\.g\. self-signed: run with NODE_EXTRA_CA_CERTS=/);
    const trusted = await sluice(['call', served.url, 'echo', '--arg', 'text=x'], {
      NODE_EXTRA_CA_CERTS: cert.certFile,
    });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.equal(trusted.stdout, 'x\n');
    // And http:// to the TLS port says to try https://.
    const plain = await sluice(['tools', served.url.replace(/^https:/, 'http:')]);
    assert.equal(plain.code, 3, plain.stderr);
    assert.ok(plain.stderr.includes(`use ${served.url})`), plain.stderr);
  });
});
