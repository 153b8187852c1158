import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  carryMrtr,
  META_INPUT_RESPONSES,
  META_REQUEST_STATE,
  missingCapabilities,
  mrtrInput,
} from '../../src/modern/mrtr.js';
import { toolError, toolErrorOf } from '../../src/modern/tool-error.js';
import { createRequestStateCodec } from '../../src/server/request-state.js';

describe('modern/mrtr', () => {
  test('carryMrtr copies inputResponses and requestState into _meta and keeps the rest', () => {
    const req = {
      jsonrpc: '2.0' as const,
      id: 1,
      method: 'tools/call',
      params: { name: 't', inputResponses: { a: 1 }, requestState: 's', _meta: { k: 'v' } },
    };
    const c = carryMrtr(req);
    assert.deepEqual(c.params?.['_meta'], {
      k: 'v',
      [META_INPUT_RESPONSES]: { a: 1 },
      [META_REQUEST_STATE]: 's',
    });
    assert.deepEqual(
      mrtrInput(
        c.params?.['_meta'] === undefined
          ? undefined
          : { _meta: c.params['_meta'] as Record<string, unknown> },
      ),
      {
        inputResponses: { a: 1 },
        requestState: 's',
      },
    );
    const plain = { jsonrpc: '2.0' as const, id: 2, method: 'tools/list', params: {} };
    assert.equal(carryMrtr(plain), plain);
  });

  test('missingCapabilities names each undeclared capability as an object, none when declared', () => {
    const result = {
      resultType: 'input_required',
      inputRequests: {
        a: { method: 'sampling/createMessage', params: {} },
        b: { method: 'elicitation/create', params: {} },
        c: { method: 'roots/list', params: {} },
      },
    };
    assert.deepEqual(missingCapabilities(result, {}), { sampling: {}, elicitation: {}, roots: {} });
    assert.deepEqual(missingCapabilities(result, { sampling: {}, roots: {} }), { elicitation: {} });
    assert.equal(missingCapabilities(result, { sampling: {}, roots: {}, elicitation: {} }), undefined);
    assert.equal(missingCapabilities({ resultType: 'input_required', requestState: 'x' }, {}), undefined);
  });

  test('the requestState codec round-trips and refuses tampering, other keys and expiry', () => {
    let now = 1_000;
    const codec = createRequestStateCodec({ secret: 'a-secret-of-enough-bytes', ttlMs: 100, now: () => now });
    const other = createRequestStateCodec({ secret: 'another-secret-of-enough', ttlMs: 100, now: () => now });
    const t = codec.seal({ round: 2 });
    assert.deepEqual(codec.open(t), { round: 2 });
    assert.equal(other.open(t), undefined);
    assert.equal(codec.open(`${t}x`), undefined);
    assert.equal(codec.open(`x${t}`), undefined);
    assert.equal(codec.open('nodot'), undefined);
    assert.equal(codec.open(undefined), undefined);
    now += 101;
    assert.equal(codec.open(t), undefined, 'expired');
    assert.throws(() => createRequestStateCodec({ secret: 'short' }), RangeError);
  });

  test('any single-character change to a sealed state is refused (property)', () => {
    const codec = createRequestStateCodec({ secret: 'a-secret-of-enough-bytes' });
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 2 }), fc.nat(), fc.constantFrom(...'AZaz09-_.'), (v, at, ch) => {
        const t = codec.seal(v);
        const i = at % t.length;
        fc.pre(t[i] !== ch);
        const tampered = t.slice(0, i) + ch + t.slice(i + 1);
        // base64url decoding ignores a final char's unused bits only when the MAC is equal too.
        const opened = codec.open(tampered);
        if (opened !== undefined) assert.deepEqual(opened, JSON.parse(JSON.stringify(v)));
      }),
      { numRuns: 500 },
    );
  });

  test('toolError names a JSON-RPC error that toolErrorOf reads back', () => {
    const r = toolError(-32602, 'bad state', { why: 'x' });
    assert.equal(r.isError, true);
    assert.deepEqual(toolErrorOf(r, 4), {
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32602, message: 'bad state', data: { why: 'x' } },
    });
    assert.equal(toolErrorOf({ content: [] }, 4), undefined);
  });
});
