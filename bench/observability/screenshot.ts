// Makes docs/observability-graphs.png: Prometheus's own graph page, in headless Chromium, over a
// 2-instance `sluice serve --redis --metrics` cluster under a varying load for about a minute and
// a half. The graphs are the key panels of deploy/grafana/sluice.json (requests by method, latency
// p99 by method, open streams, write stalls and queue depth, replays, forwarded share and hop
// latency). Everything runs on loopback with private redis-server and prometheus processes.
//
//   npm run -s build && node dist/bench/observability/screenshot.js [--out FILE] [--seconds N]
//
// Needs redis-server, prometheus and chromium (/usr/bin/chromium or $SLUICE_CHROMIUM).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { driveLoad, holdStream } from '../../test/helpers/observe-load.js';
import { startPrometheus } from '../../test/helpers/prometheus.js';
import { startRedis } from '../../test/helpers/redis.js';
import { repoRoot, type SpawnedServe, spawnServe } from '../../test/helpers/spawn-serve.js';

const CHROMIUM = process.env['SLUICE_CHROMIUM'] ?? '/usr/bin/chromium';
const W = '15s';

/** The graphs, in page order: title for the log, PromQL for the page. */
const GRAPHS: readonly [string, string][] = [
  ['requests/s by method', `sum by (method) (rate(sluice_responses_total[${W}]))`],
  [
    'latency p99 by method (s)',
    `histogram_quantile(0.99, sum by (method, le) (rate(sluice_request_duration_seconds_bucket[${W}])))`,
  ],
  ['open SSE streams by kind', 'sum by (kind) (sluice_streams_open)'],
  [
    'write stalls: seconds stalled per second, and queued bytes (MiB)',
    `label_replace(sum(rate(sluice_write_stall_seconds_sum[${W}])), "series", "stalled s/s", "", "") or label_replace(sum(sluice_queued_bytes) / 1048576, "series", "queued MiB", "", "")`,
  ],
  [
    'replays served and declined per second',
    `label_replace(sum(rate(sluice_replays_served_total[${W}])), "reason", "served", "", "") or sum by (reason) (rate(sluice_replays_declined_total{reason="malformed"}[${W}]))`,
  ],
  [
    'forwarded share',
    `sum(rate(sluice_cluster_forwarded_total[${W}])) / (sum(rate(sluice_http_requests_total[${W}])) - sum(rate(sluice_cluster_forwarded_in_total[${W}])))`,
  ],
  [
    'hop latency p50 / p99 (s)',
    `label_replace(histogram_quantile(0.5, sum by (le) (rate(sluice_cluster_forward_seconds_bucket[${W}]))), "q", "p50", "", "") or label_replace(histogram_quantile(0.99, sum by (le) (rate(sluice_cluster_forward_seconds_bucket[${W}]))), "q", "p99", "", "")`,
  ],
];

/**
 * Debian's prometheus ships the classic web UI only (/classic/graph, Rickshaw SVG charts); an
 * upstream build has the React one at /graph (flot canvases). Both take the same g0.* parameters.
 */
async function graphPage(base: string): Promise<string> {
  const classic = await fetch(`${base}/classic/graph`, { redirect: 'manual' }).then(
    (r) => r.status === 200,
    () => false,
  );
  return classic ? `${base}/classic/graph` : `${base}/graph`;
}

