import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  classify,
  errorResponse,
  isRequestId,
  MAX_ID_LENGTH,
  progressTokenOf,
} from '../../src/jsonrpc/message.js';

describe('jsonrpc/message classify', () => {
  test('never throws on arbitrary JSON values, and always returns a known kind (property)', () => {
    const kinds = new Set(['request', 'notification', 'response', 'invalid']);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        assert.ok(kinds.has(classify(v).kind));
      }),
      { numRuns: 3000 },
    );
  });

  test('never throws on near-miss JSON-RPC objects (property)', () => {
    const anyJson = fc.jsonValue({ maxDepth: 2 });
    const msg = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), anyJson),
        id: fc.oneof(fc.integer(), fc.string(), fc.double(), fc.constant(null), anyJson),
        method: fc.oneof(fc.string(), anyJson),
        params: anyJson,
        result: anyJson,
        error: fc.oneof(
          fc.record({ code: fc.oneof(fc.integer(), anyJson), message: fc.oneof(fc.string(), anyJson) }),
          anyJson,
        ),
        __proto__: anyJson,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(msg, (m) => {
        const c = classify(JSON.parse(JSON.stringify(m)));
        // Whatever is accepted has the shape it claims.
        if (c.kind === 'request')
          assert.ok(isRequestId(c.message.id) && typeof c.message.method === 'string');
        if (c.kind === 'notification') assert.ok(!('id' in c.message));
        if (c.kind === 'response') assert.ok(isRequestId(c.id));
      }),
      { numRuns: 3000 },
    );
  });

  test('never throws on arbitrary JS values either (fc.anything)', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        classify(v);
      }),
      { numRuns: 1000 },
    );
  });

  const long = 'x'.repeat(MAX_ID_LENGTH);
  const table: [string, unknown, 'request' | 'notification' | 'response' | 'invalid'][] = [
    ['request, integer id', { jsonrpc: '2.0', id: 1, method: 'ping' }, 'request'],
    ['request, string id', { jsonrpc: '2.0', id: 'a', method: 'ping' }, 'request'],
    ['request, id 0', { jsonrpc: '2.0', id: 0, method: 'ping' }, 'request'],
    ['request, negative id', { jsonrpc: '2.0', id: -5, method: 'ping' }, 'request'],
    ['request, empty string id', { jsonrpc: '2.0', id: '', method: 'ping' }, 'request'],
    ['request, 256-char id', { jsonrpc: '2.0', id: long, method: 'ping' }, 'request'],
    [
      'request with params object',
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { a: 1 } },
      'request',
    ],
    ['notification', { jsonrpc: '2.0', method: 'notifications/initialized' }, 'notification'],
    ['notification with params', { jsonrpc: '2.0', method: 'n', params: {} }, 'notification'],
    ['result response', { jsonrpc: '2.0', id: 1, result: {} }, 'response'],
    ['error response', { jsonrpc: '2.0', id: 'x', error: { code: -32000, message: 'm' } }, 'response'],
    [
      'error response with data',
      { jsonrpc: '2.0', id: 1, error: { code: 1, message: '', data: [1] } },
      'response',
    ],
    ['not an object: null', null, 'invalid'],
    ['not an object: array', [], 'invalid'],
    ['not an object: number', 1, 'invalid'],
    ['not an object: string', 'x', 'invalid'],
    ['missing jsonrpc', { id: 1, method: 'ping' }, 'invalid'],
    ['jsonrpc 1.0', { jsonrpc: '1.0', id: 1, method: 'ping' }, 'invalid'],
    ['jsonrpc number 2', { jsonrpc: 2, id: 1, method: 'ping' }, 'invalid'],
    ['empty method', { jsonrpc: '2.0', id: 1, method: '' }, 'invalid'],
    ['method number', { jsonrpc: '2.0', id: 1, method: 5 }, 'invalid'],
    ['method null', { jsonrpc: '2.0', id: 1, method: null }, 'invalid'],
    ['params array', { jsonrpc: '2.0', id: 1, method: 'm', params: [1] }, 'invalid'],
    ['params string', { jsonrpc: '2.0', method: 'm', params: 's' }, 'invalid'],
    ['params null', { jsonrpc: '2.0', method: 'm', params: null }, 'invalid'],
    ['id null (MCP forbids)', { jsonrpc: '2.0', id: null, method: 'm' }, 'invalid'],
    ['id float', { jsonrpc: '2.0', id: 1.5, method: 'm' }, 'invalid'],
    ['id unsafe integer', { jsonrpc: '2.0', id: 2 ** 60, method: 'm' }, 'invalid'],
    ['id object', { jsonrpc: '2.0', id: {}, method: 'm' }, 'invalid'],
    ['id boolean', { jsonrpc: '2.0', id: true, method: 'm' }, 'invalid'],
    ['id 257 chars', { jsonrpc: '2.0', id: `${long}y`, method: 'm' }, 'invalid'],
    ['id 10,000 chars', { jsonrpc: '2.0', id: 'z'.repeat(10_000), method: 'm' }, 'invalid'],
    ['request with result', { jsonrpc: '2.0', id: 1, method: 'm', result: {} }, 'invalid'],
    [
      'request with error',
      { jsonrpc: '2.0', id: 1, method: 'm', error: { code: 1, message: '' } },
      'invalid',
    ],
    ['neither method nor result nor error', { jsonrpc: '2.0', id: 1 }, 'invalid'],
    [
      'both result and error',
      { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: '' } },
      'invalid',
    ],
    ['response without id', { jsonrpc: '2.0', result: {} }, 'invalid'],
    ['response id null', { jsonrpc: '2.0', id: null, error: { code: 1, message: 'x' } }, 'invalid'],
    ['result not an object', { jsonrpc: '2.0', id: 1, result: 5 }, 'invalid'],
    ['result array', { jsonrpc: '2.0', id: 1, result: [] }, 'invalid'],
    ['error code float', { jsonrpc: '2.0', id: 1, error: { code: 1.5, message: '' } }, 'invalid'],
    ['error code string', { jsonrpc: '2.0', id: 1, error: { code: '1', message: '' } }, 'invalid'],
    ['error without message', { jsonrpc: '2.0', id: 1, error: { code: 1 } }, 'invalid'],
    ['error not an object', { jsonrpc: '2.0', id: 1, error: 'boom' }, 'invalid'],
  ];
  for (const [name, v, kind] of table) {
    test(`${kind}: ${name}`, () => {
      const c = classify(v);
      assert.equal(c.kind, kind, c.kind === 'invalid' ? c.reason : '');
      if (c.kind === 'invalid') assert.ok(c.reason.length > 0);
    });
  }

  test('a "__proto__" key from JSON.parse is an ordinary property, not a prototype', () => {
    const v = JSON.parse('{"jsonrpc":"2.0","__proto__":{"method":"evil","id":1}}');
    assert.equal(classify(v).kind, 'invalid');
  });

  test('progressTokenOf: only for notifications/progress with a string or number token', () => {
    assert.equal(
      progressTokenOf({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't' } }),
      't',
    );
    assert.equal(
      progressTokenOf({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 3 } }),
      3,
    );
    assert.equal(
      progressTokenOf({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: {} } }),
      undefined,
    );
    assert.equal(progressTokenOf({ jsonrpc: '2.0', method: 'notifications/progress' }), undefined);
    assert.equal(
      progressTokenOf({ jsonrpc: '2.0', method: 'notifications/message', params: { progressToken: 't' } }),
      undefined,
    );
    assert.equal(
      progressTokenOf({
        jsonrpc: '2.0',
        id: 1,
        method: 'notifications/progress',
        params: { progressToken: 't' },
      }),
      undefined,
    );
    assert.equal(progressTokenOf({ jsonrpc: '2.0', id: 1, result: {} }), undefined);
  });

  test('errorResponse puts data only when given', () => {
    assert.deepEqual(errorResponse(null, -32600, 'm'), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'm' },
    });
    assert.deepEqual(errorResponse(3, 1, 'm', { reason: 'r' }), {
      jsonrpc: '2.0',
      id: 3,
      error: { code: 1, message: 'm', data: { reason: 'r' } },
    });
  });
});
