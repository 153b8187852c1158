// A client process for workload (e): connects one client (undici, SDK or Sluice) to the raw
// server, warms up, then runs echo or flood calls in a loop bounded by time and count and reports
// its own CPU (process.cpuUsage(), µs) per operation over IPC. One process per client and
// workload, so that one client's garbage and JIT state never land on another's account.
import type { BenchClient, ClientKind } from './bench-client.js';
import { connectMcpClient } from './mcp-client.js';
import { connectUndiciClient } from './undici-client.js';

export interface WorkerSpec {
  client: ClientKind;
  workload: 'echo' | 'flood';
  url: string;
  warmupMs: number;
  durationMs: number;
  /** Bound on measured calls. */
  maxOps: number;
  /** Progress events per flood call. */
  floodCount: number;
  /** Bound on any single call. */
  callTimeoutMs: number;
}

export type WorkerMessage =
  | { type: 'result'; ops: number; events: number; cpuUs: number; wallMs: number }
  | { type: 'failed'; message: string };

function connect(spec: WorkerSpec): Promise<BenchClient> {
  if (spec.client === 'undici') return connectUndiciClient(spec.url, spec.callTimeoutMs);
  return connectMcpClient(spec.url, spec.client, spec.callTimeoutMs);
}

async function loop(client: BenchClient, spec: WorkerSpec, ms: number, maxOps: number, firstId: number) {
  const t0 = performance.now();
  let ops = 0;
  let events = 0;
  while (ops < maxOps && performance.now() - t0 < ms) {
    const id = firstId + ops;
    if (spec.workload === 'echo') await client.echo(id);
    else events += await client.flood(id, spec.floodCount);
    ops++;
  }
  return { ops, events, wallMs: performance.now() - t0 };
}

async function main(spec: WorkerSpec): Promise<WorkerMessage> {
  const client = await connect(spec);
  try {
    const warm = await loop(client, spec, spec.warmupMs, spec.maxOps, 1);
    const before = process.cpuUsage();
    const run = await loop(client, spec, spec.durationMs, spec.maxOps, warm.ops + 1);
    const cpu = process.cpuUsage(before);
    return {
      type: 'result',
      ops: run.ops,
      events: run.events,
      cpuUs: cpu.user + cpu.system,
      wallMs: run.wallMs,
    };
  } finally {
    await client.close();
  }
}

const spec = JSON.parse(process.argv[2] ?? '{}') as WorkerSpec;
main(spec).then(
  (msg) => process.send?.(msg, () => process.exit(0)),
  (err: unknown) => {
    const failed: WorkerMessage = {
      type: 'failed',
      message: err instanceof Error ? err.message : String(err),
    };
    process.send?.(failed, () => process.exit(0));
  },
);
