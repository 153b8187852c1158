// `sluice call` and `sluice tools`, spawned as real processes against real servers on 127.0.0.1.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { generateText } from '../../src/demo/generate.js';
import { type Served, serve } from '../../src/server/index.js';
import { freePort } from '../helpers/daemon.js';
import { runProcess } from '../helpers/run-process.js';
import { type SdkServer, startSdkServer } from '../helpers/sdk-reference-server.js';

const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to its end within the deadline; a process still running then is killed, not left behind. */
async function runCli(args: string[], label: string, ms = 20_000): Promise<Run> {
  const r = await runProcess(process.execPath, [cli, ...args], { ms, label });
  return { code: r.code, stdout: r.out, stderr: r.err };
}

/** `--arg k=v` for each `k=v`. */
function withArgs(...pairs: string[]): string[] {
  return pairs.flatMap((p) => ['--arg', p]);
}

/** stdout of a --json run: one JSON object per line. */
function ndjson(stdout: string): Record<string, unknown>[] {
  return stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/mcp`;
}

describe('sluice call / sluice tools against sluice serve', () => {
  let served: Served;
  before(async () => {
    served = await serve({ createServer: createDemoServer, port: 0 });
  });
  after(async () => {
    await served.close({ graceMs: 100 });
  });

  test('--json prints one NDJSON line per progress event, then the result', async () => {
    const run = await runCli(
      ['call', served.url, 'reindex', ...withArgs('corpus=docs', 'docs=7', 'delayMs=2'), '--json'],
      'sluice call --json',
    );
    assert.equal(run.code, 0, run.stderr);
    const lines = ndjson(run.stdout);
    assert.equal(lines.length, 8);
    lines.slice(0, 7).forEach((line, i) => {
      assert.equal(line['type'], 'progress');
      assert.equal(line['progress'], i + 1);
      assert.equal(line['total'], 7);
      assert.equal(typeof line['elapsedMs'], 'number');
    });
    assert.equal(lines[7]?.['type'], 'result');
    assert.deepEqual(lines[7]?.['content'], [{ type: 'text', text: 'reindexed 7 docs' }]);
  });

  test('plain mode (not a TTY): progress lines on stderr, the result on stdout', async () => {
    const run = await runCli(
      ['call', served.url, 'reindex', ...withArgs('corpus=docs', 'docs=3', 'delayMs=2')],
      'sluice call',
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'reindexed 3 docs\n');
    assert.match(run.stderr, /^progress 1\/3 \(33%\) indexed 1\/3 of docs$/m);
    assert.match(run.stderr, /^progress 3\/3 \(100%\)/m);
  });

  test('partial output: the text goes to stdout as it arrives (a pipe), the result is not repeated', async () => {
    const run = await runCli(
      ['call', served.url, 'generate', ...withArgs('words=150', 'delayMs=1', 'seed=9')],
      'sluice call generate',
    );
    assert.equal(run.code, 0, run.stderr);
    const text = generateText(150, 9);
    assert.equal(run.stdout, text.endsWith('\n') ? text : `${text}\n`, 'the text exactly once');
  });

  test('partial output with --json: one partial line per delta, in order, then the result line', async () => {
    const run = await runCli(
      ['call', served.url, 'generate', ...withArgs('words=60', 'delayMs=0', 'seed=4'), '--json'],
      'sluice call generate --json',
    );
    assert.equal(run.code, 0, run.stderr);
    const lines = ndjson(run.stdout);
    const partials = lines.filter((l) => l['type'] === 'partial');
    assert.ok(partials.length > 0 && partials.length <= 60);
    assert.equal(partials.map((l) => l['text']).join(''), generateText(60, 4));
    assert.equal(lines.at(-1)?.['type'], 'result');
    assert.equal(
      lines.findIndex((l) => l['type'] === 'result'),
      lines.length - 1,
      'the result comes last',
    );
  });

  test('off a TTY, counter progress is throttled to a line per second (4,096 events)', async () => {
    const started = Date.now();
    const run = await runCli(
      ['call', served.url, 'reindex', ...withArgs('corpus=big', 'delayMs=0')],
      'sluice call reindex',
      30_000,
    );
    const seconds = (Date.now() - started) / 1000;
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stderr.split('\n').filter((l) => l.startsWith('progress '));
    assert.ok(lines.length <= Math.ceil(seconds) + 2, `${lines.length} lines in ${seconds.toFixed(1)} s`);
    assert.match(run.stderr, /^progress 4096\/4096 \(100%\)/m, 'the final state is shown');
  });

  test('--args JSON and --arg coercion reach the tool', async () => {
    const run = await runCli(['call', served.url, 'echo', '--args', '{"text":"42"}'], 'sluice call echo');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, '42\n');
  });

  test('an unknown tool exits 1 with one line on stderr that points at sluice tools, nothing on stdout', async () => {
    const run = await runCli(['call', served.url, 'no_such_tool'], 'sluice call unknown');
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '', 'the error is not printed twice');
    assert.equal(run.stderr.trim().split('\n').length, 1);
    assert.match(run.stderr, /^sluice call: tool 'no_such_tool' failed: .*Tool no_such_tool not found/);
    assert.ok(
      run.stderr.includes(`the server lists no tool 'no_such_tool'; 'sluice tools ${served.url}' lists the`),
      run.stderr,
    );
  });

  test('--arg values are coerced by the tool inputSchema: a string property keeps "5" a string', async () => {
    const run = await runCli(['call', served.url, 'echo', ...withArgs('text=5')], 'echo 5');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, '5\n');
    const t = await runCli(['call', served.url, 'echo', ...withArgs('text=true')], 'echo true');
    assert.equal(t.stdout, 'true\n', t.stderr);
  });

  test('an --arg value that does not fit its schema type is bad usage: exit 2 naming the arg, then the usage', async () => {
    const run = await runCli(['call', served.url, 'sleep', ...withArgs('ms=soon')], 'sleep soon');
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.match(
      run.stderr,
      /^sluice call: --arg ms: the tool expects a number, got 'soon'\nusage: sluice call URL TOOL/,
    );
  });

  test('sluice tools lists tools with their input schemas', async () => {
    const run = await runCli(['tools', served.url, '--json'], 'sluice tools');
    assert.equal(run.code, 0, run.stderr);
    const tools = JSON.parse(run.stdout) as {
      name: string;
      inputSchema: { properties?: Record<string, unknown> };
    }[];
    const reindex = tools.find((t) => t.name === 'reindex');
    assert.ok(reindex !== undefined);
    assert.ok(reindex.inputSchema.properties?.['corpus'] !== undefined);
    const text = await runCli(['tools', served.url, '--schema'], 'sluice tools text');
    assert.match(text.stdout, /^echo text /m);
    assert.match(text.stdout, /"text": \{/);
  });

  test('a server that moved to another origin: refused with a hint, followed with --follow-redirects', async () => {
    // Another port is another origin: every request there is sent on to the demo server with a 307.
    const moved = createServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: served.url }).end();
    });
    await new Promise<void>((resolve) => moved.listen(0, '127.0.0.1', resolve));
    const at = `http://127.0.0.1:${(moved.address() as AddressInfo).port}/mcp`;
    try {
      const refused = await runCli(['tools', at, '--json'], 'sluice tools, redirected');
      assert.equal(refused.code, 3, refused.stderr);
      assert.match(refused.stderr, /HTTP 307 \(redirect to .* not followed.*pass --follow-redirects/);
      const followed = await runCli(
        ['tools', at, '--json', '--follow-redirects'],
        'sluice tools --follow-redirects',
      );
      assert.equal(followed.code, 0, followed.stderr);
      const tools = JSON.parse(followed.stdout) as { name: string }[];
      assert.ok(tools.some((t) => t.name === 'echo'));
      const call = await runCli(
        ['call', at, 'echo', ...withArgs('text=moved'), '--follow-redirects', '--json'],
        'sluice call --follow-redirects',
      );
      assert.equal(call.code, 0, call.stderr);
      assert.match(call.stdout, /moved/);
    } finally {
      await new Promise((resolve) => moved.close(resolve));
    }
  });
});

