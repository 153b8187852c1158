// Small statistics helpers for the benchmark tables. Inputs are plain numbers; nothing here
// allocates more than one sorted copy.

/** Sorted copy, ascending. */
function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/**
 * Nearest-rank percentile (`p` in 0..100) of `values`; `NaN` for an empty list.
 * Nearest rank keeps p99 an observed latency rather than an interpolated one.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = sorted(values);
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1] ?? Number.NaN;
}

/** Median (mean of the two middle values for an even count); `NaN` for an empty list. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = sorted(values);
  const mid = s.length >> 1;
  if (s.length % 2 === 1) return s[mid] ?? Number.NaN;
  return ((s[mid - 1] ?? Number.NaN) + (s[mid] ?? Number.NaN)) / 2;
}

/** Median of one numeric field over repetitions, ignoring non-finite values. */
export function medianOf<T>(items: readonly T[], pick: (item: T) => number): number {
  return median(items.map(pick).filter((v) => Number.isFinite(v)));
}

/** Least-squares slope of `y` over `x` (units of y per unit of x); `NaN` with fewer than 2 points. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  let sx = 0;
  let sy = 0;
  for (const p of points) {
    sx += p.x;
    sy += p.y;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/** `a / b`, or `NaN` when either side is missing or `b` is zero. */
export function ratio(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) {
    return Number.NaN;
  }
  return a / b;
}
