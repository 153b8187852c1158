/**
 * The SDK's message text for a progress notification of the common shape, without a generic
 * `JSON.stringify` of the whole notification per event, and the parts of that text a replay store
 * keeps instead of the text (events/progress-run.ts).
 *
 * A tool reporting progress sends `{ method: 'notifications/progress', params: { progressToken,
 * progress, total?, message? } }` (MCP 2025-11-25 basic/utilities/progress), one per unit of work,
 * with the same token (and often the same message) each time. Node 20's generic `JSON.stringify`
 * was the largest single cost of such an event on the direct path (docs/benchmarks.md, (b)). Here
 * the text is the constant pieces of its layout (which keys, in which order, and the token: a
 * `ProgressLayout`, made once while they stay the same) around up to three values written as JSON
 * writes them (ECMA-262 SerializeJSONProperty: a finite number is its `ToString`, any other is
 * `null`; a string its `JSON.stringify`, the last one's kept). The result is
 * `JSON.stringify({ ...notification, jsonrpc: '2.0' })`, byte for byte: the keys in the object's
 * own order (for-in lists an ordinary object's own keys first, in that order; an inherited one fails
 * the own-property check), values omitted or written as JSON would. Anything else — another key, an
 * object value, a `toJSON`, a token that is not a string or number, `_meta` anywhere on the params'
 * chain — is not handled (`undefined`), and the caller serializes the message the generic way.
 * test/unit/progress-json.test.ts checks the equality over random shapes against `JSON.stringify`.
 */

import { tokenKey } from './partial.js';

const HEAD = '{"method":"notifications/progress","params":{';
const TAIL = '},"jsonrpc":"2.0"}';
const TOKEN = 1;
const NAMES = ['', 'progressToken', 'progress', 'total', 'message'] as const;

/** The index of a handled params key in NAMES (0 for any other). */
function keyIndex(name: string): number {
  switch (name) {
    case 'progressToken':
      return 1;
    case 'progress':
      return 2;
    case 'total':
      return 3;
    case 'message':
      return 4;
    default:
      return 0;
  }
}

/** A value of a params field other than the token, as kept. */
export type ProgressValue = string | number | boolean | null;

/** A number as JSON writes it. */
export function jsonNumber(v: number): string {
  return Number.isFinite(v) ? String(v) : 'null';
}

/** A kept value as JSON writes it. */
export function jsonValue(v: ProgressValue): string {
  if (typeof v === 'number') return jsonNumber(v);
  if (typeof v === 'string') return JSON.stringify(v);
  return v === null ? 'null' : v ? 'true' : 'false';
}

/**
 * The constant text of one layout: which keys, in which order, and the token's JSON; the text of a
 * notification is `p0 + value a + p1 + value b + p2 + value c + p3` for its first `values` values.
 */
export class ProgressLayout {
  /** How many values (0 to 3) sit between the pieces. */
  readonly values: number;
  readonly p0: string;
  readonly p1: string;
  readonly p2: string;
  readonly p3: string;

  constructor(keys: readonly number[], count: number, tokenJson: string) {
    const pieces: string[] = [];
    let cur = HEAD;
    for (let i = 0; i < count; i++) {
      const k = keys[i] ?? 0;
      cur += `${i === 0 ? '' : ','}"${NAMES[k]}":`;
      if (k === TOKEN) cur += tokenJson;
      else {
        pieces.push(cur);
        cur = '';
      }
    }
    pieces.push(cur + TAIL);
    this.values = pieces.length - 1;
    this.p0 = pieces[0] ?? '';
    this.p1 = pieces[1] ?? '';
    this.p2 = pieces[2] ?? '';
    this.p3 = pieces[3] ?? '';
  }

  /** The text around the values' JSON texts (unused ones are ''). */
  join(a: string, b: string, c: string): string {
    switch (this.values) {
      case 0:
        return this.p0;
      case 1:
        return this.p0 + a + this.p1;
      case 2:
        return this.p0 + a + this.p1 + b + this.p2;
      default:
        return this.p0 + a + this.p1 + b + this.p2 + c + this.p3;
    }
  }

  /** The text of a notification of this layout with values a, b, c (a replay renders with this). */
  text(a: ProgressValue, b: ProgressValue, c: ProgressValue): string {
    const n = this.values;
    return this.join(n > 0 ? jsonValue(a) : '', n > 1 ? jsonValue(b) : '', n > 2 ? jsonValue(c) : '');
  }
}

