// Section (h) of `npm run bench`: the 2026-07-28 era. (1) Server CPU per modern `tools/call` echo,
// JSON, C=16: raw node:http, Sluice, and the official SDK v2 createMcpHandler, each a child process
// of its own (bench/modern/server.ts), interleaved over repetitions that rotate the order (medians),
// reported as ratios like the other sections. (2) A subscriptions/listen stream whose reader never
// reads, fed 10,000 tool-list changes per second: the server's heap after GC must stay flat
// (changes coalesce). Every loop is bounded in count and time.
import { type ChildProcess, fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const C = 16;
const KINDS = [
  'raw',
  'bare',
  'bare-shared',
  'sluice',
  'sluice-register',
  'sluice-shared',
  'sluice-v2',
  'sdk2',
] as const;
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Child {
  proc: ChildProcess;
  port: number;
  ask<T>(m: unknown): Promise<T>;
}

/**
 * Node/V8 flags for every server child alike (`MODERN_BENCH_NODE_FLAGS`, space-separated), e.g.
 * `--no-allocation-site-pretenuring` (docs/benchmarks.md, section (h)); none by default.
 */
const EXTRA_NODE_FLAGS = (process.env['MODERN_BENCH_NODE_FLAGS'] ?? '').split(' ').filter((f) => f !== '');

/**
 * Calls before the measured ones, per cell (`MODERN_BENCH_WARMUP`; 3,000 by default, 500 in the
 * quick plan). The figure is a warm server's cost per call: 500 leave the JIT and the collector's
 * tuning mid-way, and every server then reads about three times its warm cost (raw about 130–160 µs
 * per call, against about 50 µs after 3,000; docs/benchmarks.md, section (h)).
 */
function warmupCalls(quick: boolean): number {
  const n = Number(process.env['MODERN_BENCH_WARMUP'] ?? (quick ? 500 : 3_000));
  if (!Number.isSafeInteger(n) || n < 0)
    throw new Error('MODERN_BENCH_WARMUP: a whole number of calls, 0 or more');
  return n;
}

/** Where a kind's children write a --cpu-prof profile on exit (`--profile`), if anywhere. */
let profileDirOf: ((kind: string) => string | undefined) | undefined;

async function start(kind: string): Promise<Child> {
  const dir = profileDirOf?.(kind);
  const proc = fork(fileURLToPath(new URL('./server.js', import.meta.url)), [kind], {
    execArgv: [
      '--expose-gc',
      ...EXTRA_NODE_FLAGS,
      ...(dir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`]),
    ],
  });
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('message', (m) => resolve((m as { port: number }).port));
    proc.once('error', reject);
    setTimeout(() => reject(new Error(`${kind}: no port within 10 s`)), 10_000).unref();
  });
  const ask = <T>(m: unknown): Promise<T> =>
    new Promise((resolve) => {
      proc.once('message', (r) => resolve(r as T));
      proc.send(m as never);
    });
  return { proc, port, ask };
}

async function stop(c: Child): Promise<void> {
  c.proc.send('exit');
  await new Promise((r) => c.proc.once('exit', r));
}

function echo(port: number, agent: Agent, id: number): Promise<void> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'hi' }, _meta: META },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'echo',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let t = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          t += c;
        });
        res.on('end', () =>
          res.statusCode === 200 && t.includes('"hi"') ? resolve() : reject(new Error(t)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The section's server kinds, in their table's order. */
export const MODERN_KINDS: readonly string[] = KINDS;

/**
 * Starts `kind`'s child, makes `n` echo calls one after another (each checked as the section checks
 * them), and stops it: the test suite's check that every kind still answers (bench-children.test.ts).
 */
export async function echoSmoke(kind: string, n: number): Promise<void> {
  const c = await start(kind);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let id = 1; id <= n; id++) await echo(c.port, agent, id);
  } finally {
    agent.destroy();
    await stop(c);
  }
}

async function echoCpu(kind: string, n: number, warmup: number): Promise<number> {
  const c = await start(kind);
  const agent = new Agent({ keepAlive: true, maxSockets: C });
  let id = 0;
  const batch = async (n: number): Promise<void> => {
    let left = n;
    await Promise.all(
      Array.from({ length: C }, async () => {
        while (left-- > 0) await echo(c.port, agent, ++id);
      }),
    );
  };
  try {
    await batch(warmup);
    const c0 = (await c.ask<{ cpu: number }>('cpu')).cpu;
    await batch(n);
    const c1 = (await c.ask<{ cpu: number }>('cpu')).cpu;
    return (c1 - c0) / n;
  } finally {
    agent.destroy();
    await stop(c);
  }
}

/** Opens a listen stream on a raw socket and never reads from it. */
function stalledListen(port: number): Promise<() => void> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 'bench',
    method: 'subscriptions/listen',
    params: { notifications: { toolsListChanged: true }, _meta: META },
  });
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
          'Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n' +
          `Mcp-Method: subscriptions/listen\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      s.once('data', () => {
        s.pause();
        resolve(() => s.destroy());
      });
    });
    s.on('error', reject);
  });
}

async function listenMemory(seconds: number): Promise<{
  before: number;
  after: number;
  rssBefore: number;
  rssAfter: number;
}> {
  const c = await start('sluice');
  try {
    const close = await stalledListen(c.port);
    const m0 = await c.ask<{ rss: number; heap: number }>('mem');
    for (let s = 0; s < seconds * 10; s++) {
      await c.ask({ notify: 1_000 }); // 1,000 per 100 ms = 10,000/s
      await new Promise((r) => setTimeout(r, 100));
    }
    const m1 = await c.ask<{ rss: number; heap: number }>('mem');
    close();
    return { before: m0.heap, after: m1.heap, rssBefore: m0.rss, rssAfter: m1.rss };
  } finally {
    await stop(c);
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export interface ModernBench {
  calls: number;
  /** Calls per cell before the measured ones. */
  warmup: number;
  reps: number;
  concurrency: number;
  /** Server CPU µs per echo, one entry per repetition. */
  cpuUs: Record<(typeof KINDS)[number], number[]>;
  /** Medians. */
  median: Record<(typeof KINDS)[number], number>;
  listen: { seconds: number; heapBefore: number; heapAfter: number; rssBefore: number; rssAfter: number };
}

export async function runModern(
  quick: boolean,
  reps: number,
  log: (line: string) => void,
  profile?: { kind: string; dir: string },
): Promise<ModernBench> {
  // `--profile sluice` profiles every Sluice kind, `--profile sdk` the SDK v2 handler.
  profileDirOf =
    profile === undefined
      ? undefined
      : (kind) =>
          kind.startsWith(profile.kind) || (profile.kind === 'sdk' && kind === 'sdk2')
            ? join(profile.dir, 'h', kind)
            : undefined;
  const calls = Number(process.env['MODERN_BENCH_N'] ?? (quick ? 1_000 : 3_000));
  const warmup = warmupCalls(quick);
  const seconds = quick ? 3 : 10;
  const cpu: ModernBench['cpuUs'] = {
    raw: [],
    bare: [],
    'bare-shared': [],
    sluice: [],
    'sluice-register': [],
    'sluice-shared': [],
    'sluice-v2': [],
    sdk2: [],
  };
  for (let rep = 0; rep < reps; rep++) {
    for (let i = 0; i < KINDS.length; i++) {
      const kind = KINDS[(i + rep) % KINDS.length] ?? 'raw';
      const us = await echoCpu(kind, calls, warmup);
      cpu[kind].push(us);
      log(`(h) rep ${rep + 1}/${reps} ${kind}: ${us.toFixed(0)} µs server CPU per modern echo`);
    }
  }
  log(`(h) stalled listen reader, 10,000 changes/s for ${seconds} s`);
  const mem = await listenMemory(seconds);
  return {
    calls,
    warmup,
    reps,
    concurrency: C,
    cpuUs: cpu,
    median: {
      raw: median(cpu.raw),
      bare: median(cpu.bare),
      'bare-shared': median(cpu['bare-shared']),
      sluice: median(cpu.sluice),
      'sluice-register': median(cpu['sluice-register']),
      'sluice-shared': median(cpu['sluice-shared']),
      'sluice-v2': median(cpu['sluice-v2']),
      sdk2: median(cpu.sdk2),
    },
    listen: {
      seconds,
      heapBefore: mem.before,
      heapAfter: mem.after,
      rssBefore: mem.rssBefore,
      rssAfter: mem.rssAfter,
    },
  };
}

export function renderModern(r: ModernBench): string {
  const mb = (b: number): string => (b / 1024 / 1024).toFixed(1);
  const { raw, sluice, sdk2 } = r.median;
  const shared = r.median['sluice-shared'];
  const register = r.median['sluice-register'];
  const v2 = r.median['sluice-v2'];
  const bare = r.median.bare;
  const bareShared = r.median['bare-shared'];
  const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a');
  return [
    '## (h) The 2026-07-28 era: stateless requests and listen streams',
    '',
    `Server CPU per modern \`tools/call\` echo, JSON, C=${r.concurrency}, ${r.calls} calls per cell after ${r.warmup} warm-up calls, median of ${r.reps} (order rotated each repetition):`,
    '',
    '| server | CPU per echo | vs SDK v2 (target ≤ 0.3x) | vs raw | vs the bare host |',
    '|---|---:|---:|---:|---:|',
    `| raw node:http (fixed answer) | ${raw.toFixed(0)} µs | ${ratio(raw, sdk2)} | 1.00x | |`,
    `| bare host: the same v1 server per request on a bare transport, closed and released | ${bare.toFixed(0)} µs | ${ratio(bare, sdk2)} | ${ratio(bare, raw)} | |`,
    `| bare host, one server for every request | ${bareShared.toFixed(0)} µs | ${ratio(bareShared, sdk2)} | ${ratio(bareShared, raw)} | |`,
    `| Sluice, a server per request | ${sluice.toFixed(0)} µs | ${ratio(sluice, sdk2)} | ${ratio(sluice, raw)} | ${ratio(sluice, bare)} |`,
    `| Sluice, a server per request, its tool registered with \`registerTool\` | ${register.toFixed(0)} µs | ${ratio(register, sdk2)} | ${ratio(register, raw)} | |`,
    `| Sluice, \`statelessSafe\` (a server per principal) | ${shared.toFixed(0)} µs | ${ratio(shared, sdk2)} | ${ratio(shared, raw)} | ${ratio(shared, bareShared)} |`,
    `| Sluice hosting the same SDK v2 server per request | ${v2.toFixed(0)} µs | ${ratio(v2, sdk2)} | ${ratio(v2, raw)} | |`,
    `| SDK v2 createMcpHandler | ${sdk2.toFixed(0)} µs | 1.00x | ${ratio(sdk2, raw)} | |`,
    '',
    `Listen stream with a stalled reader, 10,000 changes/s for ${r.listen.seconds} s: heap ${mb(r.listen.heapBefore)} → ${mb(r.listen.heapAfter)} MB, RSS ${mb(r.listen.rssBefore)} → ${mb(r.listen.rssAfter)} MB.`,
    '',
  ].join('\n');
}
