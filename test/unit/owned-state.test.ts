/**
 * Objects own their state (docs/design.md, "Conventions"): no class in src/ has a public field that
 * code outside could set. A count or a time another object reads is a private field behind a getter;
 * a count many objects advance is a Tally (flow/tally.ts), added to through its methods. The one
 * exception is a contract of the SDK's: its `Transport` interface has the SDK set `onmessage`,
 * `onerror`, `onclose` (and `sessionId`) on the transport it is given.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { OpenTally, Tally } from '../../src/flow/tally.js';
import { sourceTree } from '../helpers/source-tree.js';

/**
 * Fields the SDK's `Transport` contract has the SDK assign (@modelcontextprotocol/sdk
 * shared/transport.ts): on the server's bridge and on the client transport (whose
 * `onsessionreset` is the same kind of callback, set by the application).
 */
const SDK_TRANSPORT_FIELDS: Record<string, ReadonlySet<string>> = {
  BridgeTransport: new Set(['onmessage', 'onerror', 'onclose', 'sessionId']),
  StreamableHttpClientTransport: new Set(['onmessage', 'onerror', 'onclose', 'onsessionreset']),
};

const MODIFIER =
  /^(readonly|private|protected|static|declare|abstract|get|set|async|constructor|override\s+readonly)\b/;

/** `Class.field` for every public field without `readonly` declared in a class body of `source`. */
export function publicMutableFields(source: string): string[] {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '));
  const out: string[] = [];
  let depth = 0;
  /** Open parentheses and brackets: a parameter list or a type spread over lines is not a member. */
  let parens = 0;
  let cls: { name: string; depth: number } | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`/g, "''");
    const opens = /\bclass\s+(\w+)?[^{]*\{\s*$/.exec(line);
    if (cls === undefined && opens !== null) {
      cls = { name: opens[1] ?? '(anonymous)', depth: depth + 1 };
      parens = 0; // a regex literal above (not parsed here) may have left the count off
    } else if (cls !== undefined && depth === cls.depth && parens === 0) {
      const member = line.trim();
      const field = /^(\w+)\??\s*(?::|=|;)/.exec(member);
      if (field !== null && !MODIFIER.test(member)) out.push(`${cls.name}.${field[1]}`);
    }
    for (const ch of line) {
      depth += ch === '{' ? 1 : ch === '}' ? -1 : 0;
      parens += ch === '(' || ch === '[' ? 1 : ch === ')' || ch === ']' ? -1 : 0;
    }
    parens = Math.max(0, parens);
    if (cls !== undefined && depth < cls.depth) cls = undefined;
  }
  return out;
}

describe('objects own their state', () => {
  test('no class in src/ has a public field outside code could set', () => {
    const found: string[] = [];
    for (const [file, text] of sourceTree()) {
      for (const f of publicMutableFields(text)) {
        const [cls, field] = f.split('.');
        if (SDK_TRANSPORT_FIELDS[cls ?? '']?.has(field ?? '') === true) continue;
        found.push(`${file}: ${f}`);
      }
    }
    assert.deepEqual(found, []);
  });

  test('the check catches what it is for', () => {
    const source = [
      'export class A {',
      '  count = 0;',
      '  state?: string;',
      "  label: string = 'x';",
      '  readonly fixed = 1;',
      '  #own = 0;',
      '  private hidden = 0;',
      '  static shared = 0;',
      '  get own(): number {',
      '    const local = 1;',
      '    return this.#own + local;',
      '  }',
      '  method(): void {',
      '    if (this.count) return;',
      '  }',
      '  call(',
      '    param: string,',
      '    other = 1,',
      '  ): void {}',
      '}',
      'const b = { open: 1 };',
    ].join('\n');
    assert.deepEqual(publicMutableFields(source), ['A.count', 'A.state', 'A.label']);
  });
});

describe('Tally', () => {
  test('counts start at 0; add, get and a copy that does not write back', () => {
    const t = new Tally(['a', 'b'] as const);
    t.add('a');
    t.add('b', 5);
    t.add('a', 2);
    assert.equal(t.get('a'), 3);
    const copy = t.read();
    assert.deepEqual(copy, { a: 3, b: 5 });
    copy.a = 100;
    assert.equal(t.get('a'), 3);
  });

  test('property: each count is the sum of what was added to it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('x', 'y', 'z'), fc.integer({ min: 0, max: 1_000 }))),
        (adds) => {
          const t = new Tally(['x', 'y', 'z'] as const);
          const want = { x: 0, y: 0, z: 0 };
          for (const [k, n] of adds) {
            t.add(k, n);
            want[k] += n;
          }
          assert.deepEqual(t.read(), want);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('OpenTally', () => {
  test('counts names as they come, at most maxNames of them, the rest as other', () => {
    const t = new OpenTally(3);
    for (const n of ['a', 'b', 'a', 'c', 'd', 'e', 'a', 'd']) t.add(n);
    assert.deepEqual(t.read(), { a: 3, b: 1, c: 1, other: 3 });
    const copy = t.read();
    copy['a'] = 100;
    assert.equal(t.read()['a'], 3, 'the copy does not write back');
  });
});
