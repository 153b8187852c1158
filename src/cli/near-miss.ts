/**
 * The name a typo was probably meant to be ('serv' for 'serve', '--prot' for '--port'): the command
 * line says "did you mean …?" instead of leaving the user to read the whole help for one letter.
 */

/** The name within two edits of what was typed, the nearest first, if one is. */
export function closest(typed: string, names: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = editDistance(typed.toLowerCase(), name);
    if (d <= 2 && (best === undefined || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** Optimal string alignment distance (insertions, deletions, substitutions, adjacent swaps). */
export function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || a.length > 64) return 3;
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    const up = d[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = v;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}
