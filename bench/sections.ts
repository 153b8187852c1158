// The five sections of a run, each a method: which servers start, how the repetitions
// interleave (A B C, then B C A, …), and where the measurements go. run.ts parses the flags and
// writes the results; the workloads themselves are in load/.
import { join } from 'node:path';
import type { ClientKind } from './clients/bench-client.js';
import { type Plan, sessionsFor } from './config.js';
import { auto, num } from './format.js';
import { runClientCpu } from './load/client-cpu.js';
import { runEcho } from './load/echo.js';
import { runFlood } from './load/flood.js';
import { runIdle } from './load/idle.js';
import { runSlow } from './load/slow.js';
import type { BenchResults } from './results.js';
import {
  type LaunchOptions,
  launch,
  type ServerKind,
  type ServerProcess,
  serverLabel,
} from './servers/launch.js';

export const SECTIONS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'] as const;
export type Section = (typeof SECTIONS)[number];
export const KINDS: readonly ServerKind[] = ['raw', 'sluice', 'sdk'];
/** (c)'s `hibernateAfterMs` for the `sluice+hibernate` row: well inside the 1 s settle of each reading. */
const IDLE_HIBERNATE_MS = 250;

export interface Cli {
  plan: Plan;
  only: Set<Section>;
  servers: ServerKind[];
  metrics: boolean;
  /** Add `sluice+jwt` / `sluice-jwt` rows to (a). */
  jwt: boolean;
  /** Add Sluice with tracing (API without provider; SDK provider with a no-op exporter) to (a). */
  tracing: boolean;
  profile: ServerKind | undefined;
  outDir: string;
}