describe('sluice call: failures and Ctrl-C', () => {
  let server: SdkServer;
  before(async () => {
    server = await startSdkServer();
  });
  after(async () => {
    await server.close();
  });

  test('a transport failure exits 3 with a one-line reason', async () => {
    const run = await runCli(['call', await closedPortUrl(), 'echo', ...withArgs('text=x')], 'call');
    assert.equal(run.code, 3);
    assert.equal(run.stderr.trim().split('\n').length, 1);
    assert.match(run.stderr, /^sluice call: POST http:\/\/127\.0\.0\.1:\d+\/mcp failed/);
  });

  test('bad usage exits 2 with the reason and one line of usage on stderr', async () => {
    const run = await runCli(['call', server.url], 'call usage');
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^sluice call: expected URL and TOOL\nusage: sluice call URL TOOL /);
    const flag = await runCli(['call', server.url, 'echo', '--bogus'], 'call --bogus');
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /^sluice call: Unknown option '--bogus'.*\nusage: sluice call URL TOOL/);
    const arg = await runCli(['call', server.url, 'echo', '--arg', 'novalue'], 'call --arg');
    assert.equal(arg.code, 2);
    assert.match(arg.stderr, /^sluice call: --arg expects k=v, got 'novalue'\nusage: sluice call URL TOOL/);
  });

  test('Ctrl-C sends notifications/cancelled and exits 130', async () => {
    let child: ChildProcess | undefined;
    // 10 s for the call to reach the server, then 10 s for the interrupted process to exit.
    const done = runProcess(process.execPath, [cli, 'call', server.url, 'sleep', ...withArgs('ms=10000')], {
      ms: 20_000,
      label: 'interrupted call',
      onSpawn: (c) => {
        child = c;
      },
    });
    const started = Date.now();
    while (!server.log.some((r) => r.rpcMethod === 'tools/call')) {
      assert.ok(Date.now() - started < 10_000, 'tools/call reached the server');
      await new Promise((r) => setTimeout(r, 20));
    }
    child?.kill('SIGINT');
    const run = await done;
    assert.equal(run.code, 130, run.err);
    assert.ok(server.log.some((r) => r.rpcMethod === 'notifications/cancelled'));
  });
});
