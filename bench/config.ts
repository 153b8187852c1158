// What a run measures, and for how long. `--quick` keeps every section but shortens windows and
// repetitions so that the whole run stays under 3 minutes; the full plan stays under 20.
import type { WireMode } from './servers/child.js';

export interface Plan {
  name: 'quick' | 'full';
  /** Interleaved repetitions of (a), (b) and (e); the tables show medians. */
  reps: number;
  echo: {
    modes: WireMode[];
    concurrency: number[];
    warmupMs: number;
    durationMs: number;
    maxRequests: number;
  };
  flood: { count: number; payloadBytes: number; timeoutMs: number; warmupCount: number };
  idle: { streams: number[]; timeoutMs: number };
  slow: { pauseMs: number; afterMs: number; payloadBytes: number; count: number; yieldEvery: number };
  client: { warmupMs: number; durationMs: number; maxOps: number; floodCount: number; callTimeoutMs: number };
}

/** Sessions used for a given concurrency: one at C=1, else 4 (as in the baseline, docs/benchmarks.md). */
export function sessionsFor(concurrency: number): number {
  return concurrency === 1 ? 1 : 4;
}

export const FULL: Plan = {
  name: 'full',
  reps: 3,
  echo: {
    modes: ['json', 'sse'],
    concurrency: [1, 16, 64],
    warmupMs: 1_000,
    durationMs: 5_000,
    maxRequests: 1_000_000,
  },
  flood: { count: 100_000, payloadBytes: 0, timeoutMs: 120_000, warmupCount: 10_000 },
  idle: { streams: [1_000, 5_000], timeoutMs: 120_000 },
  slow: { pauseMs: 10_000, afterMs: 3_000, payloadBytes: 4_096, count: 20_000_000, yieldEvery: 1_000 },
  client: {
    warmupMs: 1_000,
    durationMs: 3_000,
    maxOps: 1_000_000,
    floodCount: 10_000,
    callTimeoutMs: 60_000,
  },
};

export const QUICK: Plan = {
  name: 'quick',
  reps: 1,
  echo: {
    modes: ['json', 'sse'],
    concurrency: [1, 16, 64],
    warmupMs: 500,
    durationMs: 2_000,
    maxRequests: 500_000,
  },
  flood: { count: 20_000, payloadBytes: 0, timeoutMs: 60_000, warmupCount: 5_000 },
  idle: { streams: [1_000], timeoutMs: 60_000 },
  slow: { pauseMs: 5_000, afterMs: 2_000, payloadBytes: 4_096, count: 20_000_000, yieldEvery: 1_000 },
  client: { warmupMs: 300, durationMs: 1_500, maxOps: 500_000, floodCount: 5_000, callTimeoutMs: 60_000 },
};
