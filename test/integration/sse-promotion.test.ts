/**
 * What an SSE answer leaves for the old generation. V8 pretenures an allocation site whose objects
 * keep surviving scavenges; a per-request object literal that holds the request's graph (its
 * exchange, request, response) was soon allocated straight in the old generation, and dead there it
 * kept that graph alive through every scavenge until the next full collection: 4.9 KB promoted per
 * SSE echo, scavenges three times as long (docs/benchmarks.md, "SSE answers and V8's
 * pretenuring"). What is left is the finished stream the replay store keeps for a resume (about
 * 1 KB: its log, ring and frames, for its grace period) and what raw node:http promotes too.
 *
 * A `sluice serve --mode sse` child with `--trace-gc-nvp`; 16 keep-alive callers of `echo`; the
 * bytes every scavenge promoted while 8,000 calls ran, after 4,000 to warm up (V8 decides on
 * pretenuring after a few scavenges). A memory bound, not a timing: with the literal it read
 * 4.8–4.9 KB per call in every run, without it 1.1–1.4 KB.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const WARMUP = 4_000;
const MEASURED = 8_000;
const CALLERS = 16;
/** Bytes promoted per SSE echo, at most: twice what is left without the literal, half of what it cost. */
const MAX_PROMOTED_PER_CALL = 2_500;

let child: ChildProcess;
let url: URL;
let promoted = 0;
let counting = false;
const agent = new Agent({ keepAlive: true, maxSockets: CALLERS });

before(async () => {
  const cli = join(repoRoot(), 'dist', 'src', 'cli', 'main.js');
  child = spawn(
    process.execPath,
    ['--trace-gc-nvp', cli, 'serve', '--port', '0', '--mode', 'sse', '--keepalive-ms', '0'],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: repoRoot() },
  );
  let rest = '';
  const listening = new Promise<string>((resolve) => {
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const ready = /^sluice listening on (http:\/\/\S+)$/.exec(line.trim());
        if (ready?.[1] !== undefined) resolve(ready[1]);
        // One line per collection; only scavenges (gc=s) promote from the young generation.
        if (counting && /\bgc=s\b/.test(line)) promoted += Number(/\bpromoted=(\d+)/.exec(line)?.[1] ?? 0);
      }
    });
  });
  url = new URL(await withDeadline(listening, 15_000, 'sluice serve --trace-gc-nvp listening'));
});

after(async () => {
  agent.destroy();
  if (child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await withDeadline(gone, 5_000, 'sluice serve exiting').catch(() => child.kill('SIGKILL'));
  }
});

function post(
  body: string,
  session: string | undefined,
): Promise<{ status: number; sid: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          ...(session === undefined ? {} : { 'mcp-session-id': session }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, sid: String(res.headers['mcp-session-id'] ?? ''), text }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(body);
  });
}

async function calls(session: string, n: number, from: number): Promise<void> {
  let next = from;
  const end = from + n;
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (next < end) {
        const id = next++;
        const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"e${id}"}}}`;
        const r = await post(body, session);
        assert.equal(r.status, 200);
        assert.ok(r.text.includes(`"id":${id}`) && r.text.includes(`e${id}`), `the SSE answer to ${id}`);
      }
    }),
  );
}

test('an SSE echo promotes no more than its replay copy', { timeout: 120_000 }, async () => {
  const init = await post(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    undefined,
  );
  assert.equal(init.status, 200);
  assert.ok(init.sid.length > 0);
  await post('{"jsonrpc":"2.0","method":"notifications/initialized"}', init.sid);
  await calls(init.sid, WARMUP, 1);
  counting = true;
  await calls(init.sid, MEASURED, 1 + WARMUP);
  // The trace line of a scavenge that ran during the last calls may still be on its way.
  await new Promise((r) => setTimeout(r, 200));
  counting = false;
  const perCall = promoted / MEASURED;
  process.stderr.write(`sse-promotion: ${perCall.toFixed(0)} B promoted per SSE echo\n`);
  assert.ok(perCall <= MAX_PROMOTED_PER_CALL, `${perCall.toFixed(0)} B promoted per SSE echo`);
});
