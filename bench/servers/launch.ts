// The orchestrator's side of a server child: fork it with the right flags, wait until it listens,
// and read its accounting. CPU per operation comes from the child's own process.cpuUsage() (µs)
// over IPC; RSS comes from /proc so that a busy child is still measured.
import { type ChildProcess, fork, type StdioOptions } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readCpuMicros, readRssBytes } from '../proc.js';
import type { WireMode } from './child.js';
import { isChildMessage, type MemorySnapshot, type ParentMessage } from './ipc.js';
import { type BenchJwt, benchJwt, JWKS_ENV } from './jwt.js';

export type ServerKind = 'raw' | 'sdk' | 'sdk-bare' | 'sluice';

export interface LaunchOptions {
  kind: ServerKind;
  mode: WireMode;
  /** Sluice only: metrics on or off (see sluice.ts); absent keeps the server's default. */
  metrics?: boolean;
  /** Sluice only: require a JWT verified against a (cached) JWKS on every request (see jwt.ts). */
  jwt?: boolean;
  /** Sluice only: tracing with the API and no provider, or with an SDK provider (no-op exporter). */
  tracing?: 'api' | 'sdk';
  /** Sluice only: `hibernateAfterMs` (the idle-memory row with hibernation on). */
  hibernateMs?: number;
  /** Run with --expose-gc so that gc() requests force a collection (memory tests). */
  exposeGc?: boolean;
  /** Write a --cpu-prof profile into this directory when the child exits. */
  cpuProfDir?: string;
}

export interface ChildStats {
  /** process.cpuUsage() user + system, µs since the child started. */
  cpuUs: number;
  mem: MemorySnapshot;
  /** Whether a GC ran before the snapshot. */
  gc: boolean;
}

const READY_TIMEOUT_MS = 20_000;
const REQUEST_TIMEOUT_MS = 10_000;
const EXIT_TIMEOUT_MS = 5_000;
/** Writing a profile on exit can take a few seconds for a long run. */
const EXIT_TIMEOUT_PROFILING_MS = 20_000;

/**
 * Children write both stdout and stderr to our stderr (fd 2): stdout carries only the report, so
 * `npm run bench > table.md` stays clean whatever the code under test logs.
 */
export const CHILD_STDIO: StdioOptions = ['ignore', 2, 2, 'ipc'];

const live = new Set<ChildProcess>();

/** Kills every server child still running (used on SIGINT and at the end of a run). */
export function killAllServers(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}

/** A running server child. */
export class ServerProcess {
  readonly label: string;
  readonly url: string;
  /** Headers every request to this server carries (`authorization` for the JWT rows). */
  readonly headers: Record<string, string>;
  readonly #child: ChildProcess;
  readonly #profiling: boolean;
  readonly #pending = new Map<number, (stats: ChildStats) => void>();
  #nextId = 1;

  constructor(
    label: string,
    url: string,
    child: ChildProcess,
    profiling: boolean,
    headers: Record<string, string> = {},
  ) {
    this.label = label;
    this.url = url;
    this.headers = headers;
    this.#child = child;
    this.#profiling = profiling;
    child.on('message', (msg: unknown) => {
      if (!isChildMessage(msg) || msg.type !== 'stats') return;
      const resolve = this.#pending.get(msg.id);
      this.#pending.delete(msg.id);
      resolve?.({ cpuUs: msg.cpuUs, mem: msg.mem, gc: msg.gc });
    });
  }

  get pid(): number {
    return this.#child.pid ?? -1;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  /** The child's own CPU and memory accounting. */
  stats(timeoutMs = REQUEST_TIMEOUT_MS): Promise<ChildStats> {
    return this.#request('stats', timeoutMs);
  }

  /** Forces a GC in the child (needs `exposeGc`) and returns memory after it. */
  gc(timeoutMs = REQUEST_TIMEOUT_MS): Promise<ChildStats> {
    return this.#request('gc', timeoutMs);
  }

  /** RSS in bytes from /proc. */
  rss(): number {
    return readRssBytes(this.pid);
  }

  /** utime + stime in µs from /proc (10 ms resolution, but needs no reply from the child). */
  procCpuUs(): number {
    return readCpuMicros(this.pid);
  }

  /** Asks the child to close its server and exit; kills it if it does not. */
  async close(): Promise<void> {
    const child = this.#child;
    if (child.exitCode !== null || child.signalCode !== null) {
      live.delete(child);
      return;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.send({ type: 'exit' } satisfies ParentMessage);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.#profiling ? EXIT_TIMEOUT_PROFILING_MS : EXIT_TIMEOUT_MS);
    });
    const clean = await Promise.race([exited.then(() => true), timeout]);
    clearTimeout(timer);
    if (!clean) {
      child.kill('SIGKILL');
      await exited;
    }
    live.delete(child);
  }

