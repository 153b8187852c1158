// The shape of bench/results/latest.json: every repetition as measured, plus per-row medians.
// Reports and target checks read the summaries; the raw records stay for anyone who wants more.
import type { ClientKind } from './clients/bench-client.js';
import type { Plan } from './config.js';
import type { ClientCpuResult } from './load/client-cpu.js';
import type { EchoResult } from './load/echo.js';
import type { FloodResult } from './load/flood.js';
import type { IdleResult } from './load/idle.js';
import type { SlowResult } from './load/slow.js';
import type { Meta } from './machine.js';
import type { ProfileSummary } from './profile.js';
import type { WireMode } from './servers/child.js';
import { medianOf } from './stats.js';

export interface EchoRecord {
  server: string;
  mode: WireMode;
  c: number;
  s: number;
  rep: number;
  result: EchoResult;
}

export interface FloodRecord {
  server: string;
  rep: number;
  result: FloodResult;
}

export interface IdleRecord {
  server: string;
  result: IdleResult;
}

export interface SlowRecord {
  server: string;
  result: SlowResult;
}

export interface ClientRecord {
  client: ClientKind;
  workload: 'echo' | 'flood';
  rep: number;
  result: ClientCpuResult;
}

export interface EchoSummary {
  server: string;
  mode: WireMode;
  c: number;
  s: number;
  okReps: number;
  reps: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuPerReqUs: number;
  serverCores: number;
  clientCores: number;
  firstError?: string;
}

export interface FloodSummary {
  server: string;
  okReps: number;
  reps: number;
  sent: number;
  events: number;
  eventsPerSec: number;
  sentPerSec: number;
  totalMs: number;
  firstEventMs: number;
  cpuPerEventUs: number;
  megabytesPerSec: number;
  serverCores: number;
  clientCores: number;
  firstError?: string;
}

export interface ClientSummary {
  client: ClientKind;
  workload: 'echo' | 'flood';
  okReps: number;
  reps: number;
  cpuPerUnitUs: number;
  unitsPerSec: number;
  firstError?: string;
}

export interface BenchResults {
  meta: Meta;
  plan: Plan;
  /** Servers or clients that could not run, with the reason (e.g. Sluice not built yet). */
  unavailable: Record<string, string>;
  echo: EchoRecord[];
  flood: FloodRecord[];
  idle: IdleRecord[];
  slow: SlowRecord[];
  client: ClientRecord[];
  profiles: ProfileSummary[];
  /** Section (f): runtimes (node:http, fetch on Node, fetch on Bun) and h2 vs HTTP/1.1. */
  runtimes?: import('./runtimes.js').RuntimeBench;
  /** Section (h): the 2026-07-28 era (bench/modern/section.ts). */
  modern?: import('./modern/section.js').ModernBench;
  summary?: { echo: EchoSummary[]; flood: FloodSummary[]; client: ClientSummary[] };
  elapsedMs?: number;
}

/** Groups records by a key, keeping first-seen order. */
function groups<T>(items: readonly T[], key: (item: T) => string): T[][] {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list === undefined) map.set(k, [item]);
    else list.push(item);
  }
  return [...map.values()];
}

function firstError(errors: (string | undefined)[]): { firstError?: string } {
  const e = errors.find((x) => x !== undefined);
  return e === undefined ? {} : { firstError: e };
}

export function summarizeEcho(records: readonly EchoRecord[]): EchoSummary[] {
  return groups(records, (r) => `${r.server}|${r.mode}|${r.c}|${r.s}`).map((g) => {
    const first = g[0] as EchoRecord;
    const ok = g.map((r) => r.result).filter((r) => r.errors === 0 && r.requests > 0);
    return {
      server: first.server,
      mode: first.mode,
      c: first.c,
      s: first.s,
      okReps: ok.length,
      reps: g.length,
      rps: medianOf(ok, (r) => r.rps),
      p50Ms: medianOf(ok, (r) => r.p50Ms),
      p99Ms: medianOf(ok, (r) => r.p99Ms),
      cpuPerReqUs: medianOf(ok, (r) => r.cpuPerReqUs),
      serverCores: medianOf(ok, (r) => r.serverCores),
      clientCores: medianOf(ok, (r) => r.clientCores),
      ...firstError(g.map((r) => r.result.firstError)),
    };
  });
}

export function summarizeFlood(records: readonly FloodRecord[]): FloodSummary[] {
  return groups(records, (r) => r.server).map((g) => {
    const first = g[0] as FloodRecord;
    const ok = g.map((r) => r.result).filter((r) => r.ok);
    return {
      server: first.server,
      okReps: ok.length,
      reps: g.length,
      sent: first.result.sent,
      events: medianOf(ok, (r) => r.events),
      eventsPerSec: medianOf(ok, (r) => r.eventsPerSec),
      sentPerSec: medianOf(ok, (r) => r.sentPerSec),
      totalMs: medianOf(ok, (r) => r.totalMs),
      firstEventMs: medianOf(ok, (r) => r.firstEventMs),
      cpuPerEventUs: medianOf(ok, (r) => r.cpuPerEventUs),
      megabytesPerSec: medianOf(ok, (r) => r.megabytesPerSec),
      serverCores: medianOf(ok, (r) => r.serverCores),
      clientCores: medianOf(ok, (r) => r.clientCores),
      ...firstError(g.map((r) => r.result.error)),
    };
  });
}

export function summarizeClient(records: readonly ClientRecord[]): ClientSummary[] {
  return groups(records, (r) => `${r.client}|${r.workload}`).map((g) => {
    const first = g[0] as ClientRecord;
    const ok = g.map((r) => r.result).filter((r) => r.ok);
    return {
      client: first.client,
      workload: first.workload,
      okReps: ok.length,
      reps: g.length,
      cpuPerUnitUs: medianOf(ok, (r) => r.cpuPerUnitUs),
      unitsPerSec: medianOf(ok, (r) => r.unitsPerSec),
      ...firstError(g.map((r) => r.result.error)),
    };
  });
}
