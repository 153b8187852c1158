/**
 * Per-method request metrics: answer mode and duration. Method names come from clients, so only
 * the methods MCP defines get their own label; anything else counts as 'other' (bounded label
 * cardinality, whatever a client sends).
 */
import { DURATION_BUCKETS, Histogram, STALL_BUCKETS } from './histogram.js';

const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/list',
  'tasks/result',
  'tasks/cancel',
]);

/** Whether `method` is a client-to-server request MCP (2025-11-25) defines. */
export function isMcpRequestMethod(method: string): boolean {
  return KNOWN_METHODS.has(method);
}

export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : 'other';
}

export interface MethodMetrics {
  json: number;
  sse: number;
  duration: Histogram;
}

export class Metrics {
  readonly methods = new Map<string, MethodMetrics>();
  readonly writeStall = new Histogram(STALL_BUCKETS);

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
