// Workload (e): client CPU per echo and per progress event, for undici, the SDK's Client with
// the SDK transport, and the SDK's Client with Sluice's transport, all against the raw server so
// that only the client differs. Each measurement runs in its own worker process
// (clients/worker.ts) and reports that process's CPU.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkerMessage, WorkerSpec } from '../clients/worker.js';
import { CHILD_STDIO } from '../servers/launch.js';

export interface ClientCpuResult {
  ok: boolean;
  error?: string;
  ops: number;
  events: number;
  wallMs: number;
  cpuUs: number;
  /** CPU µs per call (echo) or per progress event (flood). */
  cpuPerUnitUs: number;
  /** Calls per second (echo) or events per second (flood). */
  unitsPerSec: number;
}

const WORKER = fileURLToPath(new URL('../clients/worker.js', import.meta.url));
/** Beyond warm-up and the measured loop: start-up, the last call, and exit. */
const WORKER_SLACK_MS = 30_000;

function isWorkerMessage(v: unknown): v is WorkerMessage {
  const type = (v as { type?: unknown } | null)?.type;
  return type === 'result' || type === 'failed';
}

/** Runs one worker; with `cpuProfDir`, the worker writes a --cpu-prof profile there on exit. */
export function runClientCpu(spec: WorkerSpec, cpuProfDir?: string): Promise<ClientCpuResult> {
  const execArgv = cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`];
  const child = fork(WORKER, [JSON.stringify(spec)], { execArgv, stdio: CHILD_STDIO });
  const failed = (error: string): ClientCpuResult => ({
    ok: false,
    error,
    ops: 0,
    events: 0,
    wallMs: 0,
    cpuUs: 0,
    cpuPerUnitUs: Number.NaN,
    unitsPerSec: Number.NaN,
  });
  return new Promise((resolve) => {
    const bound = spec.warmupMs + spec.durationMs + spec.callTimeoutMs + WORKER_SLACK_MS;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(failed(`${spec.client} ${spec.workload}: no result within ${bound} ms`));
    }, bound);
    child.on('message', (msg: unknown) => {
      if (!isWorkerMessage(msg)) return;
      clearTimeout(timer);
      if (msg.type === 'failed') {
        resolve(failed(`${spec.client} ${spec.workload}: ${msg.message}`));
        return;
      }
      const units = spec.workload === 'echo' ? msg.ops : msg.events;
      resolve({
        ok: units > 0,
        ...(units > 0 ? {} : { error: 'no operations completed' }),
        ops: msg.ops,
        events: msg.events,
        wallMs: msg.wallMs,
        cpuUs: msg.cpuUs,
        cpuPerUnitUs: msg.cpuUs / units,
        unitsPerSec: (units * 1000) / msg.wallMs,
      });
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(failed(`${spec.client} ${spec.workload}: worker exited with ${code}`));
    });
  });
}
