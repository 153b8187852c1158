// Workload (c): N sessions, each with an open GET SSE stream, all idle, on a fresh server that
// runs with --expose-gc. RSS from /proc and heap after a forced GC are read when the server is
// idle, after the sessions are open, and after the streams are open. The cost per
// (session+stream) is the RSS difference over N; heap is split between the two phases.
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';
import type { ServerProcess } from '../servers/launch.js';
import { openSession, type Session } from '../wire.js';

export interface IdleParams {
  streams: number;
  /** Bound on opening all sessions and all streams. */
  timeoutMs: number;
}

export interface IdleResult {
  ok: boolean;
  error?: string;
  streams: number;
  rssIdleMb: number;
  rssSessionsMb: number;
  rssStreamsMb: number;
  /** (RSS with streams − idle RSS) ÷ N. */
  kibPerSessionStream: number;
  heapKibPerSession: number;
  heapKibPerStream: number;
  /** V8's young generation (committed) at the idle and the streams reading, MB. */
  youngMbIdle: number;
  youngMbStreams: number;
  /** kibPerSessionStream without the young generation's growth (RSS − young at both readings). */
  kibPerSessionStreamBeyondYoung: number;
  openSessionsMs: number;
  openStreamsMs: number;
}

/** Requests in flight while opening sessions and streams. */
const OPEN_CONCURRENCY = 32;
/** Time for the server to settle (timers, lazy allocations) before a memory reading. */
const SETTLE_MS = 1_000;

const MB = 1024 * 1024;

/** Runs `task(i)` for i in [0, n) with `width` in flight; stops at the deadline with an error. */
async function forEachBounded(
  n: number,
  width: number,
  deadline: number,
  task: (i: number) => Promise<void>,
) {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) {
      if (performance.now() > deadline) throw new Error(`timed out after ${next} of ${n}`);
      await task(next++);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, n) }, lane));
}

async function memory(server: ServerProcess): Promise<{ rss: number; heap: number; young: number }> {
  await delay(SETTLE_MS);
  const { mem } = await server.gc();
  return { rss: server.rss(), heap: mem.heapUsed, young: mem.young ?? 0 };
}

export async function runIdle(server: ServerProcess, p: IdleParams): Promise<IdleResult> {
  const url = new URL(server.url);
  const n = p.streams;
  const deadline = performance.now() + p.timeoutMs;
  const control = new Pool(url.origin, { connections: OPEN_CONCURRENCY, pipelining: 1 });
  // One connection per stream: an open SSE response holds its connection.
  const streams = new Pool(url.origin, { connections: n, pipelining: 1, bodyTimeout: 0 });
  const base = await memory(server);
  let withSessions = base;
  let withStreams = base;
  let openSessionsMs = Number.NaN;
  let openStreamsMs = Number.NaN;
  let error: string | undefined;
  try {
    const sessions: Session[] = new Array(n);
    let t0 = performance.now();
    await forEachBounded(n, OPEN_CONCURRENCY, deadline, async (i) => {
      sessions[i] = await openSession(control, url.pathname);
    });
    openSessionsMs = performance.now() - t0;
    withSessions = await memory(server);

    t0 = performance.now();
    await forEachBounded(n, OPEN_CONCURRENCY, deadline, async (i) => {
      const s = sessions[i];
      if (s === undefined) throw new Error(`session ${i} missing`);
      const res = await streams.request({
        path: url.pathname,
        method: 'GET',
        headers: {
          accept: 'text/event-stream',
          'mcp-session-id': s.id,
          'mcp-protocol-version': s.headers['mcp-protocol-version'] ?? '',
        },
      });
      // Errors come when the pool is destroyed at the end; the measurement is over by then.
      res.body.on('error', () => undefined);
      res.body.resume();
      const type = res.headers['content-type'];
      if (res.statusCode !== 200 || typeof type !== 'string' || !type.startsWith('text/event-stream')) {
        throw new Error(`GET stream ${i}: HTTP ${res.statusCode} ${String(type)}`);
      }
    });
    openStreamsMs = performance.now() - t0;
    withStreams = await memory(server);
  } catch (err) {
    error = `idle: ${String(err)}`;
  } finally {
    await streams.destroy();
    await control.destroy();
  }
  return {
    ok: error === undefined,
    ...(error === undefined ? {} : { error }),
    streams: n,
    rssIdleMb: base.rss / MB,
    rssSessionsMb: withSessions.rss / MB,
    rssStreamsMb: withStreams.rss / MB,
    kibPerSessionStream: (withStreams.rss - base.rss) / 1024 / n,
    heapKibPerSession: (withSessions.heap - base.heap) / 1024 / n,
    heapKibPerStream: (withStreams.heap - withSessions.heap) / 1024 / n,
    youngMbIdle: base.young / MB,
    youngMbStreams: withStreams.young / MB,
    kibPerSessionStreamBeyondYoung:
      (withStreams.rss - withStreams.young - (base.rss - base.young)) / 1024 / n,
    openSessionsMs,
    openStreamsMs,
  };
}
