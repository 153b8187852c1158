// Workload (b): one tools/call flood on an SSE response, `count` progress events. Events/s and
// time to first event are taken at the client; CPU per event from the server's own accounting
// over the whole call. The response is checked: status, the progress events (the last one must
// carry the final value; a server may coalesce some under backpressure), the final result.
import { Pool } from 'undici';
import type { ServerProcess } from '../servers/launch.js';
import { callFlood, closeSession, type FloodCall, openSession } from '../wire.js';

export interface FloodParams {
  count: number;
  payloadBytes: number;
  /** Bound on the whole call; the request is aborted and the run marked failed after it. */
  timeoutMs: number;
}

export interface FloodResult {
  ok: boolean;
  error?: string;
  /** Progress events the tool sent. */
  sent: number;
  /** Progress events that arrived (fewer than `sent` when the server coalesced some). */
  events: number;
  totalMs: number;
  firstEventMs: number;
  /** Arrived events per second. */
  eventsPerSec: number;
  /** Sent events per second: how fast the whole progress stream completed. */
  sentPerSec: number;
  megabytesPerSec: number;
  serverCpuUs: number;
  /** Server CPU per sent event. */
  cpuPerEventUs: number;
  serverCores: number;
  clientCores: number;
}

export async function runFlood(server: ServerProcess, p: FloodParams): Promise<FloodResult> {
  const url = new URL(server.url);
  const pool = new Pool(url.origin, { connections: 1, pipelining: 1, bodyTimeout: p.timeoutMs });
  try {
    const session = await openSession(pool, url.pathname);
    let call: FloodCall | undefined;
    let error: string | undefined;
    const before = await server.stats();
    const clientBefore = process.cpuUsage();
    const t0 = performance.now();
    try {
      call = await callFlood(
        pool,
        url.pathname,
        session,
        1,
        p.count,
        p.payloadBytes,
        AbortSignal.timeout(p.timeoutMs),
      );
      error = call.problem;
    } catch (err) {
      error = `flood: ${String(err)}`;
    }
    const t1 = performance.now();
    const client = process.cpuUsage(clientBefore);
    const after = await server.stats();
    await closeSession(pool, url.pathname, session);

    const events = call?.scanner.progress ?? 0;
    const totalMs = t1 - t0;
    const serverCpuUs = after.cpuUs - before.cpuUs;
    return {
      ok: error === undefined,
      ...(error === undefined ? {} : { error }),
      sent: p.count,
      events,
      totalMs,
      firstEventMs: (call?.scanner.firstProgressAt ?? Number.NaN) - t0,
      eventsPerSec: (events * 1000) / totalMs,
      sentPerSec: (p.count * 1000) / totalMs,
      megabytesPerSec: (call?.bytes ?? 0) / 1e6 / (totalMs / 1000),
      serverCpuUs,
      cpuPerEventUs: serverCpuUs / Math.max(1, p.count),
      serverCores: serverCpuUs / (totalMs * 1000),
      clientCores: (client.user + client.system) / (totalMs * 1000),
    };
  } finally {
    await pool.close();
  }
}
