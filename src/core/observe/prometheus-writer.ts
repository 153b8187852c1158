/**
 * Builds Prometheus text exposition (format 0.0.4): families, samples with escaped labels, and
 * histograms. Shared by the handler's metrics (core/observe/prometheus.ts) and a cluster member's
 * (cluster/metrics.ts).
 */
import type { Histogram } from './histogram.js';

export type Labels = Record<string, string>;

export class PrometheusWriter {
  #out = '';
  get out(): string {
    return this.#out;
  }
  family(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): void {
    this.#out += `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`;
  }
  sample(name: string, value: number, labels?: Labels): void {
    this.#out += `${name}${fmt(labels)} ${Number.isFinite(value) ? value : 0}\n`;
  }
  one(name: string, type: 'counter' | 'gauge', help: string, value: number): void {
    this.family(name, type, help);
    this.sample(name, value);
  }
  /** `scale` converts the histogram's unit to the exposed one (0.001: recorded in ms, exposed in s). */
  histogram(name: string, h: Histogram, labels: Labels = {}, scale = 1): void {
    let cumulative = 0;
    h.bounds.forEach((b, i) => {
      cumulative += h.counts[i] ?? 0;
      this.sample(`${name}_bucket`, cumulative, { ...labels, le: String(b * scale) });
    });
    this.sample(`${name}_bucket`, h.count, { ...labels, le: '+Inf' });
    this.sample(`${name}_sum`, h.sum * scale, labels);
    this.sample(`${name}_count`, h.count, labels);
  }
}

function fmt(labels: Labels | undefined): string {
  if (labels === undefined) return '';
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}