export const started = performance.now();
export function log(line: string): void {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

export class Runner {
  readonly cli: Cli;
  readonly results: BenchResults;

  constructor(cli: Cli, results: BenchResults) {
    this.cli = cli;
    this.results = results;
  }

  get plan(): Plan {
    return this.cli.plan;
  }

  /** Launches a server, or records why it could not run and returns undefined. */
  async start(section: Section, opts: LaunchOptions): Promise<ServerProcess | undefined> {
    const profiling = this.cli.profile === opts.kind;
    const full = profiling ? { ...opts, cpuProfDir: join(this.cli.outDir, 'profiles', section) } : opts;
    try {
      return await launch(full);
    } catch (err) {
      const label = serverLabel(opts);
      const reason = err instanceof Error ? err.message : String(err);
      this.results.unavailable[label] ??= reason;
      log(`${label}: unavailable: ${reason.split('\n')[0]}`);
      return undefined;
    }
  }

  async echo(): Promise<void> {
    // The servers as configured by default, plus Sluice with metrics explicitly on and off.
    const variants: Pick<LaunchOptions, 'kind' | 'metrics' | 'jwt' | 'tracing' | 'hibernateMs'>[] =
      this.cli.servers.map((kind) => ({ kind }));
    // Hibernation after every answer (opt-in), its worst case: every request rebuilds the server.
    if (this.cli.servers.includes('sluice')) variants.push({ kind: 'sluice', hibernateMs: 0 });
    // The SDK's McpServer behind the least transport that can host it (servers/sdk-bare.ts): what
    // hosting the SDK costs a transport that adds nothing, beside raw's fixed bytes. Echo only: it
    // drops the SDK's notifications.
    if (this.cli.servers.includes('sdk')) variants.push({ kind: 'sdk-bare' });
    if (this.cli.metrics && this.cli.servers.includes('sluice')) {
      variants.push({ kind: 'sluice', metrics: true }, { kind: 'sluice', metrics: false });
    }
    // JWT verification (oauthResourceServer, cached JWKS) on and off, in the same run.
    if (this.cli.jwt && this.cli.servers.includes('sluice')) {
      variants.push({ kind: 'sluice', jwt: true }, { kind: 'sluice', jwt: false });
    }
    if (this.cli.tracing && this.cli.servers.includes('sluice')) {
      variants.push({ kind: 'sluice', tracing: 'api' }, { kind: 'sluice', tracing: 'sdk' });
    }
    const procs = new Map<string, ServerProcess>();
    try {
      for (const mode of this.plan.echo.modes) {
        for (const v of variants) {
          const p = await this.start('a', { ...v, mode });
          if (p !== undefined) procs.set(`${p.label}|${mode}`, p);
        }
      }
      for (let rep = 0; rep < this.plan.reps; rep++) {
        for (const mode of this.plan.echo.modes) {
          for (const c of this.plan.echo.concurrency) {
            for (const v of rotate(variants, rep)) {
              const label = serverLabel(v);
              const p = procs.get(`${label}|${mode}`);
              if (p === undefined) continue;
              const s = sessionsFor(c);
              const result = await runEcho(p, { ...this.plan.echo, concurrency: c, sessions: s });
              this.results.echo.push({ server: label, mode, c, s, rep, result });
              log(
                `(a) rep ${rep} ${mode} C=${c} ${label}: ${num(result.rps)} req/s, ${auto(result.cpuPerReqUs)} µs/req` +
                  `${result.errors > 0 ? `, ${result.errors} errors: ${result.firstError}` : ''}`,
              );
            }
          }
        }
      }
    } finally {
      for (const p of procs.values()) await p.close();
    }
  }

  async flood(): Promise<void> {
    const procs: ServerProcess[] = [];
    try {
      for (const kind of this.cli.servers) {
        const p = await this.start('b', { kind, mode: 'sse' });
        if (p === undefined) continue;
        procs.push(p);
        await this.#warmFlood(p);
      }
      for (let rep = 0; rep < this.plan.reps; rep++) {
        for (const p of rotate(procs, rep)) {
          const result = await runFlood(p, this.plan.flood);
          this.results.flood.push({ server: p.label, rep, result });
          log(
            `(b) rep ${rep} ${p.label}: ${num(result.eventsPerSec)} events/s (${result.events}/${result.sent}), ` +
              `first ${auto(result.firstEventMs)} ms, ${auto(result.cpuPerEventUs)} µs/event${result.ok ? '' : `, ${result.error}`}`,
          );
        }
      }
    } finally {
      for (const p of procs) await p.close();
    }
  }

  /**
   * Warm-up floods, not kept: until as many events as one measured flood, or 2 s. One flood of a
   * few thousand events left both the raw server and Sluice warming up through the measured
   * repetitions (the raw server went from 0.9 to 0.38 µs an event between its first and third),
   * so the median mixed cold and warm runs, differently for each server. The time cap keeps the
   * SDK server (about 10,000 events/s) from taking a measured flood's time to warm.
   */
  async #warmFlood(p: ServerProcess): Promise<void> {
    const f = this.plan.flood;
    const until = performance.now() + 2_000;
    for (let n = 0; n < f.count && performance.now() < until; n += f.warmupCount)
      await runFlood(p, { ...f, count: f.warmupCount });
  }

  /** Runs `body` on a fresh server with --expose-gc, then closes it. */
  async fresh(
    section: Section,
    v: ServerKind | Pick<LaunchOptions, 'kind' | 'hibernateMs'>,
    body: (p: ServerProcess) => Promise<void>,
  ): Promise<void> {
    const opts = typeof v === 'string' ? { kind: v } : v;
    const p = await this.start(section, { ...opts, mode: 'sse', exposeGc: true });
    if (p === undefined) return;
    try {
      await body(p);
    } finally {
      await p.close();
    }
  }

  async idle(): Promise<void> {
    // Sluice as configured by default, and with hibernation (opt-in: `hibernateAfterMs`) at a
    // quarter of the settle before each reading, so the idle sessions have dropped their servers.
    const variants: Pick<LaunchOptions, 'kind' | 'hibernateMs'>[] = this.cli.servers.map((kind) => ({
      kind,
    }));
    if (this.cli.servers.includes('sluice'))
      variants.push({ kind: 'sluice', hibernateMs: IDLE_HIBERNATE_MS });
    for (const streams of this.plan.idle.streams) {
      for (const v of variants) {
        await this.fresh('c', v, async (p) => {
          const result = await runIdle(p, { streams, timeoutMs: this.plan.idle.timeoutMs });
          this.results.idle.push({ server: p.label, result });
          log(
            `(c) ${p.label} ${streams} streams: ${auto(result.kibPerSessionStream)} KiB each${result.ok ? '' : `, ${result.error}`}`,
          );
        });
      }
    }
  }

  async slow(): Promise<void> {
    for (const kind of this.cli.servers) {
      await this.fresh('d', kind, async (p) => {
        const result = await runSlow(p, this.plan.slow);
        this.results.slow.push({ server: p.label, result });
        log(
          `(d) ${p.label}: retained ${num(result.retainedBeforeMb)} → ${num(result.retainedPausedEndMb)} MB, ` +
            `${auto(result.growthMbPerSec)} MB/s, ${num(result.coresAfterClose, 2)} cores after close${result.ok ? '' : `, ${result.error}`}`,
        );
      });
    }
  }

  async clients(): Promise<void> {
    const json = await this.start('e', { kind: 'raw', mode: 'json' });
    const sse = await this.start('e', { kind: 'raw', mode: 'sse' });
    try {
      if (json === undefined || sse === undefined) return;
      const clients: ClientKind[] = [
        'undici',
        ...this.cli.servers.filter((k): k is 'sluice' | 'sdk' => k !== 'raw'),
      ];
      for (let rep = 0; rep < this.plan.reps; rep++) {
        for (const workload of ['echo', 'flood'] as const) {
          for (const client of rotate(clients, rep)) {
            const url = workload === 'echo' ? json.url : sse.url;
            const profile =
              this.cli.profile === client
                ? join(this.cli.outDir, 'profiles', 'e', `${client}-client-${workload}`)
                : undefined;
            const result = await runClientCpu({ client, workload, url, ...this.plan.client }, profile);
            this.results.client.push({ client, workload, rep, result });
            log(
              `(e) rep ${rep} ${client} ${workload}: ${auto(result.cpuPerUnitUs)} µs CPU per ${workload === 'echo' ? 'call' : 'event'}` +
                `${result.ok ? '' : `, ${result.error}`}`,
            );
          }
        }
      }
    } finally {
      await json?.close();
      await sse?.close();
    }
  }
}