  #request(type: 'stats' | 'gc', timeoutMs: number): Promise<ChildStats> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`${this.label}: no ${type} reply within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, (stats) => {
        clearTimeout(timer);
        resolve(stats);
      });
      this.#child.send({ type, id } satisfies ParentMessage);
    });
  }
}

/**
 * The label used in tables: `sluice`, `sdk`, `raw`, `sluice+metrics` / `sluice-metrics`, or
 * `sluice+jwt` / `sluice-jwt`, or `sluice+otel-api` / `sluice+otel-sdk`, or `sluice+hibernate-MS`.
 */
export function serverLabel(
  opts: Pick<LaunchOptions, 'kind' | 'metrics' | 'jwt' | 'tracing' | 'hibernateMs'>,
): string {
  if (opts.hibernateMs !== undefined) return `${opts.kind}+hibernate-${opts.hibernateMs}`;
  if (opts.jwt !== undefined) return `${opts.kind}${opts.jwt ? '+' : '-'}jwt`;
  if (opts.tracing !== undefined) return `${opts.kind}+otel-${opts.tracing}`;
  if (opts.metrics === undefined) return opts.kind;
  return `${opts.kind}${opts.metrics ? '+' : '-'}metrics`;
}

/** Forks a server child and resolves once it listens; rejects with the child's reason if it cannot. */
export async function launch(opts: LaunchOptions): Promise<ServerProcess> {
  const jwt = opts.jwt === true ? await benchJwt() : undefined;
  return launchWith(opts, jwt);
}

function launchWith(opts: LaunchOptions, jwt: BenchJwt | undefined): Promise<ServerProcess> {
  const label = serverLabel(opts);
  const entry = fileURLToPath(new URL(`./${opts.kind}.js`, import.meta.url));
  const execArgv: string[] = [];
  if (opts.exposeGc === true) execArgv.push('--expose-gc');
  if (opts.cpuProfDir !== undefined) {
    const dir = join(opts.cpuProfDir, `${label}-${opts.mode}`);
    mkdirSync(dir, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
  }
  const args = ['--mode', opts.mode];
  if (opts.metrics !== undefined) args.push('--metrics', opts.metrics ? 'on' : 'off');
  if (jwt !== undefined) args.push('--jwt');
  if (opts.tracing !== undefined) args.push('--tracing', opts.tracing);
  if (opts.hibernateMs !== undefined) args.push('--hibernate', String(opts.hibernateMs));
  const child = fork(entry, args, {
    execArgv,
    stdio: CHILD_STDIO,
    ...(jwt === undefined ? {} : { env: { ...process.env, [JWKS_ENV]: jwt.jwks } }),
  });
  live.add(child);
  return new Promise((resolve, reject) => {
    const finish = (err: Error | undefined, url?: string): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err !== undefined || url === undefined) {
        child.kill('SIGKILL');
        live.delete(child);
        reject(err ?? new Error(`${label}: no URL`));
        return;
      }
      const headers = jwt === undefined ? {} : { authorization: jwt.authorization };
      resolve(new ServerProcess(label, url, child, opts.cpuProfDir !== undefined, headers));
    };
    const onMessage = (msg: unknown): void => {
      if (!isChildMessage(msg)) return;
      if (msg.type === 'ready') finish(undefined, msg.url);
      else if (msg.type === 'failed') finish(new Error(`${label}: ${msg.message}`));
    };
    const onExit = (code: number | null): void =>
      finish(new Error(`${label}: exited with ${code} before listening`));
    const timer = setTimeout(
      () => finish(new Error(`${label}: not ready within ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}
