// Workload (c): N sessions, each with an open GET SSE stream, all idle, on a fresh server that
// runs with --expose-gc. RSS from /proc and heap after a forced GC are read when the server is
// idle (settled, below), 1 s after the sessions are open, and 1 s after the streams are open. The
// cost per (session+stream) is the RSS difference over N; heap is split between the two phases.
//
// Then a *settled* reading: the streams stay open, nothing is sent, and a GC after a quiet spell
// finds the allocation rate low and gives back the young generation the openings grew
// (docs/benchmarks.md "Idle memory, settled"). One second after the openings the young generation
// still holds the burst's growth (to 6–29 MB), which is V8's sizing, not what the sessions hold;
// an idle server in service sits at the settled figure.
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';
import type { ServerProcess } from '../servers/launch.js';
import { openSession, type Session } from '../wire.js';
import { SettleWatch } from './settle.js';

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
  /** The settled reading (see above): RSS and young generation, MB, and how long it took. */
  rssSettledMb: number;
  youngMbSettled: number;
  settleMs: number;
  /** Whether, for a few looks in a row before the deadline, the young generation was at its floor and RSS less it held still. */
  settled: boolean;
  /** (RSS − young) settled − (RSS − young) idle, ÷ N: what the idle sessions and streams hold. */
  kibPerSessionStreamSettled: number;
}

/** Requests in flight while opening sessions and streams. */
const OPEN_CONCURRENCY = 32;
/** Time for the server to settle (timers, lazy allocations) before a memory reading. */
const SETTLE_MS = 1_000;

const MB = 1024 * 1024;
/**
 * V8's young generation "at its floor": its physical size once a GC has shrunk it (0.3–1.3 MB
 * here, against 6–29 MB right after the openings).
 */
const YOUNG_FLOOR_BYTES = 2 * MB;
/**
 * Quiet time before each settling GC. V8 shrinks the young generation in a GC's epilogue when the
 * allocation rate since its recent samples is low (under 1,000 bytes/ms: heap.cc, ReduceNewSpaceSize);
 * right after a burst it is not, 5 s of nothing later it is.
 */
const QUIET_MS = 5_000;
/** RSS less the young generation must move by less than this over `STILL_LOOKS` readings in a row at the floor. */
const STILL_BYTES = 256 * 1024;
const STILL_LOOKS = 2;
/** The settle loop's deadline; past it the reading is taken anyway and marked unsettled. */
const SETTLE_DEADLINE_MS = 60_000;

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

/** One memory reading of the server, bytes: RSS from /proc, heap used and young generation after a GC. */
interface Reading {
  rss: number;
  heap: number;
  young: number;
}

async function memory(server: ServerProcess): Promise<Reading> {
  await delay(SETTLE_MS);
  const { mem } = await server.gc();
  return { rss: server.rss(), heap: mem.heapUsed, young: mem.young ?? 0 };
}

/**
 * Sends nothing for `QUIET_MS`, then forces a GC and reads memory; again until, over `STILL_LOOKS`
 * readings in a row, the young generation is at its floor and RSS less the young generation holds
 * still (settle.ts), or the deadline. An idle server in service reaches the same state at its next GC (a keep-alive comment's
 * allocations bring one in time, or V8's memory reducer does): the forced GC only does not wait for it.
 */
async function settledMemory(server: ServerProcess): Promise<Reading & { ms: number; settled: boolean }> {
  const t0 = performance.now();
  const watch = new SettleWatch({
    youngFloorBytes: YOUNG_FLOOR_BYTES,
    stillBytes: STILL_BYTES,
    stillLooks: STILL_LOOKS,
  });
  for (;;) {
    await delay(QUIET_MS);
    const { mem } = await server.gc();
    const rss = server.rss();
    const young = mem.young ?? Number.POSITIVE_INFINITY;
    const settled = watch.look(young, rss);
    if (settled || performance.now() - t0 >= SETTLE_DEADLINE_MS)
      return { rss, heap: mem.heapUsed, young: mem.young ?? 0, ms: performance.now() - t0, settled };
  }
}

export async function runIdle(server: ServerProcess, p: IdleParams): Promise<IdleResult> {
  const url = new URL(server.url);
  const n = p.streams;
  const deadline = performance.now() + p.timeoutMs;
  const control = new Pool(url.origin, { connections: OPEN_CONCURRENCY, pipelining: 1 });
  // One connection per stream: an open SSE response holds its connection.
  const streams = new Pool(url.origin, { connections: n, pipelining: 1, bodyTimeout: 0 });
  // The idle reading is settled too: a server that loaded the SDK starts with a young generation
  // of about 10 MB, and the reducer's first pass also compacts some 2 MB of old space left by the
  // start-up; a base read before that would flatter the settled figure by those megabytes.
  const base = await settledMemory(server);
  let withSessions: Reading = base;
  let withStreams: Reading = base;
  let openSessionsMs = Number.NaN;
  let openStreamsMs = Number.NaN;
  let settledAt = { rss: Number.NaN, heap: Number.NaN, young: Number.NaN, ms: Number.NaN, settled: false };
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
    settledAt = await settledMemory(server);
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
    rssSettledMb: settledAt.rss / MB,
    youngMbSettled: settledAt.young / MB,
    settleMs: settledAt.ms,
    settled: settledAt.settled && base.settled,
    kibPerSessionStreamSettled: (settledAt.rss - settledAt.young - (base.rss - base.young)) / 1024 / n,
  };
}
