// Workload (a): C concurrent callers of tools/call echo over S sessions, on an undici Pool with
// C keep-alive connections and pipelining off. Warm-up, then a measured window in which every
// completed request is counted and its latency kept; the server's CPU over the window comes
// from its own process.cpuUsage().
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';
import type { ServerProcess } from '../servers/launch.js';
import { percentile } from '../stats.js';
import { callEcho, closeSession, openSession, type Session } from '../wire.js';

export interface EchoParams {
  concurrency: number;
  sessions: number;
  warmupMs: number;
  durationMs: number;
  /** Safety bound on requests started in one run (warm-up included). */
  maxRequests: number;
}

export interface EchoResult {
  requests: number;
  errors: number;
  firstError?: string;
  wallMs: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  serverCpuUs: number;
  cpuPerReqUs: number;
  serverCores: number;
  clientCores: number;
}

/** Stop early once this many responses were wrong: the run is invalid anyway. */
const MAX_ERRORS = 50;
/** Per-request bound; a stuck request fails the run instead of hanging it. */
const REQUEST_TIMEOUT_MS = 30_000;

export async function runEcho(server: ServerProcess, p: EchoParams): Promise<EchoResult> {
  const url = new URL(server.url);
  const pool = new Pool(url.origin, {
    connections: p.concurrency,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  const sessions: Session[] = [];
  try {
    for (let i = 0; i < p.sessions; i++) sessions.push(await openSession(pool, url.pathname, server.headers));
    let phase: 'warmup' | 'measure' | 'done' = 'warmup';
    let started = 0;
    let errors = 0;
    let firstError: string | undefined;
    const latencies: number[] = [];

    const worker = async (w: number): Promise<void> => {
      const session = sessions[w % sessions.length];
      if (session === undefined) return;
      while (phase !== 'done' && started < p.maxRequests) {
        const id = ++started;
        const t0 = performance.now();
        let problem: string | undefined;
        try {
          problem = await callEcho(pool, url.pathname, session, id);
        } catch (err) {
          problem = `echo ${id}: ${String(err)}`;
        }
        if (problem !== undefined) {
          errors++;
          firstError ??= problem;
          if (errors >= MAX_ERRORS) phase = 'done';
        } else if (phase === 'measure') {
          latencies.push(performance.now() - t0);
        }
      }
    };
    const workers = Array.from({ length: p.concurrency }, (_, w) => worker(w));

    await delay(p.warmupMs);
    const before = await server.stats();
    const clientBefore = process.cpuUsage();
    const t0 = performance.now();
    if (phase === 'warmup') phase = 'measure';
    await delay(p.durationMs);
    const after = await server.stats();
    const t1 = performance.now();
    const client = process.cpuUsage(clientBefore);
    phase = 'done';
    await Promise.all(workers);

    const wallMs = t1 - t0;
    const serverCpuUs = after.cpuUs - before.cpuUs;
    const requests = latencies.length;
    return {
      requests,
      errors,
      ...(firstError === undefined ? {} : { firstError }),
      wallMs,
      rps: (requests * 1000) / wallMs,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      serverCpuUs,
      cpuPerReqUs: serverCpuUs / requests,
      serverCores: serverCpuUs / (wallMs * 1000),
      clientCores: (client.user + client.system) / (wallMs * 1000),
    };
  } finally {
    for (const s of sessions) {
      await closeSession(pool, url.pathname, s).catch(() => undefined); // Cleanup only; the result is already taken.
    }
    await pool.close();
  }
}
