/**
 * A small memo for pure functions of one string every request carries (a header value, the
 * principal). Clients send the same few values (`Accept`, `Content-Type`, `Host`) on every request,
 * and parsing them was a visible share of Sluice's own CPU per request (docs/benchmarks.md, section
 * (h) profile). Bounded: at most `max` entries, and when full it starts over, so values chosen to
 * miss it cost one computation each, as without it, and never grow memory. Results are shared
 * between calls: callers must not mutate them. Imports nothing, so the browser client can use it.
 */
export function memoByHeader<T>(fn: (value: string) => T, max = 64): (value: string) => T {
  const memo = new Map<string, T>();
  return (value: string): T => {
    const hit = memo.get(value);
    if (hit !== undefined || memo.has(value)) return hit as T;
    const out = fn(value);
    if (memo.size >= max) memo.clear();
    memo.set(value, out);
    return out;
  };
}
