/**
 * A parser for the Prometheus text exposition format 0.0.4 (what `/metrics` answers), for
 * `sluice top`. Pure: no I/O, no node:* module. It is fed in chunks as the body arrives, so a line
 * may be split anywhere; the result does not depend on where. Anything that is not the format
 * (an HTML page, JSON, a bad escape) is an `ExpositionError` naming the line, never a guess.
 *
 * Format rules followed (Prometheus "Exposition formats", text-based format): one sample or comment
 * per '\n'-terminated line; `# HELP name text` and `# TYPE name type` comments, other comments
 * ignored; blanks (spaces, tabs) separate tokens; label values escape `\\`, `\"` and `\n`; values
 * are Go floats including `+Inf`, `-Inf` and `NaN`; an optional integer timestamp follows.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Exposition {
  readonly samples: readonly Sample[];
  /** `# TYPE` per family name. */
  readonly types: ReadonlyMap<string, MetricType>;
  /** `# HELP` per family name, unescaped. */
  readonly help: ReadonlyMap<string, string>;
}

/** The text is not Prometheus exposition; `line` is 1-based. */
export class ExpositionError extends Error {
  readonly code = 'EXPOSITION_SYNTAX';
  readonly line: number;
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.name = 'ExpositionError';
    this.line = line;
  }
}

const TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const FLOAT = /^[+-]?(?:inf|infinity|nan|(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)$/i;
const TIMESTAMP = /^-?\d+$/;
/** A line longer than this is not an exposition line (a minified page, a binary body). */
const MAX_LINE = 64 * 1024;

function isBlank(c: string | undefined): boolean {
  return c === ' ' || c === '\t';
}

/** Go's strconv.ParseFloat on the spellings the format uses. */
export function parseValue(text: string): number | undefined {
  if (!FLOAT.test(text)) return undefined;
  const t = text.toLowerCase().replace(/^\+/, '');
  if (t === 'nan' || t === '-nan') return Number.NaN;
  if (t === 'inf' || t === 'infinity') return Number.POSITIVE_INFINITY;
  if (t === '-inf' || t === '-infinity') return Number.NEGATIVE_INFINITY;
  return Number(t);
}

/** Incremental parser: `push` chunks in any split, then `end`. */
export class ExpositionParser {
  #rest = '';
  #line = 0;
  #ended = false;
  readonly #samples: Sample[] = [];
  readonly #types = new Map<string, MetricType>();
  readonly #help = new Map<string, string>();

  push(chunk: string): void {
    if (this.#ended) throw new Error('ExpositionParser: push after end');
    this.#rest += chunk;
    let nl = this.#rest.indexOf('\n');
    let start = 0;
    while (nl >= 0) {
      this.#parseLine(this.#rest.slice(start, nl));
      start = nl + 1;
      nl = this.#rest.indexOf('\n', start);
    }
    this.#rest = this.#rest.slice(start);
    if (this.#rest.length > MAX_LINE) throw new ExpositionError(this.#line + 1, 'line too long');
  }

  end(): Exposition {
    if (!this.#ended) {
      this.#ended = true;
      if (this.#rest.length > 0) this.#parseLine(this.#rest);
      this.#rest = '';
    }
    return { samples: this.#samples, types: this.#types, help: this.#help };
  }

  #parseLine(raw: string): void {
    this.#line++;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.length > MAX_LINE) throw new ExpositionError(this.#line, 'line too long');
    let i = 0;
    while (isBlank(line[i])) i++;
    if (i === line.length) return;
    if (line[i] === '#') this.#comment(line.slice(i + 1));
    else this.#sample(line, i);
  }

  #comment(body: string): void {
    const m = /^[ \t]+(HELP|TYPE)[ \t]+([^ \t]+)(?:[ \t]+(.*))?$/.exec(body);
    if (m === null) return; // An ordinary comment.
    const [, kind, name = '', rest = ''] = m;
    if (!METRIC_NAME.test(name) || (METRIC_NAME.exec(name)?.[0] ?? '') !== name)
      throw new ExpositionError(this.#line, `bad metric name '${name}' in # ${kind}`);
    if (kind === 'TYPE') {
      const type = rest.trim();
      if (!TYPES.has(type)) throw new ExpositionError(this.#line, `unknown type '${type}' for ${name}`);
      if (this.#types.has(name)) throw new ExpositionError(this.#line, `second # TYPE for ${name}`);
      this.#types.set(name, type as MetricType);
    } else {
      this.#help.set(name, unescapeHelp(rest));
    }
  }

  #sample(line: string, from: number): void {
    const name = METRIC_NAME.exec(line.slice(from))?.[0];
    if (name === undefined)
      throw new ExpositionError(this.#line, `expected a metric name, got ${quote(line)}`);
    let i = from + name.length;
    // No prototype: a label named __proto__ is data like any other.
    const labels: Record<string, string> = Object.create(null) as Record<string, string>;
    let j = i;
    while (isBlank(line[j])) j++;
    if (line[j] === '{') i = this.#labels(line, j + 1, labels);
    const rest = line.slice(i);
    if (rest.length > 0 && !isBlank(rest[0])) {
      throw new ExpositionError(this.#line, `expected a blank after ${name}, got ${quote(rest)}`);
    }
    const fields = rest.split(/[ \t]+/).filter((f) => f.length > 0);
    const [valueText, timestamp, extra] = fields;
    if (valueText === undefined) throw new ExpositionError(this.#line, `${name} has no value`);
    const value = parseValue(valueText);
    if (value === undefined)
      throw new ExpositionError(this.#line, `bad value ${quote(valueText)} for ${name}`);
    if (timestamp !== undefined && !TIMESTAMP.test(timestamp))
      throw new ExpositionError(this.#line, `bad timestamp ${quote(timestamp)} for ${name}`);
    if (extra !== undefined)
      throw new ExpositionError(this.#line, `unexpected ${quote(extra)} after ${name}`);
    this.#samples.push({ name, labels, value });
  }

  /** Reads `name="value", ...}` from `i` (just past '{'); returns the index past '}'. */
  #labels(line: string, from: number, into: Record<string, string>): number {
    let i = from;
    for (;;) {
      while (isBlank(line[i])) i++;
      if (line[i] === '}') return i + 1;
      const label = LABEL_NAME.exec(line.slice(i))?.[0];
      if (label === undefined)
        throw new ExpositionError(this.#line, `expected a label name at ${quote(line.slice(i))}`);
      i += label.length;
      while (isBlank(line[i])) i++;
      if (line[i] !== '=') throw new ExpositionError(this.#line, `expected '=' after label ${label}`);
      i++;
      while (isBlank(line[i])) i++;
      if (line[i] !== '"')
        throw new ExpositionError(this.#line, `expected '"' to open the value of ${label}`);
      i++;
      let value = '';
      for (;;) {
        const c = line[i];
        if (c === undefined) throw new ExpositionError(this.#line, `unterminated value of label ${label}`);
        if (c === '"') break;
        if (c === '\\') {
          const e = line[i + 1];
          if (e === '\\') value += '\\';
          else if (e === '"') value += '"';
          else if (e === 'n') value += '\n';
          else throw new ExpositionError(this.#line, `bad escape '\\${e ?? ''}' in label ${label}`);
          i += 2;
          continue;
        }
        value += c;
        i++;
      }
      i++;
      if (Object.hasOwn(into, label)) throw new ExpositionError(this.#line, `label ${label} given twice`);
      into[label] = value;
      while (isBlank(line[i])) i++;
      if (line[i] === ',') i++;
      else if (line[i] !== '}')
        throw new ExpositionError(this.#line, `expected ',' or '}' after label ${label}`);
    }
  }
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(\\|n)/g, (_m, e: string) => (e === 'n' ? '\n' : '\\'));
}

function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/** Parses a whole exposition. */
export function parseExposition(text: string): Exposition {
  const p = new ExpositionParser();
  p.push(text);
  return p.end();
}
