/**
 * Per-method request metrics: answer mode and duration. Method names come from clients, so only
 * the methods MCP defines get their own label; anything else counts as 'other' (bounded label
 * cardinality, whatever a client sends).
 */
import { DURATION_BUCKETS, Histogram, STALL_BUCKETS } from './histogram.js';
import { methodLabel } from './methods.js';
import { SemconvMetrics } from './semconv-metrics.js';

export { isMcpRequestMethod, methodLabel } from './methods.js';

export interface MethodMetrics {
  json: number;
  sse: number;
  duration: Histogram;
}

export class Metrics {
  readonly methods = new Map<string, MethodMetrics>();
  readonly writeStall = new Histogram(STALL_BUCKETS);
  /** The OpenTelemetry MCP semantic conventions' server metrics (semconv-metrics.ts). */
  readonly semconv = new SemconvMetrics();

  #of(method: string): MethodMetrics {
    const label = methodLabel(method);
    let m = this.methods.get(label);
    if (m === undefined) {
      m = { json: 0, sse: 0, duration: new Histogram(DURATION_BUCKETS) };
      this.methods.set(label, m);
    }
    return m;
  }

  mode(method: string, mode: 'json' | 'sse'): void {
    this.#of(method)[mode]++;
  }

  duration(method: string, seconds: number): void {
    this.#of(method).duration.observe(seconds);
  }
}
