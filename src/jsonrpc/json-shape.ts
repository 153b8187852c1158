/**
 * A pre-scan of a JSON text's shape, run before `JSON.parse`: how deep it nests, how many object
 * members and how many values it holds. `maxBodyBytes` bounds the bytes, but not what parsing them
 * costs: measured on Node 20, a 2 MB body of 200,000 distinct keys takes 0.5–2 s of CPU to parse
 * (every new key is interned and grows the engine's hidden-class tree), 2 MB of `[` builds a million
 * nested arrays (about 60 MB) and 4 MB of `[],` a million empty ones (1 s), before anything can
 * look at them. All are refused here in one linear pass that allocates nothing: strings are skipped
 * with `indexOf`, so a body of long strings costs next to nothing, and the scan stops at the first
 * limit crossed.
 *
 * Counts, outside strings: depth by `{`/`[` against `}`/`]`; keys by `:` (one per member); values
 * by `{`, `[` and `,` (about one per value: each container and each element after the first). They
 * are exact for valid JSON; for invalid JSON approximate, and `JSON.parse` refuses it afterwards.
 */

export interface JsonShapeLimits {
  /** Deepest nesting of arrays and objects (the top-level value is depth 1). */
  maxDepth: number;
  /** Object members in the whole text. */
  maxKeys: number;
  /** Values (containers and elements) in the whole text. */
  maxValues: number;
}

/** The defaults: far above what MCP messages hold, well below what costs a request 50 ms. */
export const DEFAULT_JSON_LIMITS: JsonShapeLimits = { maxDepth: 64, maxKeys: 10_000, maxValues: 100_000 };

/** Which limit a text crosses; undefined when it stays within both. */
export type JsonShapeExcess = { limit: 'depth' | 'keys' | 'values'; max: number } | undefined;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** The index of the quote closing the string whose opening quote is at `open`, or -1. */
function stringEnd(text: string, open: number): number {
  let q = text.indexOf('"', open + 1);
  while (q !== -1) {
    // The quote is escaped when an odd number of backslashes precede it.
    let b = q - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    q = text.indexOf('"', q + 1);
  }
  return -1;
}

export function checkJsonShape(text: string, limits: JsonShapeLimits): JsonShapeExcess {
  const { maxDepth, maxKeys, maxValues } = limits;
  // Fewer characters than any limit: nothing to count.
  if (text.length <= Math.min(maxDepth, maxKeys, maxValues)) return undefined;
  let depth = 0;
  let keys = 0;
  let values = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end === -1) return undefined; // unterminated: JSON.parse refuses it
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return { limit: 'depth', max: maxDepth };
      if (++values > maxValues) return { limit: 'values', max: maxValues };
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === COLON) {
      if (++keys > maxKeys) return { limit: 'keys', max: maxKeys };
    } else if (c === COMMA) {
      if (++values > maxValues) return { limit: 'values', max: maxValues };
    }
  }
  return undefined;
}
