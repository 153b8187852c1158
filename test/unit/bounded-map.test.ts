/**
 * flow/bounded-map.ts: a count-bounded map whose oldest entry leaves first, in insertion order
 * (`set`) or recency order (`renew`, `touch`). Unit cases, then a property: over random operation
 * sequences it behaves exactly as a plain Map evicting `keys().next()` (the code it replaced). Then
 * two of its sites that have no test of their own: ExpiringSet and DirectoryCache.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { DirectoryEntry } from '../../src/cluster/directory.js';
import { DirectoryCache } from '../../src/cluster/directory-cache.js';
import { InvalidOptionError } from '../../src/errors.js';
import { BoundedMap } from '../../src/flow/bounded-map.js';
import { ExpiringSet } from '../../src/flow/expiring-set.js';

const entries = <K, V>(m: BoundedMap<K, V>): [K, V][] => [...m.keys()].map((k) => [k, m.get(k) as V]);

describe('BoundedMap', () => {
  test('evicts the oldest beyond max, in insertion order, and tells onEvict', () => {
    const evicted: [string, number][] = [];
    const m = new BoundedMap<string, number>(2, (k, v) => evicted.push([k, v]));
    m.set('a', 1);
    m.set('b', 2);
    m.set('c', 3);
    assert.deepEqual(entries(m), [
      ['b', 2],
      ['c', 3],
    ]);
    assert.deepEqual(evicted, [['a', 1]]);
    assert.equal(m.size, 2);
    assert.equal(m.has('a'), false);
    assert.equal(m.get('a'), undefined);
  });

  test('set on a held key replaces its value in place (as Map.set) and evicts nothing', () => {
    const evicted: string[] = [];
    const m = new BoundedMap<string, number>(2, (k) => evicted.push(k));
    m.set('a', 1);
    m.set('b', 2);
    m.set('a', 10);
    assert.deepEqual(entries(m), [
      ['a', 10],
      ['b', 2],
    ]);
    m.set('c', 3);
    assert.deepEqual([...m.keys()], ['b', 'c']);
    assert.deepEqual(evicted, ['a']);
  });

  test('renew makes a key the newest, held before or not', () => {
    const m = new BoundedMap<string, number>(3);
    m.set('a', 1);
    m.set('b', 2);
    m.set('c', 3);
    m.renew('a', 4);
    assert.deepEqual(entries(m), [
      ['b', 2],
      ['c', 3],
      ['a', 4],
    ]);
    m.renew('d', 5);
    assert.deepEqual([...m.keys()], ['c', 'a', 'd']);
    m.renew('d', 6);
    assert.deepEqual([...m.keys()], ['c', 'a', 'd']);
    assert.equal(m.get('d'), 6);
  });

  test('touch returns the value and makes the key the newest; get leaves it in place', () => {
    const m = new BoundedMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    assert.equal(m.get('a'), 1);
    assert.deepEqual([...m.keys()], ['a', 'b']);
    assert.equal(m.touch('a'), 1);
    assert.deepEqual([...m.keys()], ['b', 'a']);
    assert.equal(m.touch('zz'), undefined);
    m.set('c', 3);
    assert.deepEqual([...m.keys()], ['a', 'c']);
  });

  test('delete anywhere keeps the order of the rest', () => {
    const m = new BoundedMap<number, number>(Number.POSITIVE_INFINITY);
    for (let i = 0; i < 5; i++) m.set(i, i);
    assert.equal(m.delete(2), true);
    assert.equal(m.delete(2), false);
    assert.equal(m.delete(0), true);
    assert.equal(m.delete(4), true);
    assert.deepEqual([...m.keys()], [1, 3]);
    assert.equal(m.oldestKey(), 1);
    m.set(5, 5);
    assert.deepEqual([...m.keys()], [1, 3, 5]);
    m.delete(1);
    m.delete(3);
    m.delete(5);
    assert.equal(m.size, 0);
    assert.equal(m.oldestKey(), undefined);
    m.set(6, 6);
    assert.deepEqual([...m.keys()], [6]);
  });

  test('dropOldestWhile stops at the first entry it keeps, without onEvict', () => {
    const evicted: string[] = [];
    const m = new BoundedMap<string, number>(10, (k) => evicted.push(k));
    m.set('a', 1);
    m.set('b', 5);
    m.set('c', 2);
    m.dropOldestWhile((v) => v < 3);
    assert.deepEqual([...m.keys()], ['b', 'c']);
    m.dropOldestWhile(() => true);
    assert.equal(m.size, 0);
    m.dropOldestWhile(() => true);
    assert.deepEqual(evicted, []);
  });

  test('keys() survives deleting the key it just gave', () => {
    const m = new BoundedMap<number, number>(Number.POSITIVE_INFINITY);
    for (let i = 0; i < 6; i++) m.set(i, i);
    const seen: number[] = [];
    for (const k of m.keys()) {
      seen.push(k);
      if (k % 2 === 0) m.delete(k);
    }
    assert.deepEqual(seen, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual([...m.keys()], [1, 3, 5]);
  });

  test('clear empties it and it works on afterwards', () => {
    const m = new BoundedMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    m.clear();
    assert.equal(m.size, 0);
    assert.equal(m.oldestKey(), undefined);
    m.set('c', 3);
    m.set('d', 4);
    m.set('e', 5);
    assert.deepEqual([...m.keys()], ['d', 'e']);
  });

  test('max 1 keeps only the newest', () => {
    const m = new BoundedMap<string, number>(1);
    m.set('a', 1);
    m.renew('b', 2);
    assert.deepEqual(entries(m), [['b', 2]]);
  });

  test('refuses a max that is not a positive integer or Infinity', () => {
    for (const max of [0, -1, 1.5, Number.NaN, Number.NEGATIVE_INFINITY, 2 ** 53]) {
      assert.throws(() => new BoundedMap(max), InvalidOptionError, String(max));
    }
  });
});

/** The code BoundedMap replaced: a plain Map evicting its first key. */
class ReferenceMap {
  readonly map = new Map<number, number>();
  readonly evicted: [number, number][] = [];
  readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  #bound(): void {
    if (this.map.size > this.max) {
      const oldest = this.map.keys().next();
      if (oldest.done !== true) {
        this.evicted.push([oldest.value, this.map.get(oldest.value) as number]);
        this.map.delete(oldest.value);
      }
    }
  }
  set(k: number, v: number): void {
    this.map.set(k, v);
    this.#bound();
  }
  renew(k: number, v: number): void {
    this.map.delete(k);
    this.map.set(k, v);
    this.#bound();
  }
  touch(k: number): number | undefined {
    const v = this.map.get(k);
    if (v !== undefined) {
      this.map.delete(k);
      this.map.set(k, v);
    }
    return v;
  }
  dropOldestWhile(drop: (v: number, k: number) => boolean): void {
    for (const [k, v] of this.map) {
      if (!drop(v, k)) return;
      this.map.delete(k);
    }
  }
}

