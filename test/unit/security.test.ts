import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { resolveOptions } from '../../src/core/options.js';
import { InvalidOptionError } from '../../src/errors.js';
import { corsHeaders, preflightHeaders } from '../../src/security/cors.js';
import { hostAllowed, hostNameOf, isLoopbackAddress } from '../../src/security/host.js';
import { checkOrigin } from '../../src/security/origin.js';

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

describe('security/origin checkOrigin', () => {
  const allow = new Set(['https://app.example.com', 'http://localhost:5173']);
  const table: [
    string,
    string | undefined,
    string | undefined,
    ReadonlySet<string> | undefined,
    'absent' | 'allowed' | 'denied',
  ][] = [
    ['absent origin', undefined, '127.0.0.1:3000', undefined, 'absent'],
    ['same origin', 'http://127.0.0.1:3000', '127.0.0.1:3000', undefined, 'allowed'],
    ['same origin, localhost', 'http://localhost:3000', 'localhost:3000', undefined, 'allowed'],
    ['same origin, case-insensitive host', 'http://LOCALHOST:3000', 'localhost:3000', undefined, 'allowed'],
    ['same origin, default port', 'http://127.0.0.1', '127.0.0.1:80', undefined, 'allowed'],
    ['same origin, IPv6', 'http://[::1]:3000', '[::1]:3000', undefined, 'allowed'],
    ['other port', 'http://127.0.0.1:3001', '127.0.0.1:3000', undefined, 'denied'],
    ['other host', 'http://evil.example', '127.0.0.1:3000', undefined, 'denied'],
    ['localhost vs 127.0.0.1', 'http://localhost:3000', '127.0.0.1:3000', undefined, 'denied'],
    ['literal null', 'null', '127.0.0.1:3000', undefined, 'denied'],
    ['garbage', 'not a url', '127.0.0.1:3000', undefined, 'denied'],
    ['empty', '', '127.0.0.1:3000', undefined, 'denied'],
    ['file scheme', 'file:///etc/passwd', '127.0.0.1:3000', undefined, 'denied'],
    ['chrome-extension scheme', 'chrome-extension://abc', '127.0.0.1:3000', undefined, 'denied'],
    ['data scheme', 'data:text/html,x', '127.0.0.1:3000', undefined, 'denied'],
    ['no Host to compare with', 'http://127.0.0.1:3000', undefined, undefined, 'denied'],
    ['allowlist exact', 'https://app.example.com', 'api.example.com', allow, 'allowed'],
    ['allowlist, port', 'http://localhost:5173', 'x', allow, 'allowed'],
    ['allowlist, trailing slash tolerated by URL', 'https://app.example.com/', 'x', allow, 'allowed'],
    ['allowlist miss: scheme', 'http://app.example.com', 'x', allow, 'denied'],
    ['allowlist miss: subdomain', 'https://evil.app.example.com', 'x', allow, 'denied'],
    ['allowlist miss: suffix', 'https://app.example.com.evil.io', 'x', allow, 'denied'],
    ['allowlist miss: port', 'https://app.example.com:444', 'x', allow, 'denied'],
    ['allowlist ignores same-origin', 'http://127.0.0.1:3000', '127.0.0.1:3000', allow, 'denied'],
  ];
  for (const [name, origin, host, list, want] of table) {
    test(`${want}: ${name}`, () => {
      assert.equal(checkOrigin(origin, host, list), want);
    });
  }

  test('a Host with userinfo cannot make a foreign Origin same-origin', {}, () => {
    const host = '127.0.0.1:3000@evil.example';
    // The Host check and the Origin check must agree on which host the header names.
    assert.equal(
      hostAllowed(host, { loopback: true }, LOOPBACK) &&
        checkOrigin('http://evil.example', host, undefined) === 'allowed',
      false,
    );
  });

  test('never throws (property)', () => {
    fc.assert(
      fc.property(fc.option(fc.string()), fc.option(fc.string()), (o, h) => {
        checkOrigin(o ?? undefined, h ?? undefined, undefined);
        checkOrigin(o ?? undefined, h ?? undefined, new Set(['https://a.b']));
      }),
    );
  });
});

