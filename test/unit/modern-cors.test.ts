import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { corsHeaders, preflightHeaders, requestedParamHeaders } from '../../src/security/cors.js';

describe('security/cors for 2026-07-28 headers', () => {
  test('answers expose Mcp-Method and Mcp-Name; preflights allow them', () => {
    assert.match(corsHeaders('http://a')['access-control-expose-headers'] ?? '', /Mcp-Method.*Mcp-Name/);
    assert.match(
      preflightHeaders('http://a', 'POST')['access-control-allow-headers'] ?? '',
      /Mcp-Method, Mcp-Name/,
    );
  });

  test('only requested mcp-param-* tokens are reflected, lower-cased, deduplicated and bounded', () => {
    assert.deepEqual(
      requestedParamHeaders('Content-Type, MCP-Param-Region, mcp-param-region, x-evil, mcp-param-'),
      ['mcp-param-region'],
    );
    assert.deepEqual(requestedParamHeaders('mcp-param-a b, mcp-param-ok'), ['mcp-param-ok']);
    assert.deepEqual(requestedParamHeaders(undefined), []);
    const many = Array.from({ length: 100 }, (_, i) => `mcp-param-h${i}`).join(',');
    assert.equal(requestedParamHeaders(many).length, 64);
    const h =
      preflightHeaders('http://a', 'POST', 'mcp-param-region, x-evil')['access-control-allow-headers'] ?? '';
    assert.match(h, /mcp-param-region$/);
    assert.doesNotMatch(h, /x-evil/);
  });
});
