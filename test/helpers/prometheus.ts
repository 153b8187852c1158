/**
 * A real Prometheus server for a test (Debian's `prometheus`): a temp config scraping the given
 * targets every second (and evaluating the given rule files every second), its TSDB in a temp dir,
 * its web API on a free 127.0.0.1 port. Never a system Prometheus. `stop()` ends it and removes the
 * dir. Tests call `skipWithoutPrometheus(t)` first: without the binary they are skipped loudly;
 * `.ci/run` installs it, so CI always runs them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Daemon, daemonBinary, freePort, spawnDaemon, stopDaemon, waitForPort } from './daemon.js';
import { withDeadline } from './deadline.js';

export const PROMETHEUS_MISSING = 'SKIPPED: prometheus not installed — .ci/run installs it';

const binary = daemonBinary('PROMETHEUS', '/usr/bin/prometheus', 'prometheus', PROMETHEUS_MISSING);
export const findPrometheus = binary.find;
export const skipWithoutPrometheus = binary.skipWithout;
/** promtool ships in the same Debian package. */
export const findPromtool = daemonBinary(
  'PROMTOOL',
  '/usr/bin/promtool',
  'promtool',
  'promtool missing',
).find;

export interface PromResult {
  readonly metric: Record<string, string>;
  /** [unix seconds, "value"] */
  readonly value: [number, string];
}

export interface Prometheus {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** GET /api/v1/query; throws with Prometheus's error (type and message) when the query fails. */
  query(expr: string): Promise<PromResult[]>;
  /** GET any API path (e.g. /api/v1/rules) and return its `data`. */
  api(path: string): Promise<unknown>;
  output(): string;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  /** host:port of each /metrics to scrape (job "sluice"). */
  readonly targets: readonly string[];
  /** Absolute paths of rule files to load. */
  readonly ruleFiles?: readonly string[];
  /** Scrape and rule evaluation interval. @defaultValue '1s' */
  readonly interval?: string;
}

async function getJson(
  url: string,
  timeoutMs: number,
): Promise<{ status: string; data?: unknown; error?: string; errorType?: string }> {
  const res = await withDeadline(
    fetch(url, { signal: AbortSignal.timeout(timeoutMs) }),
    timeoutMs + 1000,
    `GET ${url}`,
  );
  return (await res.json()) as { status: string; data?: unknown; error?: string; errorType?: string };
}

export async function startPrometheus(o: PrometheusOptions): Promise<Prometheus> {
  const bin = findPrometheus();
  if (bin === undefined) throw new Error(PROMETHEUS_MISSING);
  const dir = await mkdtemp(join(tmpdir(), 'sluice-prometheus-'));
  const interval = o.interval ?? '1s';
  const config = [
    'global:',
    `  scrape_interval: ${interval}`,
    `  evaluation_interval: ${interval}`,
    `  scrape_timeout: ${interval}`,
    ...(o.ruleFiles === undefined || o.ruleFiles.length === 0
      ? []
      : ['rule_files:', ...o.ruleFiles.map((f) => `  - ${JSON.stringify(f)}`)]),
    'scrape_configs:',
    '  - job_name: sluice',
    '    metrics_path: /metrics',
    '    static_configs:',
    `      - targets: [${o.targets.map((t) => JSON.stringify(t)).join(', ')}]`,
    '',
  ].join('\n');
  await writeFile(join(dir, 'prometheus.yml'), config);
  let log = '';
  let started: { d: Daemon; port: number } | undefined;
  // Another process may take the free port between probe and bind: retry on a new one.
  for (let attempt = 0; attempt < 5 && started === undefined; attempt++) {
    const port = await freePort();
    const d = spawnDaemon(
      bin,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      ['ignore', 'pipe', 'pipe'],
      'SIGKILL',
    );
    d.child.stderr?.setEncoding('utf8').on('data', (s: string) => {
      log = (log + s).slice(-16_000);
    });
    if ((await waitForPort(d, port, 20_000)) === 'ready') started = { d, port };
    else await stopDaemon(d, 'SIGKILL', 'prometheus');
  }
  if (started === undefined) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`prometheus did not start:\n${log}`);
  }
  const { d, port } = started;
  const url = `http://127.0.0.1:${port}`;
  // The port opens before the TSDB and rules are loaded; /-/ready says when queries work.
  const readyBy = Date.now() + 20_000;
  for (;;) {
    const ok = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > readyBy || d.hasExited()) {
      await stopDaemon(d, 'SIGKILL', 'prometheus');
      await rm(dir, { recursive: true, force: true });
      throw new Error(`prometheus not ready within 20 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const api = async (path: string): Promise<unknown> => {
    const body = await getJson(`${url}${path}`, 10_000);
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.errorType}: ${body.error}`);
    return body.data;
  };
  return {
    url,
    api,
    async query(expr) {
      const data = (await api(`/api/v1/query?query=${encodeURIComponent(expr)}`)) as {
        resultType: string;
        result: PromResult[] | [number, string];
      };
      if (data.resultType === 'scalar') {
        const [t, v] = data.result as [number, string];
        return [{ metric: {}, value: [t, v] }];
      }
      if (data.resultType !== 'vector')
        throw new Error(`prometheus: ${expr} gave a ${data.resultType}, not a vector`);
      return data.result as PromResult[];
    },
    output: () => log,
    async stop() {
      await stopDaemon(d, 'SIGTERM', 'prometheus');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Every PromQL expression of a Grafana dashboard (rows' nested panels included), with its panel title. */
export function dashboardQueries(dashboard: unknown): { panel: string; expr: string }[] {
  const out: { panel: string; expr: string }[] = [];
  const visit = (panels: unknown): void => {
    if (!Array.isArray(panels)) return;
    for (const p of panels as { title?: string; targets?: { expr?: string }[]; panels?: unknown }[]) {
      for (const t of p.targets ?? []) {
        if (typeof t.expr === 'string') out.push({ panel: p.title ?? '(untitled)', expr: t.expr });
      }
      visit(p.panels);
    }
  };
  visit((dashboard as { panels?: unknown }).panels);
  return out;
}

/** A dashboard expression with Grafana's variables bound: every job and instance, `window` for rates. */
export function bindGrafanaVariables(expr: string, window: string): string {
  return expr.replaceAll('$__rate_interval', window).replaceAll('$job', '.*').replaceAll('$instance', '.*');
}
