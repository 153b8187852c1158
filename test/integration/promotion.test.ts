/**
 * What a call leaves for the old generation. V8 pretenures an allocation site whose objects keep
 * surviving scavenges; a per-request object from such a site that holds the request's graph is
 * then allocated straight in the old generation, and dead there it keeps that graph alive through
 * every scavenge until the next full collection (docs/benchmarks.md, "SSE answers and V8's
 * pretenuring"). Two cases, each against a child serving the README's shared-tools server
 * (helpers/shared-tools-node.ts) with `--trace-gc-nvp`, 16 keep-alive callers of its `echo`, the bytes every scavenge promoted while 8,000 calls ran
 * after 4,000 to warm up (V8 decides on pretenuring after a few scavenges). Memory bounds, not
 * timings:
 * - an SSE answer in a session (`--mode sse`): the answer's `{ openStream }` and the Node view's
 *   `{ req, res }` literals kept exchange, request and response: 4.8–5.2 KB per call; without them
 *   1.1–1.4 KB, the finished stream the replay store keeps for a resume and what raw node:http
 *   promotes too;
 * - a 2026-07-28 call, which builds a server per request: the SDK's per-server tool record (four
 *   closures over its server) kept the whole server: 8.6–9.1 KB per call; with registerSharedTools'
 *   one shared record (server/shared-tools.ts), about 0.5 KB;
 * - the same with the tool registered by `registerTool` in createServer (what most servers do; its
 *   schema built once): the whole server was promoted, 9.1–10 KB per call; since
 *   Sluice empties a closed per-request server's handler tables (core/sdk/release.ts), about
 *   0.5 KB;
 * - on Node 22 and 24 (test/conformance/node-lines.test.ts runs the last case on Node 24): the
 *   SDK's connect() assigns its transport handlers as function literals, which V8 allocates in the
 *   old generation, so each closed server kept its transport and the request behind it, 7.7 KB per
 *   call on Node 24; with the transport letting go and the server's tables swapped for shared empty
 *   ones (core/sdk/bridge-transport.ts, release.ts), 0.4–0.5 KB.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import { ACCEPT_BOTH, type Reply, send } from '../helpers/http.js';
import { reapWithMe } from '../helpers/reaper.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const WARMUP = 4_000;
const MEASURED = 8_000;
const CALLERS = 16;
/** Bytes promoted per SSE echo, at most: about twice what is left without the fixes, half of what they cost. */
const MAX_PROMOTED_PER_CALL = 2_500;
/**
 * Bytes promoted per 2026-07-28 echo, at most: 0.15–0.55 KB on Node 20, 22 and 24 with the fixes,
 * so about twice that. Without the shared empty tables of a released server (core/sdk/release.ts)
 * Node 24 promoted 2.1 KB, without its bridge transport letting go of the request 7.7 KB.
 */
const MAX_PROMOTED_MODERN = 1_200;

/** A shared-tools-node child with `--trace-gc-nvp`; it sums its scavenges' promoted bytes while a measurement runs. */
class Traced {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: CALLERS });
  readonly #child;
  readonly #url: Promise<URL>;
  #promoted = 0;
  #counting = false;

  constructor(mode: 'auto' | 'sse', tools: 'shared' | 'register-tool' = 'shared') {
    const entry = join(repoRoot(), 'dist', 'test', 'helpers', 'shared-tools-node.js');
    this.#child = spawn(process.execPath, ['--trace-gc-nvp', entry, mode, tools], {
      stdio: ['ignore', 'pipe', 'inherit'],
      cwd: repoRoot(),
      env: { ...process.env, SLUICE_SHARED_TOOLS_NODE: '1' },
    });
    reapWithMe(this.#child);
    let rest = '';
    const listening = new Promise<URL>((resolve) => {
      this.#child.stdout.setEncoding('utf8');
      this.#child.stdout.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          const ready = /^shared-tools-node (http:\/\/\S+)$/.exec(line.trim());
          if (ready?.[1] !== undefined) resolve(new URL(ready[1]));
          // One line per collection; only scavenges (gc=s) promote from the young generation.
          if (this.#counting && /\bgc=s\b/.test(line))
            this.#promoted += Number(/\bpromoted=(\d+)/.exec(line)?.[1] ?? 0);
        }
      });
    });
    this.#url = withDeadline(listening, 15_000, 'the shared-tools server listening');
  }

  async post(body: string, headers: Record<string, string>): Promise<Reply> {
    const url = (await this.#url).href;
    return send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...headers },
      body,
      agent: this.#agent,
      timeoutMs: 10_000,
    });
  }

  /** Bytes promoted per call over MEASURED calls of `call(id)`, after WARMUP of them. */
  async promotedPerCall(call: (id: number) => Promise<void>): Promise<number> {
    let next = 1;
    const run = async (n: number): Promise<void> => {
      const end = next + n;
      await Promise.all(
        Array.from({ length: CALLERS }, async () => {
          while (next < end) await call(next++);
        }),
      );
    };
    await run(WARMUP);
    this.#counting = true;
    await run(MEASURED);
    // The trace line of a scavenge that ran during the last calls may still be on its way.
    await new Promise((r) => setTimeout(r, 200));
    this.#counting = false;
    return this.#promoted / MEASURED;
  }

  async close(): Promise<void> {
    this.#agent.destroy();
    const c = this.#child;
    if (c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await withDeadline(gone, 5_000, 'the shared-tools server exiting').catch(() => c.kill('SIGKILL'));
  }
}

const echoBody = (id: number, meta = ''): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"e${id}"}${meta}}}`;

function assertEcho(r: Reply, id: number): void {
  assert.equal(r.status, 200, r.text);
  assert.ok(r.text.includes(`"id":${id}`) && r.text.includes(`e${id}`), `the answer to ${id}: ${r.text}`);
}

test('an SSE echo in a session promotes no more than its replay copy', { timeout: 120_000 }, async (t) => {
  const s = new Traced('sse');
  t.after(() => s.close());
  const v = { 'mcp-protocol-version': '2025-11-25' };
  const init = await s.post(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    v,
  );
  assert.equal(init.status, 200);
  const session = { ...v, 'mcp-session-id': String(init.headers['mcp-session-id'] ?? '') };
  await s.post('{"jsonrpc":"2.0","method":"notifications/initialized"}', session);
  const perCall = await s.promotedPerCall(async (id) => assertEcho(await s.post(echoBody(id), session), id));
  process.stderr.write(`promotion: ${perCall.toFixed(0)} B promoted per SSE echo\n`);
  assert.ok(perCall <= MAX_PROMOTED_PER_CALL, `${perCall.toFixed(0)} B promoted per SSE echo`);
});

const MODERN_META =
  ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},' +
  '"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}';
const MODERN_HEADERS = {
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'echo',
};

for (const tools of ['shared', 'register-tool'] as const) {
  test(`a 2026-07-28 echo (a server per request, ${tools === 'shared' ? 'registerSharedTools' : 'registerTool in createServer'}) does not promote its server`, {
    timeout: 120_000,
  }, async (t) => {
    const s = new Traced('auto', tools);
    t.after(() => s.close());
    const perCall = await s.promotedPerCall(async (id) =>
      assertEcho(await s.post(echoBody(id, MODERN_META), MODERN_HEADERS), id),
    );
    process.stderr.write(`promotion: ${perCall.toFixed(0)} B promoted per 2026-07-28 echo (${tools})\n`);
    assert.ok(
      perCall <= MAX_PROMOTED_MODERN,
      `${perCall.toFixed(0)} B promoted per 2026-07-28 echo (${tools})`,
    );
  });
}
