import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JsonRpcRequest } from '../../src/jsonrpc/message.js';
import { checkParamHeaders, headerDeclsOf } from '../../src/modern/param-headers.js';
import { isRefusal, validateModern } from '../../src/modern/validate.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
function call(
  method: string,
  params: Record<string, unknown>,
  meta: Record<string, unknown> = META,
): JsonRpcRequest {
  return { jsonrpc: '2.0', id: 'r1', method, params: { ...params, _meta: meta } };
}
function headers(h: Record<string, string>) {
  const lower = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
  return (n: string) => lower[n];
}
const STD = { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'echo' };

function refused(r: ReturnType<typeof validateModern>): [number, number, unknown] {
  assert.ok(isRefusal(r), 'expected a refusal');
  return [r.status, r.code, r.id];
}

describe('modern/validate: the validation order (one test per step)', () => {
  test('a well-formed request passes and reports its meta', () => {
    const r = validateModern(call('tools/call', { name: 'echo' }), headers(STD));
    assert.ok(!isRefusal(r));
    assert.equal(r.protocolVersion, '2026-07-28');
    assert.equal(r.logLevel, undefined);
  });

  test('step 1: a non-string protocol version is 400/-32602', () => {
    const m = { ...META, 'io.modelcontextprotocol/protocolVersion': 5 };
    assert.deepEqual(refused(validateModern(call('tools/call', { name: 'echo' }, m), headers(STD))), [
      400,
      -32602,
      'r1',
    ]);
  });

  test('step 3: an unsupported version is 400/-32022 with data.supported and data.requested', () => {
    const m = { ...META, 'io.modelcontextprotocol/protocolVersion': '1900-01-01' };
    const r = validateModern(
      call('tools/list', {}, m),
      headers({ ...STD, 'Mcp-Method': 'tools/list', 'MCP-Protocol-Version': '1900-01-01' }),
    );
    assert.deepEqual(refused(r), [400, -32022, 'r1']);
    assert.ok(isRefusal(r));
    assert.deepEqual(r.data, { supported: ['2026-07-28'], requested: '1900-01-01' });
  });

  test('an unsupported version wins over missing headers, but a header contradicting the body wins over it', () => {
    const m = { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' };
    assert.deepEqual(refused(validateModern(call('tools/list', {}, m), headers({}))), [400, -32022, 'r1']);
    const h = headers({ 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/list' });
    assert.deepEqual(refused(validateModern(call('tools/list', {}, m), h)), [400, -32020, 'r1']);
    const wrongMethod = headers({ 'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'tools/call' });
    assert.deepEqual(refused(validateModern(call('tools/list', {}, m), wrongMethod)), [400, -32020, 'r1']);
  });

  test('steps 2 and 4: missing or mismatched MCP-Protocol-Version is 400/-32020', () => {
    const { 'MCP-Protocol-Version': _, ...noVersion } = STD;
    assert.deepEqual(refused(validateModern(call('tools/call', { name: 'echo' }), headers(noVersion))), [
      400,
      -32020,
      'r1',
    ]);
    const other = { ...STD, 'MCP-Protocol-Version': '2025-11-25' };
    assert.deepEqual(refused(validateModern(call('tools/call', { name: 'echo' }), headers(other))), [
      400,
      -32020,
      'r1',
    ]);
  });

  test('steps 2 and 4: missing or mismatched Mcp-Method is 400/-32020; values are case-sensitive', () => {
    const { 'Mcp-Method': _, ...noMethod } = STD;
    assert.deepEqual(refused(validateModern(call('tools/call', { name: 'echo' }), headers(noMethod))), [
      400,
      -32020,
      'r1',
    ]);
    const upper = { ...STD, 'Mcp-Method': 'TOOLS/CALL' };
    assert.deepEqual(refused(validateModern(call('tools/call', { name: 'echo' }), headers(upper))), [
      400,
      -32020,
      'r1',
    ]);
  });

  test('step 4: Mcp-Name missing, mismatched or a bad sentinel is 400/-32020; a good sentinel and OWS pass', () => {
    const { 'Mcp-Name': _, ...noName } = STD;
    assert.deepEqual(refused(validateModern(call('tools/call', { name: 'echo' }), headers(noName))), [
      400,
      -32020,
      'r1',
    ]);
    const wrong = { ...STD, 'Mcp-Name': 'other' };
    assert.deepEqual(refused(validateModern(call('tools/call', { name: 'echo' }), headers(wrong))), [
      400,
      -32020,
      'r1',
    ]);
    const bad = { ...STD, 'Mcp-Name': '=?base64?ZWNobw?=' };
    assert.deepEqual(refused(validateModern(call('tools/call', { name: 'echo' }), headers(bad))), [
      400,
      -32020,
      'r1',
    ]);
    const good = { ...STD, 'Mcp-Name': '=?base64?ZWNobw==?=', 'Mcp-Method': '  tools/call ' };
    assert.ok(!isRefusal(validateModern(call('tools/call', { name: 'echo' }), headers(good))));
    const res = { ...STD, 'Mcp-Method': 'resources/read', 'Mcp-Name': 'file:///a' };
    assert.ok(!isRefusal(validateModern(call('resources/read', { uri: 'file:///a' }), headers(res))));
  });

  test('step 5: removed methods are 404/-32601', () => {
    for (const m of [
      'initialize',
      'ping',
      'logging/setLevel',
      'resources/subscribe',
      'resources/unsubscribe',
    ]) {
      assert.deepEqual(
        refused(validateModern(call(m, {}), headers({ ...STD, 'Mcp-Method': m }))),
        [404, -32601, 'r1'],
        m,
      );
    }
  });

  test('step 6: missing clientCapabilities or malformed clientInfo/logLevel is 400/-32602; no clientInfo is fine', () => {
    const h = headers({ ...STD, 'Mcp-Method': 'tools/list' });
    const noCaps = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
    assert.deepEqual(refused(validateModern(call('tools/list', {}, noCaps), h)), [400, -32602, 'r1']);
    assert.deepEqual(
      refused(
        validateModern(call('tools/list', {}, { ...META, 'io.modelcontextprotocol/clientInfo': 'x' }), h),
      ),
      [400, -32602, 'r1'],
    );
    assert.deepEqual(
      refused(
        validateModern(call('tools/list', {}, { ...META, 'io.modelcontextprotocol/logLevel': 'loud' }), h),
      ),
      [400, -32602, 'r1'],
    );
    const ok = validateModern(
      call('tools/list', {}, { ...META, 'io.modelcontextprotocol/logLevel': 'info' }),
      h,
    );
    assert.ok(!isRefusal(ok));
    assert.equal(ok.logLevel, 'info');
  });
});

describe('modern/param-headers: Mcp-Param-* against x-mcp-header', () => {
  const schema = {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      count: { type: 'integer', 'x-mcp-header': 'Count' },
      flag: { type: 'boolean', 'x-mcp-header': 'Flag' },
      nested: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
      plain: { type: 'number' },
    },
  };
  const decls = headerDeclsOf(schema);

  test('declarations: statically reachable only, token names, case-insensitively unique', () => {
    assert.deepEqual(
      decls.map((d) => [d.name, d.path.join('.')]),
      [
        ['Region', 'region'],
        ['Count', 'count'],
        ['Flag', 'flag'],
        ['Zone', 'nested.zone'],
      ],
    );
    // One annotation the spec forbids makes the tool definition invalid: a conforming client excludes the tool
    // and sends none of its headers, so none is checked (the same rules as the client's, http/param-headers.ts).
    for (const bad of [
      { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Never' } } },
      { dup: { type: 'string', 'x-mcp-header': 'region' } },
      { badname: { type: 'string', 'x-mcp-header': 'has space' } },
      { amount: { type: 'number', 'x-mcp-header': 'Amount' } },
    ]) {
      const invalid = { ...schema, properties: { ...schema.properties, ...bad } };
      assert.deepEqual(headerDeclsOf(invalid), [], JSON.stringify(bad));
    }
  });

  test('matching headers pass (names case-insensitive, integers numeric, sentinel decoded)', () => {
    const args = { region: 'eu west', count: 42, flag: true, nested: { zone: 'z1' } };
    const h = headers({
      'mcp-param-region': '=?base64?ZXUgd2VzdA==?=',
      'MCP-PARAM-COUNT': '42.0',
      'Mcp-Param-Flag': 'true',
      'Mcp-Param-Zone': 'z1',
    });
    assert.equal(checkParamHeaders(1, decls, args, h), undefined);
  });

  test('a value in the body without its header, a mismatch or a bad sentinel is 400/-32020', () => {
    const r1 = checkParamHeaders(1, decls, { region: 'us' }, headers({}));
    assert.deepEqual([r1?.status, r1?.code, r1?.id], [400, -32020, 1]);
    const r2 = checkParamHeaders(1, decls, { region: 'us' }, headers({ 'Mcp-Param-Region': 'eu' }));
    assert.equal(r2?.code, -32020);
    const r3 = checkParamHeaders(1, decls, { count: 42 }, headers({ 'Mcp-Param-Count': '4.2e1' }));
    assert.equal(r3?.code, -32020);
    const r4 = checkParamHeaders(
      1,
      decls,
      { region: 'us' },
      headers({ 'Mcp-Param-Region': '=?base64?dXM?=' }),
    );
    assert.equal(r4?.code, -32020);
  });

  test('null or absent values need no header', () => {
    assert.equal(checkParamHeaders(1, decls, { region: null }, headers({})), undefined);
    assert.equal(checkParamHeaders(1, decls, {}, headers({})), undefined);
    assert.equal(checkParamHeaders(1, decls, undefined, headers({})), undefined);
  });
});
