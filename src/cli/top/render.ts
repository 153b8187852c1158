/**
 * `sluice top`'s screen on a terminal: one frame per interval, drawn over the previous one. Pure:
 * a report in, text out (no escape sequences; the caller positions the cursor).
 */
import type { TopReport } from './report.js';

function seconds(v: number | null): string {
  if (v === null) return '-';
  if (v < 1) return `${(v * 1000).toFixed(v < 0.01 ? 2 : 1)}ms`;
  return `${v.toFixed(2)}s`;
}

function bytes(n: number): string {
  if (n < 1024) return `${n}B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)}KiB`;
  return `${(n / 1024 / 1024).toFixed(1)}MiB`;
}

function rate(n: number): string {
  return n >= 100 ? n.toFixed(0) : n.toFixed(n >= 10 ? 1 : 2);
}

function reasons(r: Readonly<Record<string, number>>): string {
  const parts = Object.entries(r)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${rate(v)}/s`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

export function renderFrame(r: TopReport, width = 100): string {
  const up = r.instances.filter((i) => i.up).length;
  const lines: string[] = [];
  lines.push(
    `sluice top — ${r.time.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}  ` +
      `interval ${r.intervalSeconds.toFixed(1)}s  instances ${up}/${r.instances.length} up`,
  );
  for (const i of r.instances) {
    if (i.up) continue;
    // Scrape errors name their URL already.
    const why = (i.error ?? 'no answer').replace(`${i.url}: `, '');
    lines.push(`  DOWN ${i.url}: ${why}`);
  }
  lines.push('');
  lines.push(
    `sessions ${r.sessions}${r.sessionsAsleep > 0 ? ` (${r.sessionsAsleep} asleep)` : ''}   streams ${r.streams.post + r.streams.get} (post ${r.streams.post}, get ${r.streams.get})   requests ${rate(r.requestsPerSecond)}/s`,
  );
  lines.push(
    `queue ${bytes(r.queue.bytes)} in ${r.queue.messages} msg (largest stream ${bytes(r.queue.maxStreamBytes)})   ` +
      `write stalls ${rate(r.writeStalls.perSecond)}/s, ${(r.writeStalls.stalledSecondsPerSecond * 1000).toFixed(0)}ms/s stalled, p99 ${seconds(r.writeStalls.p99)}`,
  );
  lines.push(
    `replays served ${rate(r.replays.servedPerSecond)}/s   declined: ${reasons(r.replays.declinedPerSecond)}`,
  );
  if (r.tasks !== null) {
    const t = r.tasks;
    lines.push(
      `tasks running ${t.running}, created ${rate(t.createdPerSecond)}/s   answered plainly ${rate(t.plainPerSecond.withinTime)}/s within taskAfterMs, ${rate(t.plainPerSecond.taskRefused)}/s task refused`,
    );
  }
  if (r.forwarded !== null) {
    const share = r.forwarded.share === null ? '-' : `${(r.forwarded.share * 100).toFixed(1)}%`;
    lines.push(
      `forwarded ${rate(r.forwarded.perSecond)}/s (share ${share})   hop p99 ${seconds(r.forwarded.hopP99)}`,
    );
  }
  lines.push(`errors: ${reasons(r.errorsPerSecond)}`);
  lines.push('');
  lines.push(`${'method'.padEnd(28)}${'req/s'.padStart(10)}${'p50'.padStart(12)}${'p99'.padStart(12)}`);
  for (const m of r.methods) {
    lines.push(
      `${m.method.slice(0, 27).padEnd(28)}${rate(m.perSecond).padStart(10)}${seconds(m.p50).padStart(12)}${seconds(m.p99).padStart(12)}`,
    );
  }
  if (r.methods.length === 0) lines.push('(no requests yet)');
  if (r.tools.length > 0) {
    lines.push('');
    lines.push(
      `${'tool'.padEnd(28)}${'calls/s'.padStart(10)}${'p50'.padStart(12)}${'p99'.padStart(12)}${'errors/s'.padStart(10)}`,
    );
    for (const t of r.tools) {
      lines.push(
        `${t.tool.slice(0, 27).padEnd(28)}${rate(t.perSecond).padStart(10)}${seconds(t.p50).padStart(12)}${seconds(t.p99).padStart(12)}${rate(t.errorsPerSecond).padStart(10)}`,
      );
    }
  }
  return lines.map((l) => (l.length > width ? l.slice(0, width) : l)).join('\n');
}
