// The modern era's per-client bound on requests in flight: at most `max` slots per key, keys
// independent, a release gives exactly one slot back however often it is called, and an entry is
// gone once its key holds nothing (the table never outgrows the requests in flight).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConcurrencyLimit, type Release } from '../../src/core/limits/concurrency.js';

test('at most max slots per key; the next acquire is refused and counted', () => {
  const c = new ConcurrencyLimit(2);
  const a = c.acquire('p:alice');
  const b = c.acquire('p:alice');
  assert.ok(a !== undefined && b !== undefined);
  assert.equal(c.acquire('p:alice'), undefined);
  assert.equal(c.acquire('p:alice'), undefined);
  assert.equal(c.refused, 2);
  assert.equal(c.heldBy('p:alice'), 2);
  assert.equal(c.held, 2);
});

test('keys are independent', () => {
  const c = new ConcurrencyLimit(1);
  assert.ok(c.acquire('p:alice') !== undefined);
  assert.ok(c.acquire('p:bob') !== undefined);
  assert.ok(c.acquire('a:127.0.0.1') !== undefined);
  assert.equal(c.acquire('p:bob'), undefined);
  assert.equal(c.keys, 3);
  assert.equal(c.held, 3);
  assert.equal(c.refused, 1);
});

test('a release frees one slot, once: calling it again frees nothing', () => {
  const c = new ConcurrencyLimit(2);
  const a = c.acquire('k') as Release;
  const b = c.acquire('k') as Release;
  a();
  a();
  a();
  assert.equal(c.heldBy('k'), 1);
  assert.equal(c.held, 1);
  const again = c.acquire('k');
  assert.ok(again !== undefined);
  assert.equal(c.acquire('k'), undefined, 'a repeated release must not have made room for two');
  b();
  again();
  assert.equal(c.held, 0);
});

test('an entry is deleted when its key holds nothing, so the table is bounded by what is in flight', () => {
  const c = new ConcurrencyLimit(3);
  for (let i = 0; i < 1000; i++) {
    const r = c.acquire(`a:10.0.${i >> 8}.${i & 255}`);
    assert.ok(r !== undefined);
    r();
  }
  assert.equal(c.keys, 0);
  assert.equal(c.held, 0);
  const held = [c.acquire('x'), c.acquire('y'), c.acquire('y')];
  assert.equal(c.keys, 2);
  for (const r of held) r?.();
  assert.equal(c.keys, 0);
  assert.equal(c.heldBy('y'), 0);
});

test('a refused acquire leaves no entry behind', () => {
  const c = new ConcurrencyLimit(1);
  const r = c.acquire('k') as Release;
  assert.equal(c.acquire('k'), undefined);
  r();
  assert.equal(c.keys, 0);
});
