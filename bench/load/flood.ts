// Workload (b): one tools/call flood on an SSE response, `count` progress events. Events/s and
// time to first event are taken at the client; CPU per event from the server's own accounting
// over the whole call. The response is checked: status, every progress event, the final result.
import { Pool } from 'undici';
import type { ServerProcess } from '../servers/launch.js';
import { closeSession, openSession, resultText, SseScanner, toolCallBody } from '../wire.js';

export interface FloodParams {
  count: number;
  payloadBytes: number;
  /** Bound on the whole call; the request is aborted and the run marked failed after it. */
  timeoutMs: number;
}

export interface FloodResult {
  ok: boolean;
  error?: string;
  events: number;
  totalMs: number;
  firstEventMs: number;
  eventsPerSec: number;
  megabytesPerSec: number;
  serverCpuUs: number;
  cpuPerEventUs: number;
  serverCores: number;
  clientCores: number;
}

const CALL_ID = 1;
const PROGRESS_TOKEN = 1;

export async function runFlood(server: ServerProcess, p: FloodParams): Promise<FloodResult> {
  const url = new URL(server.url);
  const pool = new Pool(url.origin, { connections: 1, pipelining: 1, bodyTimeout: p.timeoutMs });
  try {
    const session = await openSession(pool, url.pathname);
    const scanner = new SseScanner();
    let bytes = 0;
    let status = 0;
    let error: string | undefined;
    const before = await server.stats();
    const clientBefore = process.cpuUsage();
    const t0 = performance.now();
    try {
      const res = await pool.request({
        path: url.pathname,
        method: 'POST',
        headers: session.headers,
        body: toolCallBody(
          CALL_ID,
          'flood',
          `{"count":${p.count},"payloadBytes":${p.payloadBytes}}`,
          PROGRESS_TOKEN,
        ),
        signal: AbortSignal.timeout(p.timeoutMs),
      });
      status = res.statusCode;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        bytes += chunk.byteLength;
        scanner.push(chunk);
      }
    } catch (err) {
      error = `flood: ${String(err)}`;
    }
    const t1 = performance.now();
    const client = process.cpuUsage(clientBefore);
    const after = await server.stats();
    await closeSession(pool, url.pathname, session);

    const text = resultText(scanner.response(CALL_ID));
    if (error === undefined && status !== 200) error = `flood: HTTP ${status}`;
    if (error === undefined && scanner.progress !== p.count)
      error = `flood: ${scanner.progress}/${p.count} events`;
    if (error === undefined && text !== `sent ${p.count}`) error = `flood: result ${String(text)}`;
    const totalMs = t1 - t0;
    const serverCpuUs = after.cpuUs - before.cpuUs;
    return {
      ok: error === undefined,
      ...(error === undefined ? {} : { error }),
      events: scanner.progress,
      totalMs,
      firstEventMs: scanner.firstProgressAt - t0,
      eventsPerSec: (scanner.progress * 1000) / totalMs,
      megabytesPerSec: bytes / 1e6 / (totalMs / 1000),
      serverCpuUs,
      cpuPerEventUs: serverCpuUs / Math.max(1, scanner.progress),
      serverCores: serverCpuUs / (totalMs * 1000),
      clientCores: (client.user + client.system) / (totalMs * 1000),
    };
  } finally {
    await pool.close();
  }
}
