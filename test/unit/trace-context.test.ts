/**
 * W3C Trace Context and Baggage validation (src/trace/trace-context.ts): every valid value is
 * accepted and round-trips, every value breaking the grammar is refused whole, never repaired.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { errorLabel, MAX_TOOLS, OTHER_TOOL, SemconvMetrics } from '../../src/core/observe/semconv-metrics.js';
import {
  carriedByHeaders,
  carriedByMeta,
  formatTraceparent,
  parseBaggage,
  parseTraceparent,
  parseTracestate,
} from '../../src/trace/trace-context.js';

const hexChars = (n: number) =>
  fc.array(fc.constantFrom(...'0123456789abcdef'), { minLength: n, maxLength: n }).map((a) => a.join(''));
const traceId = hexChars(32).filter((s) => !/^0+$/.test(s));
const spanId = hexChars(16).filter((s) => !/^0+$/.test(s));
const flags = hexChars(2);

describe('traceparent', () => {
  test('every valid version-00 value parses and formats back to itself', () => {
    fc.assert(
      fc.property(traceId, spanId, flags, (t, s, f) => {
        const v = `00-${t}-${s}-${f}`;
        const p = parseTraceparent(v);
        assert.deepEqual(p, { traceId: t, spanId: s, traceFlags: Number.parseInt(f, 16) });
        assert.equal(formatTraceparent(p), v);
      }),
    );
  });

  test('a later version may carry more fields after a dash; only the first four are read', () => {
    const v = '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-future';
    assert.equal(parseTraceparent(v)?.spanId, 'b7ad6b7169203331');
    assert.equal(parseTraceparent('01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x'), undefined);
  });

  test('any single-character change that breaks the grammar is refused', () => {
    fc.assert(
      fc.property(
        traceId,
        spanId,
        flags,
        fc.nat(54),
        fc.string({ minLength: 1, maxLength: 1, unit: 'binary-ascii' }),
        (t, s, f, at, c) => {
          const v = `00-${t}-${s}-${f}`;
          const mutated = v.slice(0, at) + c + v.slice(at + 1);
          const p = parseTraceparent(mutated);
          const fieldsOk =
            /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(mutated) &&
            !mutated.startsWith('ff') &&
            !/^..-0{32}-/.test(mutated) &&
            !/^.{36}0{16}-/.test(mutated);
          assert.equal(p !== undefined, fieldsOk, mutated);
        },
      ),
    );
  });

  test('refused: ff version, zero ids, upper case, wrong lengths, non-strings', () => {
    for (const v of [
      'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
      '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01',
      42,
      undefined,
      null,
      {},
    ])
      assert.equal(parseTraceparent(v), undefined, String(v));
  });
});

describe('tracestate', () => {
  const key = fc.stringMatching(/^[a-z][a-z0-9_\-*/]{0,20}$/);
  const value = fc.stringMatching(/^[\x21-\x2b\x2d-\x3c\x3e-\x7e]{1,20}$/);
  test('valid lists are kept (normalized), duplicates and bad members discard the whole value', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(key, value), { selector: (x) => x[0], minLength: 1, maxLength: 32 }),
        (ms) => {
          const v = ms.map(([k, x]) => `${k}=${x}`).join(' , ');
          assert.equal(parseTracestate(v), ms.map(([k, x]) => `${k}=${x}`).join(','));
          const [k0, x0] = ms[0] as [string, string];
          assert.equal(parseTracestate(`${v},${k0}=${x0}`), undefined, 'duplicate key');
          assert.equal(parseTracestate(`${v},Upper=1`), undefined, 'bad key');
        },
      ),
    );
    assert.equal(parseTracestate('tenant@vendor=1'), 'tenant@vendor=1');
    assert.equal(parseTracestate(Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',')), undefined);
    assert.equal(parseTracestate('a=b=c'), undefined);
  });
});

describe('baggage', () => {
  test('members with properties and percent escapes are kept; malformed ones refuse the value', () => {
    assert.equal(parseBaggage(' a = 1 ; p ; q = r , b=%20x'), 'a=1;p;q=r,b=%20x');
    for (const v of ['a', '=1', 'a=1,,b=2', 'a b=1', 'a=%zz', 'a=1;', 'a="q"', 'a=1\\']) {
      assert.equal(parseBaggage(v), undefined, v);
    }
    assert.equal(parseBaggage(Array.from({ length: 65 }, (_, i) => `k${i}=v`).join(',')), undefined);
    assert.equal(parseBaggage(`k=${'v'.repeat(8200)}`), undefined);
  });

  test('anything generated is either refused or normalized to a value that parses to itself', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        const p = parseBaggage(s);
        if (p !== undefined) assert.equal(parseBaggage(p), p);
      }),
    );
  });
});

describe('carried context', () => {
  test('_meta: tracestate only with a valid parent; invalid parts dropped independently', () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    assert.equal(carriedByMeta({ tracestate: 'a=1' }), undefined);
    assert.equal(carriedByMeta({ traceparent: 'x', tracestate: 'a=1' }), undefined);
    assert.deepEqual(carriedByMeta({ traceparent: 'x', baggage: 'k=v' }), {
      parent: undefined,
      tracestate: undefined,
      baggage: 'k=v',
    });
    assert.equal(carriedByMeta({ traceparent: tp, tracestate: 'A=1' })?.tracestate, undefined);
    assert.equal(carriedByMeta(null), undefined);
    const h = new Map([['traceparent', tp]]);
    assert.equal(carriedByHeaders((n) => h.get(n))?.parent?.spanId, 'b7ad6b7169203331');
  });
});

describe('semantic-convention metric labels stay bounded', () => {
  test('tool names beyond MAX_TOOLS share one label; error codes outside the reserved range too', () => {
    const m = new SemconvMetrics();
    for (let i = 0; i < MAX_TOOLS + 50; i++)
      m.operation('tools/call', `tool-${i}`, undefined, '2025-11-25', 0.01);
    const tools = new Set([...m.operations.values()].map((e) => e.key.tool));
    assert.equal(tools.size, MAX_TOOLS + 1);
    assert.ok(tools.has(OTHER_TOOL));
    m.operation('made/up', undefined, '12345', 'not-a-version', 0.01);
    const last = [...m.operations.values()].at(-1)?.key;
    assert.deepEqual(last, { method: 'other', tool: '', error: '_other', version: 'other' });
    assert.equal(errorLabel('-32601'), '-32601');
    assert.equal(errorLabel('tool_error'), 'tool_error');
  });
});
