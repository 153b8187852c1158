// Memory per idle session + GET stream, by server factory, as `sluice serve` users see it:
//
//   node --expose-gc dist/bench/session-memory.js [--sessions 2000] [--only demo,bench,...]
//
// Each factory runs in its own child process (--expose-gc); the parent opens N sessions (initialize +
// notifications/initialized) and then one GET stream per session, and reads the child's RSS and heap
// after a forced GC at three points: idle, with the sessions, with the streams. Factories:
//   none         a hand-written object that only answers initialize (no SDK): Sluice's own share alone
//   trivial      a low-level SDK `Server` with no tools (shared validator): Sluice's own share plus the
//                SDK's Server
//   bench        the benchmark's 3 tools (schemas built once, shared validator)
//   demo         `sluice serve`'s demo server (18 tools, resources, prompts), as shipped
// Not a test: numbers depend on the machine and its load. Each loop is bounded in count and time.
import { fork } from 'node:child_process';
import { Agent, type ClientRequest, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { openSession } from './mcp-http.js';

type Factory = 'none' | 'trivial' | 'bench' | 'demo';
const FACTORIES: Factory[] = ['none', 'trivial', 'bench', 'demo'];
const DEADLINE_MS = 120_000;
const CONCURRENCY = 32;
const KIB = 1024;

interface Mem {
  rss: number;
  heap: number;
}

interface MinimalTransport {
  onmessage?:
    | ((m: { method?: string; id?: unknown; params?: { protocolVersion?: unknown } }) => void)
    | undefined;
  send(m: unknown): Promise<void>;
  close(): Promise<void>;
}

/** Answers initialize and nothing else: what remains per session is Sluice's own state. */
class NoServer {
  #t: MinimalTransport | undefined;
  async connect(t: MinimalTransport): Promise<void> {
    this.#t = t;
    t.onmessage = (m) => {
      if (m.method !== 'initialize') return;
      const result = {
        protocolVersion: m.params?.protocolVersion,
        capabilities: {},
        serverInfo: { name: 'none', version: '1' },
      };
      void t.send({ jsonrpc: '2.0', id: m.id, result });
    };
  }
  async close(): Promise<void> {
    await this.#t?.close();
  }
}

async function factory(name: Factory): Promise<() => unknown> {
  if (name === 'none') return () => new NoServer();
  if (name === 'trivial') {
    const { sharedJsonSchemaValidator } = await import('../src/server/shared-validator.js');
    const jsonSchemaValidator = sharedJsonSchemaValidator();
    return () => new Server({ name: 'trivial', version: '1' }, { capabilities: {}, jsonSchemaValidator });
  }
  if (name === 'bench') {
    const { createBenchServer } = await import('./servers/tools.js');
    return createBenchServer;
  }
  const { createDemoServer } = await import('../src/demo/demo-server.js');
  return createDemoServer;
}

async function child(name: Factory): Promise<void> {
  const create = await factory(name);
  const { serve } = await import('../src/server/index.js');
  const served = await serve({
    createServer: create as never,
    port: 0,
    keepaliveMs: 0,
    clientLimits: false,
    maxSessions: 100_000,
  });
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', (msg: unknown) => {
    if (msg === 'mem') {
      gc?.();
      gc?.();
      const m = process.memoryUsage();
      process.send?.({ rss: m.rss, heap: m.heapUsed } satisfies Mem);
    } else if (msg === 'exit') {
      process.exit(0);
    }
  });
  process.send?.({ url: served.url });
}

async function bounded(n: number, deadline: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) {
      if (Date.now() > deadline) throw new Error(`timed out after ${next} of ${n}`);
      await task(next++);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n) }, lane));
}

async function measure(name: Factory, n: number): Promise<Record<string, number | string>> {
  const proc = fork(fileURLToPath(import.meta.url), ['--child', name], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T>(): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('child did not answer')), 30_000);
      proc.once('message', (m) => {
        clearTimeout(t);
        resolve(m as T);
      });
    });
  const sockets: ClientRequest[] = [];
  try {
    const { url } = await next<{ url: string }>();
    const u = new URL(url);
    const mem = async (): Promise<Mem> => {
      await new Promise((r) => setTimeout(r, 500));
      proc.send('mem');
      return next<Mem>();
    };
    const idle = await mem();
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const deadline = Date.now() + DEADLINE_MS;
    const sids: string[] = new Array(n);
    await bounded(n, deadline, async (i) => {
      const h = await openSession(u, { agent, clientName: 'mem' });
      sids[i] = h['mcp-session-id'] as string;
    });
    const sessions = await mem();
    await bounded(n, deadline, async (i) => {
      await new Promise<void>((resolve, reject) => {
        const req = request(u, {
          method: 'GET',
          agent: false,
          headers: {
            accept: 'text/event-stream',
            'mcp-session-id': sids[i] as string,
            'mcp-protocol-version': '2025-11-25',
          },
        });
        req.on('response', (res) => {
          if (res.statusCode !== 200) reject(new Error(`GET ${res.statusCode}`));
          res.on('data', () => undefined);
          res.on('error', () => undefined);
          resolve();
        });
        req.on('error', reject);
        req.end();
        sockets.push(req);
      });
    });
    const streams = await mem();
    agent.destroy();
    return {
      factory: name,
      sessions: n,
      rssIdleMb: +(idle.rss / KIB / KIB).toFixed(1),
      rssWithStreamsMb: +(streams.rss / KIB / KIB).toFixed(1),
      rssKibPerSessionStream: +((streams.rss - idle.rss) / KIB / n).toFixed(1),
      heapKibPerSession: +((sessions.heap - idle.heap) / KIB / n).toFixed(1),
      heapKibPerStream: +((streams.heap - sessions.heap) / KIB / n).toFixed(1),
    };
  } finally {
    for (const r of sockets) r.destroy();
    proc.send('exit');
    proc.kill();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      child: { type: 'string' },
      sessions: { type: 'string', default: '2000' },
      only: { type: 'string' },
    },
  });
  if (values.child !== undefined) return child(values.child as Factory);
  const n = Number(values.sessions);
  if (!Number.isSafeInteger(n) || n < 1 || n > 20_000) throw new Error('--sessions must be 1..20000');
  const only = values.only === undefined ? FACTORIES : (values.only.split(',') as Factory[]);
  const rows = [];
  for (const f of only) rows.push(await measure(f, n));
  console.table(rows);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