/** One progress notification as parts: its layout and values, and its text. */
export class ProgressEvent {
  readonly layout: ProgressLayout;
  readonly a: ProgressValue;
  readonly b: ProgressValue;
  readonly c: ProgressValue;
  /**
   * The values' JSON texts ('' for a value the layout does not have): made once to write the
   * message, kept so that the Redis copy (cluster/replica-packs.ts) does not write them again.
   */
  readonly ta: string;
  readonly tb: string;
  readonly tc: string;
  /** The message's JSON text: `layout.join(ta, tb, tc)`. */
  readonly json: string;
  /** Its coalescing key (`coalesceKeyOf`'s, jsonrpc/partial.ts). */
  readonly key: string;

  /** Values a, b, c and their texts ta, tb, tc (positional: made once per event on the hot path). */
  constructor(
    layout: ProgressLayout,
    a: ProgressValue,
    b: ProgressValue,
    c: ProgressValue,
    ta: string,
    tb: string,
    tc: string,
    key: string,
  ) {
    this.layout = layout;
    this.a = a;
    this.b = b;
    this.c = c;
    this.ta = ta;
    this.tb = tb;
    this.tc = tc;
    this.json = layout.join(ta, tb, tc);
    this.key = key;
  }
}

/** One request's progress serializer: its layout, token and last string kept between events. */
export class ProgressJson {
  #token: string | number | undefined;
  #tokenJson = '';
  #key = '';
  #string: string | undefined;
  #stringJson = '';
  /** The keys of the notification being read, by index in NAMES, in order. */
  readonly #keys: number[] = [0, 0, 0, 0];
  #layout: ProgressLayout | undefined;
  /** What #layout was made for: its keys as one number (base 5), and the token's JSON. */
  #layoutCode = -1;
  #layoutToken = '';

  /**
   * `{ ...n, jsonrpc: '2.0' }` as parts and text when `n` has the common shape (see the module
   * note); undefined otherwise. The caller checked that `n` has no own `jsonrpc`, `id` or `toJSON`.
   */
  read(n: object): ProgressEvent | undefined {
    // `method` then `params`, both own, and nothing else enumerable.
    let k = 0;
    for (const name in n) {
      if (name !== (k === 0 ? 'method' : k === 1 ? 'params' : '') || !Object.hasOwn(n, name))
        return undefined;
      k++;
    }
    if (k !== 2 || 'id' in n) return undefined;
    const o = n as { method: unknown; params: unknown };
    if (o.method !== 'notifications/progress') return undefined;
    const p = o.params as Record<string, unknown> | null;
    if (typeof p !== 'object' || p === null || Array.isArray(p) || p['toJSON'] !== undefined)
      return undefined;
    if (p['_meta'] !== undefined) return undefined;
    const keys = this.#keys;
    let count = 0;
    let code = 0;
    let token = false;
    let values = 0;
    let a: ProgressValue = null;
    let b: ProgressValue = null;
    let c: ProgressValue = null;
    for (const name in p) {
      const i = keyIndex(name);
      if (i === 0 || !Object.hasOwn(p, name)) return undefined;
      const v = p[name];
      if (i === TOKEN) {
        if (typeof v !== 'string' && typeof v !== 'number') return undefined;
        this.#tokenText(v);
        token = true;
      } else if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' || v === null) {
        if (values === 0) a = v;
        else if (values === 1) b = v;
        else c = v;
        values++;
      } else if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      else return undefined;
      keys[count++] = i;
      code = code * 5 + i;
    }
    // Without a token there is no coalescing key to give (and nothing the caller routes as progress).
    if (!token) return undefined;
    let layout = this.#layout;
    if (layout === undefined || code !== this.#layoutCode || this.#tokenJson !== this.#layoutToken) {
      layout = new ProgressLayout(keys, count, this.#tokenJson);
      this.#layout = layout;
      this.#layoutCode = code;
      this.#layoutToken = this.#tokenJson;
    }
    return new ProgressEvent(
      layout,
      a,
      b,
      c,
      values > 0 ? this.#text(a) : '',
      values > 1 ? this.#text(b) : '',
      values > 2 ? this.#text(c) : '',
      this.#key,
    );
  }

  #tokenText(v: string | number): void {
    if (v !== this.#token || this.#key === '') {
      this.#token = v;
      this.#tokenJson = typeof v === 'number' ? jsonNumber(v) : JSON.stringify(v);
      this.#key = tokenKey(v);
    }
  }

  /** jsonValue, with the last string's JSON kept (a tool's message often repeats). */
  #text(v: ProgressValue): string {
    if (typeof v !== 'string') return jsonValue(v);
    if (v !== this.#string) {
      this.#string = v;
      this.#stringJson = JSON.stringify(v);
    }
    return this.#stringJson;
  }
}
