/**
 * What each request allocates must die young. Two shapes did not: an object literal with getters
 * made per request (it gets a hidden class of its own in V8's old space, pointing at the request's
 * closures) and a module-level WeakMap keyed by a per-request object (a scavenge keeps the values
 * of an old WeakMap alive). Either way every request's objects were promoted to the old generation
 * and GC took about a quarter of a request's CPU (flow/private-slot.ts, server/node-view.ts).
 * These tests hold the replacements to their shape; the cost itself is measured by `npm run bench`.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { fetchView } from '../../src/fetch/fetch-view.js';
import { PrivateSlot } from '../../src/flow/private-slot.js';
import { nodeView } from '../../src/server/node-view.js';
import { sourceTree } from '../helpers/source-tree.js';

/** Object-literal getters and setters in a TypeScript file's text: `file:line name`. */
export function literalAccessors(file: string, src: string): string[] {
  const text = src.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/\/\/.*$/gm, '');
  const stack: ('class' | 'literal' | 'block')[] = [];
  const out: string[] = [];
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    else if (c === '{') {
      const before = text.slice(Math.max(0, i - 300), i);
      stack.push(
        /\bclass\b[^{;]*$/.test(before)
          ? 'class'
          : /(=|return|\(|,|:|\?|\[)\s*$/.test(before)
            ? 'literal'
            : 'block',
      );
    } else if (c === '}') stack.pop();
    else if ((c === 'g' || c === 's') && /[\s{,]/.test(text[i - 1] ?? ' ')) {
      const m = /^(get|set)\s+(\w+)\s*\(/.exec(text.slice(i, i + 80));
      if (m !== null && stack.at(-1) === 'literal') out.push(`${file}:${line} ${m[1]} ${m[2]}`);
    }
  }
  return out;
}

describe('per-request objects die young', () => {
  test('the request views are class instances: their getters live on the prototype', () => {
    const socket = { remoteAddress: '127.0.0.1', localAddress: '127.0.0.1' };
    const req = { method: 'POST', url: '/mcp', headers: { host: 'localhost' }, socket };
    const a = nodeView(req as unknown as IncomingMessage, {} as ServerResponse);
    const b = nodeView({ ...req } as unknown as IncomingMessage, {} as ServerResponse);
    for (const v of [a, b]) {
      assert.equal(Object.getOwnPropertyDescriptor(v, 'remoteAddress'), undefined);
      assert.equal(Object.getOwnPropertyDescriptor(v, 'loopback'), undefined);
    }
    assert.equal(Object.getPrototypeOf(a), Object.getPrototypeOf(b));
    assert.equal(a.remoteAddress, '127.0.0.1');
    assert.equal(a.loopback, true);
    // A detached header() still reads its own request's headers.
    const header = a.header;
    assert.equal(header('host'), 'localhost');
    const f = fetchView(new Request('http://127.0.0.1/mcp?x=1', { headers: { 'X-A': '1' } }), true);
    assert.equal(Object.getOwnPropertyDescriptor(f, 'url'), undefined);
    assert.equal(f.url, '/mcp?x=1');
    assert.deepEqual({ ...f.headers }, { 'x-a': '1' });
    const fh = f.header;
    assert.equal(fh('x-a'), '1');
  });

  test('no object literal in src/ has a getter or a setter (cluster.ts: once per cluster, allowed)', () => {
    const found = [...sourceTree()]
      .filter(([f]) => f !== 'src/cluster/cluster.ts')
      .flatMap(([f, text]) => literalAccessors(f, text));
    assert.deepEqual(found, []);
  });

  test('the scan finds a literal getter, and not a class one', () => {
    const src = 'class A {\n  get x() { return 1; }\n}\nconst o = {\n  get y() { return 2; },\n};\n';
    assert.deepEqual(literalAccessors('f.ts', src), ['f.ts:5 get y']);
  });

  test('PrivateSlot: kept on the object, not enumerable, not copied by a spread', () => {
    const slot = new PrivateSlot<{ n: number }>('test');
    const o: Record<string, unknown> = { a: 1 };
    const v = { n: 1 };
    assert.equal(slot.get(o), undefined);
    slot.set(o, v);
    assert.equal(slot.get(o), v);
    assert.deepEqual(Object.keys(o), ['a']);
    assert.equal(JSON.stringify(o), '{"a":1}');
    assert.equal(slot.get({ ...o }), undefined, 'a spread copy carries no slot');
    const other = new PrivateSlot<{ n: number }>('test');
    assert.equal(other.get(o), undefined, 'each slot has its own key');
    const v2 = { n: 2 };
    slot.set(o, v2);
    assert.equal(slot.get(o), v2, 'set again replaces');
  });

  test('PrivateSlot: a frozen object or a function still keeps its value', () => {
    const slot = new PrivateSlot<string>('test');
    const frozen = Object.freeze({ a: 1 });
    slot.set(frozen, 'f');
    assert.equal(slot.get(frozen), 'f');
    const fn = (): void => undefined;
    slot.set(fn, 'g');
    assert.equal(slot.get(fn), 'g');
    const refusing = new Proxy({}, { defineProperty: () => false });
    slot.set(refusing, 'p');
    assert.equal(slot.get(refusing), 'p');
  });
});
