/**
 * The 2026-07-28 era's client-side header rules (src/client/modern.ts): which messages are modern, the standard
 * headers, the strict Base64 sentinel, and `Mcp-Param-*` headers from `x-mcp-header` declarations.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  encodeHeaderValue,
  isModernRevision,
  modernRevisionOf,
  ParamHeaderCatalog,
  standardHeaders,
} from '../../src/client/modern.js';

const meta = (v: unknown) => ({ _meta: { 'io.modelcontextprotocol/protocolVersion': v } });

test('a message is modern only when its _meta names a 2026-07-28-or-later revision', () => {
  assert.equal(modernRevisionOf({ method: 'tools/list', params: meta('2026-07-28') }), '2026-07-28');
  assert.equal(modernRevisionOf({ method: 'tools/list', params: meta('2027-01-01') }), '2027-01-01');
  assert.equal(modernRevisionOf({ method: 'tools/list', params: meta('2025-11-25') }), undefined);
  assert.equal(modernRevisionOf({ method: 'tools/list', params: meta(20260728) }), undefined);
  assert.equal(modernRevisionOf({ method: 'tools/list', params: meta('2026-7-28') }), undefined);
  assert.equal(modernRevisionOf({ method: 'tools/list' }), undefined);
  assert.equal(modernRevisionOf({ method: 'tools/list', params: [] }), undefined);
  assert.equal(isModernRevision('9999-99-99'), true);
});

test('standard headers: version, method, and Mcp-Name from name or uri', () => {
  assert.deepEqual(standardHeaders({ method: 'tools/call', params: { name: 'echo' } }, '2026-07-28'), {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'echo',
  });
  assert.equal(
    standardHeaders({ method: 'resources/read', params: { uri: 'file:///a b' } }, '2026-07-28')['mcp-name'],
    'file:///a b',
  );
  assert.equal(
    standardHeaders({ method: 'tools/list', params: { name: 'x' } }, '2026-07-28')['mcp-name'],
    undefined,
  );
  assert.equal(
    standardHeaders({ method: 'prompts/get', params: { name: 'héllo' } }, '2026-07-28')['mcp-name'],
    '=?base64?aMOpbGxv?=',
  );
});

test('the Base64 sentinel wraps exactly the values that are not safe plain field values', () => {
  assert.equal(encodeHeaderValue('us-west-2'), 'us-west-2');
  assert.equal(encodeHeaderValue('a b c'), 'a b c');
  // A tab is a control character: MCP 2026-07-28 §"Value Encoding" sends it as the sentinel.
  assert.equal(encodeHeaderValue('a b\tc'), `=?base64?${Buffer.from('a b\tc').toString('base64')}?=`);
  assert.equal(encodeHeaderValue(''), '=?base64??=');
  assert.equal(encodeHeaderValue(' lead'), `=?base64?${Buffer.from(' lead').toString('base64')}?=`);
  assert.equal(encodeHeaderValue('日本'), `=?base64?${Buffer.from('日本').toString('base64')}?=`);
  assert.equal(
    encodeHeaderValue('line\nbreak'),
    `=?base64?${Buffer.from('line\nbreak').toString('base64')}?=`,
  );
  // A plain value shaped like the sentinel would be decoded by the server: it is wrapped too.
  const lookalike = '=?base64?SGk=?=';
  assert.equal(encodeHeaderValue(lookalike), `=?base64?${Buffer.from(lookalike).toString('base64')}?=`);
  // Canonical, padded RFC 4648.
  assert.equal(encodeHeaderValue('Zürich é'), '=?base64?WsO8cmljaCDDqQ==?=');
});

test('Mcp-Param headers come from x-mcp-header declarations learned from tools/list', () => {
  const catalog = new ParamHeaderCatalog();
  catalog.learn({
    tools: [
      {
        name: 'deploy',
        inputSchema: {
          type: 'object',
          properties: {
            region: { type: 'string', 'x-mcp-header': 'Region' },
            count: { type: 'integer', 'x-mcp-header': 'Count' },
            dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
            target: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
            note: { type: 'string' },
          },
        },
      },
      { name: 'bad', inputSchema: { properties: { a: { type: 'string', 'x-mcp-header': 'has space' } } } },
      {
        name: 'dup',
        inputSchema: { properties: { a: { 'x-mcp-header': 'X' }, b: { 'x-mcp-header': 'x' } } },
      },
      null,
      { name: 7 },
    ],
  });
  const call = (name: string, args: unknown) =>
    catalog.headersFor({ method: 'tools/call', params: { name, arguments: args } });
  assert.deepEqual(call('deploy', { region: 'eu', count: 3, dry: false, target: { zone: 'ä' }, note: 'n' }), {
    'mcp-param-region': 'eu',
    'mcp-param-count': '3',
    'mcp-param-dry-run': 'false',
    'mcp-param-zone': `=?base64?${Buffer.from('ä').toString('base64')}?=`,
  });
  // Null or absent values get no header; non-primitive values neither.
  assert.deepEqual(call('deploy', { region: null, count: { n: 1 } }), {});
  assert.deepEqual(call('bad', { a: 'v' }), {});
  assert.deepEqual(call('float', { a: 1.5 }), {});
  assert.deepEqual(call('untyped', { a: 'v' }), {});
  assert.deepEqual(call('dup', { a: 'v', b: 'w' }), {});
  assert.deepEqual(call('unknown', { a: 'v' }), {});
  assert.deepEqual(catalog.headersFor({ method: 'tools/list', params: { name: 'deploy' } }), {});
  // A later tools/list that drops the declaration forgets it.
  catalog.learn({ tools: [{ name: 'deploy', inputSchema: { properties: { region: { type: 'string' } } } }] });
  assert.deepEqual(call('deploy', { region: 'eu' }), {});
});
