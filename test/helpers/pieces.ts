/**
 * The tests that feed a stream in arbitrary pieces (parsers, readers, a server writing its answer
 * in bits) cut it here: one way to cut, so every such test cuts alike.
 */

/**
 * `whole` cut at `offsets` (deduplicated and sorted; those outside 0..length are dropped). The
 * pieces join back to `whole`; a cut at 0 or at the end gives an empty piece, kept (a reader must
 * bear those too). Bytes are cut with `subarray` (no copy).
 */
export function cutAt<T extends string | Uint8Array>(whole: T, offsets: readonly number[]): T[] {
  const points = [...new Set(offsets)].filter((c) => c >= 0 && c <= whole.length).sort((a, b) => a - b);
  const part = (from: number, to?: number): T =>
    (typeof whole === 'string' ? whole.slice(from, to) : whole.subarray(from, to)) as T;
  const out: T[] = [];
  let from = 0;
  for (const p of points) {
    out.push(part(from, p));
    from = p;
  }
  out.push(part(from));
  return out;
}
