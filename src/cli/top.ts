/**
 * `sluice top URL...`: a live view of running Sluice servers from their Prometheus endpoint. On a
 * terminal it redraws one screen per interval; otherwise it writes one JSON object per line per
 * interval (for scripts and logs). Several URLs are the instances of one cluster: their numbers
 * are summed. The parsing and arithmetic live in top/ (pure, unit-tested); this file is the loop.
 */
import { type CommandLine, readCommandLine } from './command-line.js';
import { failureHint } from './hints.js';
import { TOP_COMMAND } from './spec/top.js';
import { renderFrame } from './top/render.js';
import { buildReport, type InstanceState } from './top/report.js';
import { metricsUrl, ScrapeError, scrape } from './top/scrape.js';
import type { Snapshot } from './top/series.js';
import { UsageError, usageFailure } from './usage-error.js';

const ENTER_ALT = '\x1b[?1049h\x1b[?25l';
const LEAVE_ALT = '\x1b[?25h\x1b[?1049l';
const HOME_CLEAR = '\x1b[H\x1b[J';

interface TopOptions {
  readonly urls: readonly URL[];
  readonly intervalMs: number;
  readonly count: number;
  readonly json: boolean;
}

/** What the parsed arguments ask for; a mistake is a UsageError. */
function options(line: CommandLine<typeof TOP_COMMAND.options>): TopOptions {
  const { values, positionals } = line;
  if (positionals.length === 0)
    throw new UsageError('give the URL of a server (its MCP endpoint or /metrics)');
  const urls = positionals.map((p) => {
    try {
      return metricsUrl(p);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  });
  const interval = Number(values.interval ?? '2');
  if (!(Number.isFinite(interval) && interval >= 0.1 && interval <= 3600))
    throw new UsageError(`--interval must be a number of seconds from 0.1 to 3600, got '${values.interval}'`);
  let count = Number.POSITIVE_INFINITY;
  if (values.count !== undefined) {
    if (!/^[1-9][0-9]{0,8}$/.test(values.count))
      throw new UsageError(`--count must be a positive integer, got '${values.count}'`);
    count = Number(values.count);
  }
  if (values.once) count = 1;
  return { urls, intervalMs: Math.round(interval * 1000), count, json: values.json ?? false };
}

export async function main(argv: string[]): Promise<number> {
  const line = readCommandLine(TOP_COMMAND, argv);
  if (typeof line === 'number') return line;
  let o: TopOptions;
  try {
    o = options(line);
  } catch (error) {
    if (error instanceof UsageError) return usageFailure('top', error.message, TOP_COMMAND.usageLine);
    throw error;
  }
  return run(o);
}

/** One scrape of every instance; a failure is recorded, not thrown. */
async function scrapeAll(urls: readonly URL[], timeoutMs: number): Promise<(Snapshot | ScrapeError)[]> {
  return Promise.all(
    urls.map((u) =>
      scrape(u, timeoutMs).catch((e: unknown) =>
        e instanceof ScrapeError ? e : new ScrapeError('SCRAPE_UNREACHABLE', `${u.href}: ${String(e)}`),
      ),
    ),
  );
}

async function run(o: TopOptions): Promise<number> {
  // A busy server may answer a scrape late; the next one then starts late, and the rates use the
  // real time between scrapes, so a short interval only stretches.
  const timeoutMs = Math.min(30_000, Math.max(5_000, 2 * o.intervalMs));
  const first = await scrapeAll(o.urls, timeoutMs);
  const failed = first.flatMap((s, i) => (s instanceof ScrapeError ? [{ error: s, url: o.urls[i] }] : []));
  if (failed.length > 0) {
    for (const f of failed)
      process.stderr.write(`sluice top: ${f.error.message}${failureHint(f.error, f.url)}\n`);
    return 1;
  }
  const tty = process.stdout.isTTY === true && !o.json;
  const live = tty && o.count > 1;
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const stdin = process.stdin;
  const onKey = (d: Buffer): void => {
    // q, Q or Ctrl-C (raw mode delivers it as a byte, not a signal).
    if (d.includes(0x71) || d.includes(0x51) || d.includes(0x03)) stop.abort();
  };
  if (live && stdin.isTTY === true) {
    stdin.setRawMode(true);
    stdin.on('data', onKey);
  }
  if (live) process.stdout.write(ENTER_ALT);
  let prev: (Snapshot | undefined)[] = first.map((s) => (s instanceof ScrapeError ? undefined : s));
  try {
    for (let n = 0; n < o.count; n++) {
      if (!(await pause(o.intervalMs, stop.signal))) break;
      const now = await scrapeAll(o.urls, timeoutMs);
      const states: InstanceState[] = o.urls.map((u, i) => {
        const s = now[i];
        return s instanceof ScrapeError || s === undefined
          ? { url: u.href, prev: prev[i], cur: undefined, error: s?.message ?? 'no answer' }
          : { url: u.href, prev: prev[i], cur: s };
      });
      const report = buildReport(states, new Date());
      if (tty) {
        const frame = renderFrame(report, process.stdout.columns ?? 100);
        process.stdout.write(live ? `${HOME_CLEAR}${frame}\n` : `${frame}\n`);
      } else {
        process.stdout.write(`${JSON.stringify(report)}\n`);
      }
      // An instance that failed keeps its last good scrape, so its next rates span the gap.
      prev = states.map((s, i) => s.cur ?? prev[i]);
    }
  } finally {
    if (live) process.stdout.write(LEAVE_ALT);
    if (live && stdin.isTTY === true) {
      stdin.off('data', onKey);
      stdin.setRawMode(false);
      stdin.pause();
    }
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return 0;
}

/** Waits `ms`; false when `signal` aborted first. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onAbort = (): void => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort);
  });
}
