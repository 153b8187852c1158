import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JsonRpcRequest } from '../../src/jsonrpc/message.js';
import { mapError, plainCopy, stampResult } from '../../src/modern/stamp.js';

const info = { name: 's', version: '1' };
const req = (method: string, params: Record<string, unknown> = {}): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 9,
  method,
  params,
});

describe('modern/stamp: result stamping and error mapping', () => {
  test('every result gets resultType "complete" and serverInfo, keeping what the server set', () => {
    const r = stampResult({ jsonrpc: '2.0', id: 1, result: { content: [] } }, 'tools/call', info);
    assert.equal(r.result['resultType'], 'complete');
    assert.deepEqual(r.result['_meta'], { 'io.modelcontextprotocol/serverInfo': info });
    assert.equal('ttlMs' in r.result, false, 'tools/call is not cacheable');
    const kept = stampResult(
      { jsonrpc: '2.0', id: 1, result: { resultType: 'input_required', _meta: { a: 1 } } },
      'tools/call',
      info,
    );
    assert.equal(kept.result['resultType'], 'input_required');
    assert.deepEqual(kept.result['_meta'], { a: 1, 'io.modelcontextprotocol/serverInfo': info });
  });

  test('cacheable results get ttlMs and cacheScope unless valid ones are set', () => {
    for (const m of [
      'tools/list',
      'prompts/list',
      'resources/list',
      'resources/templates/list',
      'resources/read',
    ]) {
      const r = stampResult({ jsonrpc: '2.0', id: 1, result: {} }, m, undefined);
      assert.deepEqual([r.result['ttlMs'], r.result['cacheScope']], [0, 'private'], m);
    }
    const set = stampResult(
      { jsonrpc: '2.0', id: 1, result: { ttlMs: 5000, cacheScope: 'public' } },
      'tools/list',
      undefined,
    );
    assert.deepEqual([set.result['ttlMs'], set.result['cacheScope']], [5000, 'public']);
    const bad = stampResult(
      { jsonrpc: '2.0', id: 1, result: { ttlMs: -1, cacheScope: 'x' } },
      'tools/list',
      undefined,
    );
    assert.deepEqual([bad.result['ttlMs'], bad.result['cacheScope']], [0, 'private']);
  });

  test('-32601 earns 404, -32021 earns 400, others stay 200', () => {
    const e = (code: number) => ({ jsonrpc: '2.0' as const, id: 9, error: { code, message: 'm' } });
    assert.equal(mapError(e(-32601), req('x')).status, 404);
    assert.equal(mapError(e(-32021), req('x')).status, 400);
    assert.equal(mapError(e(-32603), req('x')).status, 200);
  });

  test('-32002 becomes -32602 with data.uri; -32042 is not emitted', () => {
    const m = mapError(
      { jsonrpc: '2.0', id: 9, error: { code: -32002, message: 'nope' } },
      req('resources/read', { uri: 'a://b' }),
    );
    assert.deepEqual(m.error.error, { code: -32602, message: 'nope', data: { uri: 'a://b' } });
    const u = mapError({ jsonrpc: '2.0', id: 9, error: { code: -32042, message: 'url' } }, req('tools/call'));
    assert.notEqual(u.error.error.code, -32042);
  });

  test('the stamped copy is the spread copy: own keys in order, `__proto__` kept as data, the source untouched', () => {
    // JSON.parse makes `__proto__` an own property; a copy must neither drop it nor take it as its prototype.
    const source = JSON.parse(
      '{"content":[],"__proto__":{"polluted":true},"_meta":{"__proto__":{"x":1},"a":1}}',
    );
    const before = JSON.stringify(source);
    const r = stampResult({ jsonrpc: '2.0', id: 1, result: source }, 'tools/call', info);
    assert.equal(Object.getPrototypeOf(r.result), Object.prototype);
    assert.equal((r.result as { polluted?: unknown }).polluted, undefined);
    assert.equal(Object.getPrototypeOf(r.result['_meta']), Object.prototype);
    assert.equal(
      JSON.stringify(r.result),
      '{"content":[],"__proto__":{"polluted":true},"_meta":{"__proto__":{"x":1},"a":1,' +
        '"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"complete"}',
    );
    assert.equal(JSON.stringify(source), before, 'the server’s result is not changed');
    assert.deepEqual(Object.keys(plainCopy({ b: 1, a: 2, 1: 3 })), ['1', 'b', 'a']);
  });
});
