/**
 * What each request allocates must die young. Two shapes did not: an object literal with getters
 * made per request (it gets a hidden class of its own in V8's old space, pointing at the request's
 * closures) and a module-level WeakMap keyed by a per-request object (a scavenge keeps the values
 * of an old WeakMap alive). Either way every request's objects were promoted to the old generation
 * and GC took about a quarter of a request's CPU (flow/private-slot.ts, server/node-view.ts).
 * A third: a function literal assigned to a property (`x.f = () => …`) is born in V8's old
 * generation, and keeps the context it closes over alive through every scavenge until the next full
 * collection (core/sdk/bridge-transport.ts, DETACHED; docs/benchmarks.md, "Function literals assigned
 * to properties"). These tests hold the replacements to their shape; the cost itself is measured by
 * `npm run bench`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { inspect } from 'node:util';
import { BridgeTransport } from '../../src/core/sdk/bridge-transport.js';
import { fetchView } from '../../src/fetch/fetch-view.js';
import { PrivateSlot } from '../../src/flow/private-slot.js';
import { nodeView } from '../../src/server/node-view.js';
import { ROOT, sourceTree } from '../helpers/source-tree.js';

/**
 * A function literal on the right of a property assignment (`a.b = () => …`, `this.#c ??= function …`,
 * `d[k] = async (x) => …`) in compiled JavaScript: `file:line text`. V8's parser marks such a literal
 * for pretenuring, so each closure made there is allocated in the old generation (checked below).
 * Compiled code, because its types are gone and an arrow's parameter list is plain.
 */
export function assignedFunctionLiterals(file: string, js: string): string[] {
  const text = js.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/\/\/.*$/gm, '');
  const re =
    /[\w$#\])]+(?:\.[\w$#]+|\[[^\]\n]+\])+\s*(?:\?\?|\|\||&&)?=(?![=>])\s*(?:async\s+)?(?:function\b|(?:\([^()]*\)|[\w$]+)\s*=>)/g;
  const out: string[] = [];
  for (const m of text.matchAll(re)) {
    const line = text.slice(0, m.index).split('\n').length;
    out.push(`${file}:${line} ${m[0].replace(/\s+/g, ' ')}`);
  }
  return out;
}

/** Every compiled file of src/ (dist/src), by its source path, with its text. */
function compiledTree(): [string, string][] {
  const out: [string, string][] = [];
  const visit = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      // The `sluice` command's chunks (scripts/bundle-cli.mjs) are copies of the modules scanned here.
      if (e.isDirectory()) {
        if (relative(join(ROOT, 'dist', 'src'), p) !== join('cli', 'bundle')) visit(p);
      } else if (e.name.endsWith('.js'))
        out.push([relative(join(ROOT, 'dist'), p).split('\\').join('/'), readFileSync(p, 'utf8')]);
    }
  };
  visit(join(ROOT, 'dist', 'src'));
  return out;
}

/**
 * Where such an assignment runs once per handler, server, shared tool or client, never per request
 * or event: an old closure there costs nothing.
 */
const ONCE = new Set([
  'src/server/create-handler.js',
  'src/server/serve.js',
  'src/server/shared-record.js',
  'src/fetch/create-fetch-handler.js',
  'src/demo/conformance-tools.js',
  'src/client/call-tool-stream.js',
  'src/cli/connect.js',
]);

const gc = (globalThis as { gc?: () => void }).gc;

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

  test('no function literal is assigned to a property on a per-request path (compiled src/)', () => {
    const found = compiledTree()
      .filter(([f]) => !ONCE.has(f))
      .flatMap(([f, js]) => assignedFunctionLiterals(f, js));
    assert.deepEqual(found, [], 'make the function first (const f = …), then assign it');
  });

  test('the scan finds assigned literals, and not a function made first', () => {
    const js = [
      'this.a = (x) => x;',
      'o.#b ??= function () {};',
      'r[k] = async (y) => y;',
      'const f = () => 1;',
      'this.c = f;',
      'call(() => 2);',
      'this.p = (async () => 4)();',
      'if (a === () => 3) {}',
    ].join('\n');
    assert.deepEqual(
      assignedFunctionLiterals('f.js', js).map((s) => s.split(' ')[0]),
      ['f.js:1', 'f.js:2', 'f.js:3'],
    );
  });

  test('a closed bridge transport lets go of its target', {
    skip: gc === undefined ? 'needs --expose-gc (npm test passes it)' : false,
  }, async () => {
    // The SDK's connect() assigns its handlers to the transport as function literals; their
    // contexts, old and dead, keep the transport alive until a full collection. What the transport
    // still reaches then is kept with it: after close, not the request behind its target.
    let target: { route(): undefined; closedBySdk(): void } | undefined = {
      route: () => undefined,
      closedBySdk() {},
    };
    const ref = new WeakRef(target);
    const t = new BridgeTransport(target, undefined);
    target = undefined;
    await t.close();
    // WeakRef targets are kept until the end of the job that made them.
    await new Promise((r) => setImmediate(r));
    gc?.();
    assert.equal(ref.deref(), undefined, 'the target was collected while its transport lives');
    assert.equal(
      await t.send({ jsonrpc: '2.0', id: 1, result: {} }),
      undefined,
      'a closed transport sends nothing',
    );
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
    assert.deepEqual(Object.getOwnPropertySymbols(o), [], 'no symbol to find it by');
    assert.equal(inspect(o), '{ a: 1 }', 'util.inspect does not show it');
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
    slot.set(frozen, 'f2');
    assert.equal(slot.get(frozen), 'f2', 'set again replaces');
    assert.equal(slot.get(Object.freeze({ a: 1 })), undefined, 'another frozen object has none');
    const fn = (): void => undefined;
    slot.set(fn, 'g');
    assert.equal(slot.get(fn), 'g');
    const refusing = new Proxy({}, { defineProperty: () => false });
    slot.set(refusing, 'p');
    assert.equal(slot.get(refusing), 'p');
  });

  test('PrivateSlot: the value goes with its object', {
    skip: gc === undefined ? 'needs --expose-gc (npm test passes it)' : false,
  }, async () => {
    const slot = new PrivateSlot<object>('test');
    let value: object | undefined = { big: 'x'.repeat(1000) };
    const ref = new WeakRef(value);
    let holder: object | undefined = {};
    slot.set(holder, value);
    assert.equal(slot.get(holder), value);
    value = undefined;
    holder = undefined;
    await new Promise((r) => setImmediate(r));
    gc?.();
    assert.equal(ref.deref(), undefined, 'the last value set went with its object');
  });
});