type Op =
  | { op: 'set' | 'renew'; k: number; v: number }
  | { op: 'touch' | 'get' | 'has' | 'delete'; k: number }
  | { op: 'dropBelow'; v: number }
  | { op: 'clear' };

const key = fc.integer({ min: 0, max: 12 });
const value = fc.integer({ min: 0, max: 100 });
const anyOp: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constantFrom('set', 'renew'), k: key, v: value }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constantFrom('touch', 'get', 'has', 'delete'), k: key }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('dropBelow'), v: value }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('clear') }) },
) as fc.Arbitrary<Op>;

test('BoundedMap behaves as a Map evicting keys().next(), over random operation sequences', () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.integer({ min: 1, max: 8 }), fc.constant(Number.POSITIVE_INFINITY)),
      fc.array(anyOp, { maxLength: 200 }),
      (max, ops) => {
        const evicted: [number, number][] = [];
        const m = new BoundedMap<number, number>(max, (k, v) => evicted.push([k, v]));
        const ref = new ReferenceMap(max);
        for (const o of ops) {
          switch (o.op) {
            case 'set':
              m.set(o.k, o.v);
              ref.set(o.k, o.v);
              break;
            case 'renew':
              m.renew(o.k, o.v);
              ref.renew(o.k, o.v);
              break;
            case 'touch':
              assert.equal(m.touch(o.k), ref.touch(o.k));
              break;
            case 'get':
              assert.equal(m.get(o.k), ref.map.get(o.k));
              break;
            case 'has':
              assert.equal(m.has(o.k), ref.map.has(o.k));
              break;
            case 'delete':
              assert.equal(m.delete(o.k), ref.map.delete(o.k));
              break;
            case 'dropBelow':
              m.dropOldestWhile((v) => v < o.v);
              ref.dropOldestWhile((v) => v < o.v);
              break;
            case 'clear':
              m.clear();
              ref.map.clear();
              break;
          }
          assert.equal(m.size, ref.map.size);
          assert.equal(m.oldestKey(), ref.map.keys().next().value);
          assert.deepEqual(entries(m), [...ref.map]);
          assert.deepEqual(evicted, ref.evicted);
        }
      },
    ),
    { numRuns: 500 },
  );
});

describe('sites on BoundedMap', () => {
  test('ExpiringSet: a re-added key is renewed; the oldest leaves beyond max; stale keys expire', () => {
    const s = new ExpiringSet<string>(2, 100);
    s.add('a', 0);
    s.add('b', 10);
    s.add('a', 20);
    s.add('c', 30);
    assert.equal(s.take('b', 30), false, 'b was the oldest once a was renewed');
    assert.equal(s.take('a', 30), true);
    s.add('d', 50);
    assert.equal(s.take('c', 130), false, 'c expired at 130');
    assert.equal(s.take('d', 130), true);
    assert.equal(s.size, 0);
  });

  test('DirectoryCache: set renews, get does not; the oldest set leaves beyond max; entries expire', () => {
    let now = 0;
    const c = new DirectoryCache(2, 100, () => now);
    const e = (owner: string): DirectoryEntry => ({ owner }) as unknown as DirectoryEntry;
    c.set('s1', e('x'));
    c.set('s2', e('y'));
    c.get('s1');
    c.set('s3', e('z'));
    assert.equal(c.get('s1'), undefined, 'a get does not renew');
    c.set('s2', e('y2'));
    c.set('s4', e('w'));
    assert.equal(c.get('s3'), undefined, 's2 was renewed by its set');
    assert.deepEqual(c.get('s2'), e('y2'));
    now = 100;
    assert.equal(c.get('s4'), undefined);
    assert.equal(c.size, 1);
  });
});
