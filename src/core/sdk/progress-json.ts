/**
 * The SDK's message text for a progress notification of the common shape, without a generic
 * `JSON.stringify` of the whole notification per event.
 *
 * A tool reporting progress sends `{ method: 'notifications/progress', params: { progressToken,
 * progress, total?, message? } }` (MCP 2025-11-25 basic/utilities/progress), one per unit of work,
 * with the same token (and often the same message) each time. Node 20's generic `JSON.stringify`
 * was the largest single cost of such an event on the direct path (docs/benchmarks.md, (b)). Here
 * the text is put together from constant pieces, the token's and message's JSON (each computed with
 * `JSON.stringify` once and reused while the value stays the same) and numbers formatted as JSON
 * formats them (ECMA-262 SerializeJSONProperty: a finite number is its `ToString`, any other is
 * `null`). The result is `{ ...notification, jsonrpc: '2.0' }`'s `JSON.stringify`, byte for byte:
 * the keys in the object's own order (for-in lists an ordinary object's own keys first in that
 * order; an inherited one fails the own-property check), values omitted or written as JSON would.
 * Anything else — another key, an object value, a `toJSON`, a token that is not a string or number,
 * `_meta` anywhere on the params' chain — is not handled (`undefined`), and the caller serializes
 * the message the generic way. test/unit/progress-json.test.ts checks the equality over random
 * shapes against `JSON.stringify`.
 */

const HEAD = '{"method":"notifications/progress","params":{';
const TAIL = '},"jsonrpc":"2.0"}';

/** A handled params key's JSON text (with a comma before it unless it comes first); undefined for others. */
function keyText(name: string, first: boolean): string | undefined {
  switch (name) {
    case 'progressToken':
      return first ? '"progressToken":' : ',"progressToken":';
    case 'progress':
      return first ? '"progress":' : ',"progress":';
    case 'total':
      return first ? '"total":' : ',"total":';
    case 'message':
      return first ? '"message":' : ',"message":';
    default:
      return undefined;
  }
}

/** A number as JSON writes it. */
export function jsonNumber(v: number): string {
  return Number.isFinite(v) ? String(v) : 'null';
}

/** One request's progress serializer: the token's and the last message's JSON are kept. */
export class ProgressJson {
  #token: string | number | undefined;
  #tokenJson = '';
  #key = '';
  #message: string | undefined;
  #messageJson = '';

  /** The coalescing key of the last notification serialized (`coalesceKeyOf`'s, jsonrpc/partial.ts). */
  get key(): string {
    return this.#key;
  }

  /**
   * The JSON text of `{ ...n, jsonrpc: '2.0' }` when `n` has the common shape (see the module note);
   * undefined otherwise. The caller checked that `n` has no own `jsonrpc`, `id` or `toJSON`.
   */
  json(n: object): string | undefined {
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
    let out = HEAD;
    let first = true;
    let token = false;
    for (const name in p) {
      const key = keyText(name, first);
      if (key === undefined || !Object.hasOwn(p, name)) return undefined;
      const v = p[name];
      let text: string;
      if (name === 'progressToken') {
        if (typeof v !== 'string' && typeof v !== 'number') return undefined;
        text = this.#tokenText(v);
        token = true;
      } else if (typeof v === 'number') text = jsonNumber(v);
      else if (typeof v === 'string') text = name === 'message' ? this.#messageText(v) : JSON.stringify(v);
      else if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      else if (typeof v === 'boolean') text = v ? 'true' : 'false';
      else if (v === null) text = 'null';
      else return undefined;
      out += key + text;
      first = false;
    }
    // Without a token there is no coalescing key to give (and nothing the caller routes as progress).
    if (!token) return undefined;
    return out + TAIL;
  }

  #tokenText(v: string | number): string {
    if (v !== this.#token || this.#key === '') {
      this.#token = v;
      this.#tokenJson = typeof v === 'number' ? jsonNumber(v) : JSON.stringify(v);
      this.#key = typeof v === 'number' ? `n${v}` : `s${v}`;
    }
    return this.#tokenJson;
  }

  #messageText(v: string): string {
    if (v !== this.#message) {
      this.#message = v;
      this.#messageJson = JSON.stringify(v);
    }
    return this.#messageJson;
  }
}
