// `npm run bench [-- flags]`: starts the raw, Sluice and SDK server children, runs workloads
// (a)–(e) interleaved and repeated, and writes bench/results/latest.{json,md}. See
// docs/benchmarks.md for the method. Flags:
//   --quick              short windows, one repetition (< 3 min)
//   --only a,…,i sections to run (default all); (f) is partial output (bench/partial.ts),
//                        (g) runtimes and HTTP/2 (bench/runtimes.ts), (h) the 2026-07-28 era
//                        (bench/modern/section.ts; `npm run bench:modern` runs it alone)
//                        (i) scale-out on Redis (bench/cluster/section.ts), (j) tasks (bench/tasks/section.ts),
//                        (k) DPoP at the resource server (bench/auth/dpop.ts)
//   --servers raw,sluice,sdk   servers (and, for (e), clients) to include (default all)
//   --reps N             repetitions for (a), (b), (e)
//   --metrics            add `sluice+metrics` and `sluice-metrics` servers (serve({ metrics: true|false })) to (a)
//   --jwt                add `sluice+jwt` (oauthResourceServer verifying a JWT per request, JWKS cached)
//                        and `sluice-jwt` (no authentication) servers to (a)
//   --tracing            add `sluice+otel-api` (tracing: { api }, no provider) and `sluice+otel-sdk` (an SDK
//                        provider with a no-op exporter) servers to (a), beside `sluice` (tracing off)
//   --profile KIND       run that kind's server children (raw, sluice, sdk or sdk-bare; in (e), client
//                        workers too) with --cpu-prof; the top self-time functions go in the report
//   --out DIR            where results go (default bench/results)
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type DpopBench, renderDpop, runDpop } from './auth/dpop.js';
import { type AffineRun, renderAffine, runAffine } from './cluster/affine.js';
import { type ClusterRun, renderCluster } from './cluster/report.js';
import { runCluster } from './cluster/section.js';
import { FULL, type Plan, QUICK } from './config.js';
import { collectMeta, finishMeta } from './machine.js';
import { renderModern, runModern } from './modern/section.js';
import { type PartialRun, renderPartial, runPartial } from './partial.js';
import { summarizeProfileDir } from './profile.js';
import { renderMarkdown } from './report.js';
import { type BenchResults, summarizeClient, summarizeEcho, summarizeFlood } from './results.js';
import { renderRuntimes, runRuntimes } from './runtimes.js';
import { type Cli, KINDS, log, Runner, SECTIONS, started } from './sections.js';
import { killAllServers, type ServerKind } from './servers/launch.js';
import { renderTasks, runTasks, type TasksBench } from './tasks/section.js';

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
      jwt: { type: 'boolean', default: false },
      tracing: { type: 'boolean', default: false },
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
  const profile = list<ServerKind>(values.profile, [...KINDS, 'sdk-bare'], '--profile')?.[0];
  return {
    plan,
    only: new Set(list(values.only, SECTIONS, '--only') ?? SECTIONS),
    servers: list(values.servers, KINDS, '--servers') ?? [...KINDS],
    metrics: values.metrics === true,
    jwt: values.jwt === true,
    tracing: values.tracing === true,
    profile,
    outDir: values.out ?? fileURLToPath(new URL('../../bench/results/', import.meta.url)),
  };
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
  let partial: PartialRun[] = [];
  if (cli.only.has('f'))
    partial = await runPartial(cli.plan.name === 'quick' ? 20_000 : 50_000, cli.plan.reps, log);
  if (cli.only.has('g')) results.runtimes = await runRuntimes(cli.plan.name === 'quick', log);
  if (cli.only.has('h'))
    results.modern = await runModern(
      cli.plan.name === 'quick',
      Math.max(3, cli.plan.reps),
      log,
      cli.profile === undefined ? undefined : { kind: cli.profile, dir: profileDir },
    );
  let cluster: ClusterRun | undefined;
  if (cli.only.has('i')) {
    try {
      cluster = await runCluster(cli.plan.name === 'quick', log);
    } catch (err) {
      // No redis-server here, or a member failed: the other sections' results still get written.
      const reason = err instanceof Error ? err.message : String(err);
      results.unavailable['cluster (i)'] = reason;
      log(`(i) unavailable: ${reason.split('\n')[0]}`);
    }
  }
  let affine: AffineRun | undefined;
  if (cli.only.has('i')) {
    try {
      affine = await runAffine(cli.plan.name === 'quick');
      log(
        `(i) owner-affine ÷ round robin, CPU per request: ×${(affine.cpuUs.affine / affine.cpuUs.roundRobin).toFixed(2)}`,
      );
    } catch (err) {
      // No nginx (or redis-server) here: the rest of (i) stands.
      const reason = err instanceof Error ? err.message : String(err);
      results.unavailable['owner-affine routing (i)'] = reason;
      log(`(i) owner-affine unavailable: ${reason.split('\n')[0]}`);
    }
  }

  let tasks: TasksBench | undefined;
  if (cli.only.has('j')) {
    try {
      tasks = await runTasks(cli.plan.name === 'quick', Math.max(5, cli.plan.reps), log);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      results.unavailable['tasks (j)'] = reason;
      log(`(j) unavailable: ${reason.split('\n')[0]}`);
    }
  }

  let dpop: DpopBench | undefined;
  if (cli.only.has('k')) dpop = await runDpop(cli.plan.name === 'quick', Math.max(3, cli.plan.reps), log);

  finishMeta(results.meta);
  results.elapsedMs = performance.now() - started;
  results.summary = {
    echo: summarizeEcho(results.echo),
    flood: summarizeFlood(results.flood),
    client: summarizeClient(results.client),
  };
  if (cli.profile !== undefined) results.profiles = summarizeProfileDir(profileDir, 15);
  const markdown =
    renderMarkdown(results) +
    renderPartial(partial) +
    (results.runtimes === undefined ? '' : `\n${renderRuntimes(results.runtimes)}`) +
    (results.modern === undefined ? '' : `\n${renderModern(results.modern)}`) +
    (cluster === undefined ? '' : `\n${renderCluster(cluster)}`) +
    (affine === undefined ? '' : `\n${renderAffine(affine)}`) +
    (tasks === undefined ? '' : `\n${renderTasks(tasks)}`) +
    (dpop === undefined ? '' : `\n${renderDpop(dpop)}`);
  if (partial.length > 0) (results as BenchResults & { partial?: PartialRun[] }).partial = partial;
  if (cluster !== undefined) (results as BenchResults & { cluster?: ClusterRun }).cluster = cluster;
  if (affine !== undefined) (results as BenchResults & { affine?: AffineRun }).affine = affine;
  if (tasks !== undefined) (results as BenchResults & { tasks?: TasksBench }).tasks = tasks;
  if (dpop !== undefined) (results as BenchResults & { dpop?: DpopBench }).dpop = dpop;
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