function graphUrl(page: string, rangeSeconds: number): string {
  const q = new URLSearchParams();
  GRAPHS.forEach(([, expr], i) => {
    q.set(`g${i}.expr`, expr);
    q.set(`g${i}.tab`, '0');
    q.set(`g${i}.stacked`, '0');
    q.set(`g${i}.show_exemplars`, '0');
    q.set(`g${i}.range_input`, `${rangeSeconds}s`);
  });
  return `${page}?${q.toString()}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, seconds: { type: 'string' } },
    strict: true,
  });
  const out = resolve(values.out ?? join(repoRoot(), 'docs', 'observability-graphs.png'));
  const seconds = Number(values.seconds ?? '90');
  if (!(seconds >= 20 && seconds <= 600)) throw new Error('--seconds must be from 20 to 600');
  const redis = await startRedis();
  const servers: SpawnedServe[] = [];
  let prom: Awaited<ReturnType<typeof startPrometheus>> | undefined;
  const profile = mkdtempSync(join(tmpdir(), 'sluice-screenshot-'));
  try {
    for (let i = 0; i < 2; i++) {
      servers.push(
        await spawnServe(['--metrics', '--redis', redis.url, '--keepalive-ms', '2000'], {}, 45_000),
      );
    }
    const urls = servers.map((s) => s.url);
    prom = await startPrometheus({ targets: servers.map((s) => new URL(s.url).host) });
    process.stderr.write(`prometheus ${prom.url}; load for ${seconds} s\n`);
    // Phases of different intensity, so the graphs have a shape: idle, light, heavy with slow
    // readers and more open streams, light again.
    const started = Date.now();
    const held: { close(): Promise<void> }[] = [];
    const phase = async (
      share: number,
      pauseMs: number,
      slowEvery: number,
      streams: number,
    ): Promise<void> => {
      while (held.length < streams) held.push(await holdStream(urls[held.length % urls.length] as string));
      while (held.length > streams) await held.pop()?.close();
      const ms = seconds * 1000 * share;
      const end = Date.now() + ms;
      while (Date.now() < end) {
        await driveLoad(urls, { rounds: 1000, deadlineMs: end - Date.now(), pauseMs, slowEvery });
      }
    };
    await delay(seconds * 100);
    await phase(0.25, 400, 0, 2);
    await phase(0.35, 0, 2, 8);
    await phase(0.2, 250, 0, 4);
    for (const h of held.splice(0)) await h.close();
    await delay(Math.max(0, started + seconds * 1000 - Date.now()));

    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      viewport: { width: 1600, height: 900 },
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      timeout: 60_000,
    });
    try {
      const page = browser.pages()[0] ?? (await browser.newPage());
      // Two graphs per row, and the navigation bar in the flow (fixed, it lands mid-page in a
      // full-page capture). Styled before the graphs draw, so they size to their column.
      await page.addInitScript(() => {
        document.addEventListener('DOMContentLoaded', () => {
          const style = document.createElement('style');
          style.textContent = `nav.navbar { position: static !important; }
            body { padding-top: 0 !important; }
            #graph_container { display: grid; grid-template-columns: 1fr 1fr; column-gap: 24px; }
            #graph_container > .clearfix { grid-column: 1 / -1; }
            #graph_container > * { min-width: 0; }
            .graph { min-height: 260px !important; height: 260px; }`;
          document.head.appendChild(style);
        });
      });
      await page.goto(graphUrl(await graphPage(prom.url), seconds + 10), { timeout: 60_000 });
      // One chart per graph once every range query has answered.
      await page.waitForFunction(
        (n) => document.querySelectorAll('svg.rickshaw_graph, canvas.flot-base').length >= n,
        GRAPHS.length,
        { timeout: 60_000 },
      );
      await delay(1_500);
      await page.screenshot({ path: out, fullPage: true });
    } finally {
      await browser.close();
    }
    process.stderr.write(`wrote ${out}\n`);
    for (const [title, expr] of GRAPHS) {
      const r = await prom.query(`max_over_time((${expr})[${seconds}s:1s])`);
      process.stderr.write(
        `  ${title}: ${r.map((s) => `${JSON.stringify(s.metric)}=${Number(s.value[1]).toPrecision(3)}`).join(' ')}\n`,
      );
    }
  } finally {
    await prom?.stop();
    for (const s of servers) await s.close().catch(() => undefined);
    await redis.stop();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`screenshot: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
