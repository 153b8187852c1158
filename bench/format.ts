// Number formatting and Markdown tables for the report. Missing values (NaN, undefined) print
// as an en dash so that a row for an unavailable server still lines up.

export function num(v: number | undefined, digits = 0): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Significant-ish formatting for values that span orders of magnitude (µs, ms). */
export function auto(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a >= 100) return num(v, 0);
  if (a >= 10) return num(v, 1);
  if (a >= 1) return num(v, 2);
  return num(v, 3);
}

export function times(v: number | undefined): string {
  return v === undefined || !Number.isFinite(v) ? '–' : `${auto(v)}x`;
}

export function yesNo(met: boolean | undefined): string {
  if (met === undefined) return 'n/a';
  return met ? 'yes' : '**no**';
}

/** A Markdown table; `align` has one 'l' or 'r' per column. */
export function table(head: string[], rows: string[][], align: string): string {
  const sep = [...align].map((a) => (a === 'r' ? '---:' : '---'));
  const line = (cells: string[]): string => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(head), `|${sep.join('|')}|`, ...rows.map(line)].join('\n');
}
