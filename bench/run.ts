// `npm run bench [-- flags]`: starts the raw, Sluice and SDK server children, runs workloads
// (a)–(e) interleaved and repeated, and writes bench/results/latest.{json,md}. See
// docs/benchmarks.md for the method. Flags:
//   --quick              short windows, one repetition (< 3 min)
//   --only a,b,c,d,e     sections to run (default all)
//   --servers raw,sluice,sdk   servers (and, for (e), clients) to include (default all)
//   --reps N             repetitions for (a), (b), (e)
//   --metrics            add a `sluice+metrics` server (serve({ metrics: true })) to (a)
//   --profile KIND       run that kind's server children (and, in (e), client workers) with --cpu-prof;
//                        the top self-time functions go in the report
//   --out DIR            where results go (default bench/results)
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ClientKind } from './clients/bench-client.js';
import { FULL, type Plan, QUICK, sessionsFor } from './config.js';
import { auto, num } from './format.js';
import { runClientCpu } from './load/client-cpu.js';
import { runEcho } from './load/echo.js';
import { runFlood } from './load/flood.js';
import { runIdle } from './load/idle.js';
import { runSlow } from './load/slow.js';
import { collectMeta, finishMeta } from './machine.js';
import { summarizeProfileDir } from './profile.js';
import { renderMarkdown } from './report.js';
import { type BenchResults, summarizeClient, summarizeEcho, summarizeFlood } from './results.js';
import type { WireMode } from './servers/child.js';
import {
  killAllServers,
  type LaunchOptions,
  launch,
  type ServerKind,
  type ServerProcess,
  serverLabel,
} from './servers/launch.js';

const SECTIONS = ['a', 'b', 'c', 'd', 'e'] as const;
type Section = (typeof SECTIONS)[number];
const KINDS: readonly ServerKind[] = ['raw', 'sluice', 'sdk'];

interface Cli {
  plan: Plan;
  only: Set<Section>;
  servers: ServerKind[];
  metrics: boolean;
  profile: ServerKind | undefined;
  outDir: string;
}

function list<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  flag: string,
): T[] | undefined {
  if (value === undefined) return undefined;
  const items = value.split(',').map((s) => s.trim());
  for (const item of items) {
    if (!(allowed as readonly string[]).includes(item))
      throw new Error(`${flag}: unknown "${item}"; use ${allowed.join(',')}`);
  }
  return items as T[];
}

function parseCli(argv: string[]): Cli {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      servers: { type: 'string' },
      reps: { type: 'string' },
      metrics: { type: 'boolean', default: false },
      profile: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const plan: Plan = structuredClone(values.quick === true ? QUICK : FULL);
  if (values.reps !== undefined) {
    const reps = Number(values.reps);
    if (!Number.isInteger(reps) || reps < 1 || reps > 20)
      throw new Error('--reps must be an integer from 1 to 20');
    plan.reps = reps;
  }
  const profile = list(values.profile, KINDS, '--profile')?.[0];
  return {
    plan,
    only: new Set(list(values.only, SECTIONS, '--only') ?? SECTIONS),
    servers: list(values.servers, KINDS, '--servers') ?? [...KINDS],
    metrics: values.metrics === true,
    profile,
    outDir: values.out ?? fileURLToPath(new URL('../../bench/results/', import.meta.url)),
  };
}

const started = performance.now();
function log(line: string): void {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

class Runner {
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
    const variants: { kind: ServerKind; metrics: boolean }[] = this.cli.servers.map((kind) => ({
      kind,
      metrics: false,
    }));
    if (this.cli.metrics && this.cli.servers.includes('sluice'))
      variants.push({ kind: 'sluice', metrics: true });
    const procs = new Map<string, ServerProcess>();
    try {
      for (const mode of this.plan.echo.modes) {
        for (const v of variants) {
          const p = await this.start('a', { kind: v.kind, mode, metrics: v.metrics });
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
        await runFlood(p, { ...this.plan.flood, count: this.plan.flood.warmupCount }); // JIT warm-up, not kept.
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

  /** Runs `body` on a fresh server with --expose-gc, then closes it. */
  async fresh(section: Section, kind: ServerKind, body: (p: ServerProcess) => Promise<void>): Promise<void> {
    const p = await this.start(section, { kind, mode: 'sse' as WireMode, exposeGc: true });
    if (p === undefined) return;
    try {
      await body(p);
    } finally {
      await p.close();
    }
  }

  async idle(): Promise<void> {
    for (const streams of this.plan.idle.streams) {
      for (const kind of this.cli.servers) {
        await this.fresh('c', kind, async (p) => {
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

async function main(): Promise<void> {
  const cli = parseCli(process.argv.slice(2));
  const results: BenchResults = {
    meta: collectMeta(),
    plan: cli.plan,
    unavailable: {},
    echo: [],
    flood: [],
    idle: [],
    slow: [],
    client: [],
    profiles: [],
  };
  const profileDir = join(cli.outDir, 'profiles');
  if (cli.profile !== undefined) rmSync(profileDir, { recursive: true, force: true });
  const runner = new Runner(cli, results);
  log(
    `${cli.plan.name} run: sections ${[...cli.only].join(',')}, servers ${cli.servers.join(',')}, reps ${cli.plan.reps}`,
  );
  if (cli.only.has('a')) await runner.echo();
  if (cli.only.has('b')) await runner.flood();
  if (cli.only.has('c')) await runner.idle();
  if (cli.only.has('d')) await runner.slow();
  if (cli.only.has('e')) await runner.clients();

  finishMeta(results.meta);
  results.elapsedMs = performance.now() - started;
  results.summary = {
    echo: summarizeEcho(results.echo),
    flood: summarizeFlood(results.flood),
    client: summarizeClient(results.client),
  };
  if (cli.profile !== undefined) results.profiles = summarizeProfileDir(profileDir, 15);
  const markdown = renderMarkdown(results);
  mkdirSync(cli.outDir, { recursive: true });
  writeFileSync(join(cli.outDir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(cli.outDir, 'latest.md'), markdown);
  process.stdout.write(`${markdown}\n`);
  log(`wrote ${join(cli.outDir, 'latest.json')} and latest.md`);
}

process.on('SIGINT', () => {
  killAllServers();
  process.exit(130);
});

main().then(
  () => killAllServers(),
  (err: unknown) => {
    killAllServers();
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
