/**
 * From two scrapes of one instance to rates: counter increases with resets handled the way
 * Prometheus's `increase()` does (a counter that went down restarted from zero, so its new value is
 * the increase), and histogram quantiles by linear interpolation inside the bucket that holds the
 * rank (Prometheus's `histogram_quantile`). Pure: no I/O.
 */
import type { Exposition, MetricType, Sample } from './exposition.js';

/** One scrape: every sample by series key, and whether each family is a counter. */
export class Snapshot {
  readonly at: number;
  readonly #values = new Map<string, Sample>();
  readonly #types: ReadonlyMap<string, MetricType>;

  constructor(e: Exposition, at: number) {
    this.at = at;
    this.#types = e.types;
    for (const s of e.samples) this.#values.set(seriesKey(s.name, s.labels), s);
  }

  samples(): IterableIterator<Sample> {
    return this.#values.values();
  }

  get(key: string): Sample | undefined {
    return this.#values.get(key);
  }

  has(name: string): boolean {
    for (const s of this.#values.values()) if (s.name === name) return true;
    return false;
  }

  /** Whether a sample of `name` only goes up (a counter, or a histogram's bucket, sum or count). */
  isCumulative(name: string): boolean {
    if (this.#types.get(name) === 'counter') return true;
    const base = name.replace(/_(bucket|sum|count)$/, '');
    if (base !== name) {
      const t = this.#types.get(base);
      if (t === 'histogram' || t === 'summary') return true;
    }
    // Untyped exposition: the naming convention says `_total` is a counter.
    return !this.#types.has(name) && name.endsWith('_total');
  }
}

export function seriesKey(name: string, labels: Readonly<Record<string, string>>): string {
  const keys = Object.keys(labels).sort();
  return keys.length === 0
    ? name
    : `${name}{${keys.map((k) => `${k}=${JSON.stringify(labels[k])}`).join(',')}}`;
}

/** How much a counter grew from `prev` to `cur`; a decrease is a reset (the process restarted). */
export function counterIncrease(prev: number | undefined, cur: number): number {
  if (!Number.isFinite(cur)) return 0;
  if (prev === undefined || !Number.isFinite(prev)) return cur;
  return cur >= prev ? cur - prev : cur;
}

/**
 * Every cumulative sample's increase between two scrapes of the same instance (series absent from
 * `prev` count from zero: they appear the first time something happens). A histogram whose count
 * went down was reset as a whole, so all of its buckets take their new values.
 */
export function increases(prev: Snapshot, cur: Snapshot): Sample[] {
  const reset = new Set<string>();
  for (const s of cur.samples()) {
    if (!s.name.endsWith('_count') || !cur.isCumulative(s.name)) continue;
    const before = prev.get(seriesKey(s.name, s.labels));
    if (before !== undefined && s.value < before.value) {
      reset.add(seriesKey(s.name.slice(0, -'_count'.length), s.labels));
    }
  }
  const out: Sample[] = [];
  for (const s of cur.samples()) {
    if (!cur.isCumulative(s.name)) continue;
    const base = s.name.replace(/_(bucket|sum|count)$/, '');
    const { le: _le, ...rest } = s.labels;
    const wasReset = base !== s.name && reset.has(seriesKey(base, rest));
    const before = wasReset ? undefined : prev.get(seriesKey(s.name, s.labels))?.value;
    out.push({ name: s.name, labels: s.labels, value: counterIncrease(before, s.value) });
  }
  return out;
}

export interface Bucket {
  /** Upper bound (`le`); +Inf for the last one. */
  readonly le: number;
  /** Cumulative count of observations ≤ le. */
  readonly count: number;
}

/**
 * The q-quantile of a cumulative histogram, as Prometheus's histogram_quantile computes it:
 * linear interpolation inside the bucket holding rank q·total (the first bucket starts at 0); a
 * rank in the +Inf bucket answers the highest finite bound. Undefined when nothing was observed.
 */
export function histogramQuantile(q: number, buckets: readonly Bucket[]): number | undefined {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const last = sorted.at(-1);
  if (last === undefined || last.le !== Number.POSITIVE_INFINITY || last.count <= 0) return undefined;
  if (q <= 0) return 0;
  if (q >= 1) return sorted.at(-2)?.le ?? undefined;
  const rank = q * last.count;
  let i = sorted.findIndex((b) => b.count >= rank);
  if (i < 0) i = sorted.length - 1;
  const b = sorted[i] as Bucket;
  if (b.le === Number.POSITIVE_INFINITY) return sorted.at(-2)?.le;
  const lower = i === 0 ? 0 : (sorted[i - 1] as Bucket).le;
  const below = i === 0 ? 0 : (sorted[i - 1] as Bucket).count;
  const inBucket = b.count - below;
  if (inBucket <= 0) return b.le;
  return lower + (b.le - lower) * ((rank - below) / inBucket);
}

/**
 * The buckets of histogram `name` from samples (of one or several instances: equal bounds are
 * summed, so a cluster's histograms merge), grouped by the value of `by` (one group '' without it).
 */
export function bucketsBy(samples: Iterable<Sample>, name: string, by?: string): Map<string, Bucket[]> {
  const sums = new Map<string, Map<number, number>>();
  const bucketName = `${name}_bucket`;
  for (const s of samples) {
    if (s.name !== bucketName) continue;
    const leText = s.labels['le'];
    if (leText === undefined) continue;
    const le = leText === '+Inf' ? Number.POSITIVE_INFINITY : Number(leText);
    if (Number.isNaN(le)) continue;
    const group = by === undefined ? '' : (s.labels[by] ?? '');
    let g = sums.get(group);
    if (g === undefined) {
      g = new Map();
      sums.set(group, g);
    }
    g.set(le, (g.get(le) ?? 0) + s.value);
  }
  const out = new Map<string, Bucket[]>();
  for (const [group, g] of sums) {
    out.set(
      group,
      [...g].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le),
    );
  }
  return out;
}

/** Sum of the samples named `name` whose labels match `where`, grouped by label `by`. */
export function sumBy(
  samples: Iterable<Sample>,
  name: string,
  by?: string,
  where: Readonly<Record<string, string>> = {},
): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name) continue;
    if (!Object.entries(where).every(([k, v]) => s.labels[k] === v)) continue;
    const group = by === undefined ? '' : (s.labels[by] ?? '');
    out.set(group, (out.get(group) ?? 0) + (Number.isFinite(s.value) ? s.value : 0));
  }
  return out;
}

/** Sum of every sample named `name` (0 when there is none). */
export function total(samples: Iterable<Sample>, name: string): number {
  return sumBy(samples, name).get('') ?? 0;
}
