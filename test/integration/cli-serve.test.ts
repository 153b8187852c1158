// `sluice serve` as a process: its one stdout line, its flags (auth token, metrics, JSON logs,
// stateless, mode), bad flags, and a graceful exit on SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { JsonRpcCode as C } from '../../src/jsonrpc/codes.js';
import { withDeadline } from '../helpers/deadline.js';
import { assertRefusal, initializeBody, open, RawSession, send, toolCall, until } from '../helpers/http.js';
import { modernBody, modernHeaders, modernSend } from '../helpers/modern.js';
import { repoRoot, spawnServe } from '../helpers/spawn-serve.js';

const CLI = join(repoRoot(), 'dist', 'src', 'cli', 'main.js');
const TASKS_EXT = 'io.modelcontextprotocol/tasks';

describe('sluice serve flags', () => {
  test('--auth-token: 401 without the token, 200 with it; the env variable works the same', async () => {
    const srv = await spawnServe(['--auth-token', 'demo-token-123']);
    after(() => srv.close());
    await assert.rejects(new RawSession(srv.url).init(), /401/);
    const ok = new RawSession(srv.url, { authorization: 'Bearer demo-token-123' });
    await ok.init();
    assert.equal((await ok.post(toolCall('echo', { text: 'hi' }))).json().result.content[0].text, 'hi');
  });

  test('--metrics serves /metrics; --log json writes JSON lines with hashed session ids', async () => {
    const srv = await spawnServe(['--metrics', '--log', 'json']);
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const m = await send(srv.url.replace(/\/mcp$/, '/metrics'));
    assert.equal(m.status, 200);
    assert.match(m.text, /^sluice_sessions_active 1$/m);
    await until(() => srv.stderr().includes('"session.start"'), 2_000, 'session.start log line');
    const line =
      srv
        .stderr()
        .split('\n')
        .find((l) => l.includes('"session.start"')) ?? '';
    const e = JSON.parse(line) as Record<string, unknown>;
    assert.match(String(e['session']), /^[0-9a-f]{8}$/);
    assert.ok(!srv.stderr().includes(String(s.sid)), 'the raw session id reached the log');
  });

  test('--max-sessions-per-client and --initialize-burst limit one client (429 + Retry-After)', async () => {
    const srv = await spawnServe(['--max-sessions-per-client', '2', '--initialize-burst', '10']);
    after(() => srv.close());
    await new RawSession(srv.url).init();
    await new RawSession(srv.url).init();
    const third = await new RawSession(srv.url).post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    assert.equal(third.status, 429);
    assert.equal(third.json().error.data.reason, 'client-session-limit');
    assert.ok(third.headers['retry-after'] !== undefined);
  });

  test("--max-concurrent-requests bounds one client's 2026-07-28 requests in flight (429 + Retry-After)", async () => {
    const srv = await spawnServe(['--max-concurrent-requests', '1', '--stream-after-ms', '50']);
    after(() => srv.close());
    const slow = modernBody('tools/call', { name: 'sleep', arguments: { ms: 20_000 } }, {}, 'slow');
    // The head arrives (as SSE after 50 ms) while the sleep runs: the one slot is taken.
    const first = await open(srv.url, {
      method: 'POST',
      headers: modernHeaders(slow),
      body: JSON.stringify(slow),
    });
    assert.equal(first.status, 200);
    const over = await modernSend(
      srv.url,
      modernBody('tools/call', { name: 'echo', arguments: { text: 'x' } }, {}, 'over'),
    );
    assert.equal(over.status, 429, over.text);
    assert.equal(over.headers['retry-after'], '1');
    assert.equal(over.json().id, 'over');
    first.destroy();
  });

  test('--stateless: no session header, GET 405; --mode sse answers echo as a stream', async () => {
    const stateless = await spawnServe(['--stateless']);
    after(() => stateless.close());
    const init = await new RawSession(stateless.url).post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    assert.equal(init.status, 200);
    assert.equal(init.headers['mcp-session-id'], undefined);
    const get = await send(stateless.url, { headers: { accept: 'text/event-stream' } });
    assert.equal(get.status, 405);
    const sse = await spawnServe(['--mode', 'sse']);
    after(() => sse.close());
    const s = new RawSession(sse.url);
    await s.init();
    const r = await s.post(toolCall('echo', { text: 'x' }));
    assert.equal(r.headers['content-type'], 'text/event-stream');
  });

  test('--task-after-ms: a quick reindex of a client that declared tasks is answered directly; 0 makes it a task', async () => {
    const declared = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXT]: {} } } };
    const call = () =>
      modernBody(
        'tools/call',
        { name: 'reindex', arguments: { corpus: 'c', docs: 2, delayMs: 0 } },
        declared,
      );
    // 10 s, not the default 250 ms: the answer must not depend on how loaded the machine is.
    const quick = await spawnServe(['--task-after-ms', '10000']);
    after(() => quick.close());
    const direct = await modernSend(quick.url, call());
    assert.equal(direct.status, 200, direct.text);
    assert.equal(direct.json().result.content[0].text, 'reindexed 2 docs');
    const atOnce = await spawnServe(['--task-after-ms', '0']);
    after(() => atOnce.close());
    const task = await modernSend(atOnce.url, call());
    assert.equal(task.json().result.resultType, 'task', task.text);
  });

  test('bad usage exits 2 with the reason and the usage on stderr; --help exits 0', async () => {
    const run = (args: string[]) =>
      withDeadline(
        new Promise<{ code: number | null; err: string; out: string }>((resolve) => {
          const c = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
          let err = '';
          let out = '';
          c.stderr.on('data', (d: Buffer) => (err += d));
          c.stdout.on('data', (d: Buffer) => (out += d));
          c.on('exit', (code) => resolve({ code, err, out }));
        }),
        10_000,
        `sluice ${args.join(' ')}`,
      );
    for (const [args, reason] of [
      [['--bogus'], /^sluice serve: Unknown option '--bogus'/],
      [['--port', 'abc'], /^sluice serve: --port must be an integer from 0 to 65535, got 'abc'/],
      [['--port', '70000'], /^sluice serve: --port must be an integer from 0 to 65535, got '70000'/],
      [['--mode', 'fast'], /^sluice serve: --mode must be auto, json or sse, got 'fast'/],
      [['--log', 'xml'], /^sluice serve: --log takes 'json', got 'xml'/],
      [['--allow-origin', 'https://app.example.com/path'], /^sluice serve: --allow-origin expects an origin/],
      [['--allow-host', 'http://mcp.example.test'], /^sluice serve: --allow-host expects a host name/],
      [['--port'], /^sluice serve: Option '--port <value>' argument missing/],
      [
        ['--session-prefix', 'a.b'],
        /^sluice serve: sessionIdPrefix must be 1-32 characters of A-Z a-z 0-9 _ -/,
      ],
      [
        ['--hibernate-after-ms', 'soon'],
        /^sluice serve: --hibernate-after-ms must be an integer from 0, got 'soon'/,
      ],
      [
        ['--task-after-ms', '60001'],
        /^sluice serve: --task-after-ms must be an integer from 0 to 60000, got '60001'/,
      ],
      [
        ['--hibernate-after-ms', '100', '--stateless'],
        /^sluice serve: hibernateAfterMs is for sessions; stateless mode has none/,
      ],
    ] as const) {
      const bad = await run(['serve', ...args]);
      assert.equal(bad.code, 2, `sluice serve ${args.join(' ')}: ${bad.err}`);
      assert.match(bad.err, reason);
      assert.match(
        bad.err,
        /\nusage: sluice serve \[[^\n]*\nrun 'sluice serve --help' for the options\n$/,
        'one line of usage and the hint follow the reason',
      );
      assert.equal(bad.out, '', 'nothing on stdout (scripts wait for the listening line there)');
    }
    const help = await run(['serve', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.out, /--auth-token TOKEN/);
    assert.match(help.out, /--max-sessions-per-client N/);
    assert.match(help.out, /--initialize-rate R/);
    assert.match(help.out, /--hibernate-after-ms N/);
    const badLimit = await run(['serve', '--max-sessions-per-client', '0']);
    assert.equal(badLimit.code, 2);
    assert.match(badLimit.err, /clientLimits\.maxSessions must be a positive integer/);
    assert.match(help.out, /--max-concurrent-requests N/);
    const badConcurrency = await run(['serve', '--max-concurrent-requests', '0']);
    assert.equal(badConcurrency.code, 2);
    assert.match(badConcurrency.err, /clientLimits\.maxConcurrentRequests must be a positive integer/);
    const notNumber = await run(['serve', '--max-concurrent-requests', 'many']);
    assert.equal(notNumber.code, 2);
    assert.match(notNumber.err, /--max-concurrent-requests must be an integer from 0, got 'many'/);
    assert.match(help.out, /--allow-origin ORIGIN/);
    assert.match(help.out, /--session-prefix TAG/);
    const unknown = await run(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.err,
      /^sluice: unknown command 'frobnicate'\nusage: sluice <[^\n]*\nrun 'sluice --help'[^\n]*\n$/,
    );
  });

  test('--allow-origin (repeatable): those browser origins get CORS headers, others 403', async () => {
    const srv = await spawnServe([
      '--allow-origin',
      'https://app.example.com',
      '--allow-origin',
      'http://localhost:5173',
    ]);
    after(() => srv.close());
    for (const origin of ['https://app.example.com', 'http://localhost:5173']) {
      const s = new RawSession(srv.url, { origin });
      const init = await s.init();
      assert.equal(init.headers['access-control-allow-origin'], origin);
    }
    await assert.rejects(new RawSession(srv.url, { origin: 'https://evil.example' }).init(), /403/);
  });

  test('--allow-host (repeatable): that Host is served on a loopback bind; the refusal names the Host and the fix', async () => {
    const srv = await spawnServe(['--allow-host', 'MCP.example.test', '--allow-host', 'other.example.test']);
    after(() => srv.close());
    const port = new URL(srv.url).port;
    const init = await new RawSession(srv.url, { host: `mcp.example.test:${port}` }).init();
    assert.equal(init.status, 200);
    // The defaults stay: --allow-host adds to localhost, 127.0.0.1 and [::1].
    assert.equal((await new RawSession(srv.url).init()).status, 200);
    const refused = await send(srv.url, {
      method: 'POST',
      headers: { ...new RawSession(srv.url).headers(), host: `evil.example.test:${port}` },
      body: JSON.stringify(initializeBody()),
    });
    assertRefusal(refused, 403, C.ServerError, 'host-not-allowed');
    assert.match(refused.text, /evil\.example\.test/);
    assert.match(refused.text, /--allow-host/);
  });

  test('SIGTERM: in-flight work finishes within --grace-ms, the process reports and exits 0', async () => {
    const srv = await spawnServe(['--grace-ms', '3000']);
    const s = new RawSession(srv.url);
    await s.init();
    const pending = s.post(toolCall('sleep', { ms: 400 }), {}, 5_000);
    await new Promise((r) => setTimeout(r, 100));
    srv.child.kill('SIGTERM');
    const r = await pending;
    assert.equal(r.status, 200);
    assert.match(r.text, /slept 400 ms/);
    await withDeadline(
      new Promise<void>((resolve) => {
        if (srv.child.exitCode !== null) resolve();
        else srv.child.once('exit', () => resolve());
      }),
      5_000,
      'exit after SIGTERM',
    );
    assert.equal(srv.child.exitCode, 0);
    assert.match(srv.stderr(), /closed 1 session\(s\); 0 request\(s\) cut/);
  });
});