describe('security/host', () => {
  test('isLoopbackAddress', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])
      assert.equal(isLoopbackAddress(a), true, a);
    for (const a of [
      undefined,
      '',
      '0.0.0.0',
      '10.0.0.1',
      '::',
      '::ffff:10.0.0.1',
      '128.0.0.1',
      '1127.0.0.1',
    ]) {
      assert.equal(isLoopbackAddress(a), false, String(a));
    }
  });

  const names: [string, string | undefined][] = [
    ['localhost', 'localhost'],
    ['LocalHost:3000', 'localhost'],
    [' 127.0.0.1:80 ', '127.0.0.1'],
    ['[::1]:3000', '[::1]'],
    ['[::1]', '[::1]'],
    ['[::1', undefined],
    [':3000', undefined],
    ['', undefined],
  ];
  for (const [h, want] of names) {
    test(`hostNameOf(${JSON.stringify(h)}) = ${want}`, () => {
      assert.equal(hostNameOf(h), want);
    });
  }

  const allowed: [string | undefined, boolean, boolean][] = [
    ['localhost:3000', true, true],
    ['127.0.0.1:3000', true, true],
    ['[::1]:3000', true, true],
    ['evil.example', true, false],
    ['evil.example:3000', true, false],
    ['localhost.evil.example', true, false],
    ['127.0.0.1.nip.io', true, false],
    [undefined, true, false],
    ['', true, false],
    ['evil.example', false, true],
    [undefined, false, true],
  ];
  for (const [host, loopback, want] of allowed) {
    test(`hostAllowed(${JSON.stringify(host)}, loopback=${loopback}) = ${want}`, () => {
      assert.equal(hostAllowed(host, { loopback }, LOOPBACK), want);
    });
  }

  test('where the request arrived is read only when the Host names no allowed host', () => {
    let reads = 0;
    const view = (loopback: boolean) => ({
      get loopback() {
        reads++;
        return loopback;
      },
    });
    assert.equal(hostAllowed('localhost:3000', view(true), LOOPBACK), true);
    assert.equal(reads, 0, 'an allowed name needs no address');
    assert.equal(hostAllowed('evil.example', view(true), LOOPBACK), false);
    assert.equal(hostAllowed('evil.example', view(false), LOOPBACK), true);
    assert.equal(hostAllowed(undefined, view(true), LOOPBACK), false);
    assert.equal(reads, 3);
  });

  test('custom allowedHosts replace the defaults', () => {
    assert.equal(hostAllowed('mcp.internal:80', { loopback: true }, ['mcp.internal']), true);
    assert.equal(hostAllowed('localhost:80', { loopback: true }, ['mcp.internal']), false);
  });

  test('allowedHosts entries the Host check could never match are refused when the options are resolved', () => {
    // The check compares the Host's name without its port, IPv6 literals in brackets (RFC 9110 §7.2):
    // an entry with a port, a scheme or a bare IPv6 address would silently refuse every request.
    for (const bad of ['localhost:3000', 'http://mcp.internal', '::1', 'mcp.internal/', '', 'a b']) {
      assert.throws(
        () => resolveOptions({ allowedHosts: [bad] }),
        (e: unknown) => e instanceof InvalidOptionError && /allowedHosts/.test(e.message),
        bad,
      );
    }
    assert.deepEqual(resolveOptions({ allowedHosts: [' MCP.Internal ', '[::1]'] }).allowedHosts, [
      'mcp.internal',
      '[::1]',
    ]);
  });
});

describe('security/cors', () => {
  test('answers expose Mcp-Session-Id and vary on Origin; preflight allows the MCP headers', () => {
    const h = corsHeaders('https://app.example.com');
    assert.equal(h['access-control-allow-origin'], 'https://app.example.com');
    assert.match(h['access-control-expose-headers'] ?? '', /Mcp-Session-Id/);
    assert.equal(h['vary'], 'Origin');
    const p = preflightHeaders('https://app.example.com', 'POST, GET, DELETE');
    assert.equal(p['access-control-allow-methods'], 'POST, GET, DELETE');
    for (const name of [
      'Mcp-Session-Id',
      'MCP-Protocol-Version',
      'Last-Event-ID',
      'Content-Type',
      'Authorization',
    ]) {
      assert.match(p['access-control-allow-headers'] ?? '', new RegExp(name));
    }
  });
});
