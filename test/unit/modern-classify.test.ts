import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyEra } from '../../src/modern/classify.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const req = (method: string, params?: object, id: number | string = 7) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

describe('modern/classify: era per request (one test per row)', () => {
  test('a batch is legacy; a batch element with the modern field is 400/-32600', () => {
    assert.deepEqual(classifyEra([req('tools/list')], undefined), { era: 'legacy' });
    const v = classifyEra([req('tools/list', { _meta: META })], undefined);
    assert.equal(v.era, 'refused');
    if (v.era === 'refused')
      assert.deepEqual([v.refusal.status, v.refusal.code, v.refusal.id], [400, -32600, null]);
  });

  test('a posted response is legacy, even with a modern header', () => {
    assert.deepEqual(classifyEra({ jsonrpc: '2.0', id: 1, result: {} }, '2026-07-28'), { era: 'legacy' });
  });

  test('a body that is not JSON-RPC is legacy (refused there as today)', () => {
    assert.deepEqual(classifyEra({ hello: 1 }, '2026-07-28'), { era: 'legacy' });
  });

  test('initialize without the field is legacy; with a modern header 400/-32020 echoing the id', () => {
    assert.deepEqual(classifyEra(req('initialize', {}), '2025-11-25'), { era: 'legacy' });
    assert.deepEqual(classifyEra(req('initialize', {}), undefined), { era: 'legacy' });
    const v = classifyEra(req('initialize', {}, 'i1'), '2026-07-28');
    assert.equal(v.era, 'refused');
    if (v.era === 'refused')
      assert.deepEqual([v.refusal.status, v.refusal.code, v.refusal.id], [400, -32020, 'i1']);
  });

  test('a request with the _meta field is modern (whatever the header; validation decides later)', () => {
    assert.equal(classifyEra(req('tools/list', { _meta: META }), undefined).era, 'modern');
    assert.equal(classifyEra(req('initialize', { _meta: META }), '2025-11-25').era, 'modern');
    const odd = { ...META, 'io.modelcontextprotocol/protocolVersion': 12 };
    assert.equal(classifyEra(req('tools/list', { _meta: odd }), undefined).era, 'modern');
  });

  test('no field with a header >= 2026-07-28 is 400/-32602 naming the keys, never legacy', () => {
    for (const h of ['2026-07-28', '2027-01-01', ' 2026-07-28 ']) {
      const v = classifyEra(req('tools/list', {}, 3), h);
      assert.equal(v.era, 'refused', h);
      if (v.era === 'refused') {
        assert.deepEqual([v.refusal.status, v.refusal.code, v.refusal.id], [400, -32602, 3]);
        assert.match(v.refusal.message, /io\.modelcontextprotocol\/protocolVersion/);
      }
    }
  });

  test('no field with a legacy, odd or absent header is legacy', () => {
    for (const h of [undefined, '2025-11-25', '2025-03-26', 'banana', '1900-01-01']) {
      assert.deepEqual(classifyEra(req('tools/list', {}), h), { era: 'legacy' }, String(h));
    }
  });

  test('a notification is modern with the field or a modern header, else legacy', () => {
    const n = (params?: object) => ({ jsonrpc: '2.0', method: 'notifications/initialized', params });
    assert.deepEqual(classifyEra(n({ _meta: META }), undefined), { era: 'modern-notification' });
    assert.deepEqual(classifyEra(n(), '2026-07-28'), { era: 'modern-notification' });
    assert.deepEqual(classifyEra(n(), '2025-11-25'), { era: 'legacy' });
    // On a session, a header alone does not make it modern: the session refuses the header (400).
    assert.deepEqual(classifyEra(n(), '2026-07-28', undefined, 'sid-1'), { era: 'legacy' });
    assert.deepEqual(classifyEra(n({ _meta: META }), '2026-07-28', undefined, 'sid-1'), {
      era: 'modern-notification',
    });
  });
});
