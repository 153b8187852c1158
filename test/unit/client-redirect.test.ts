/**
 * Which redirects the client transport follows (src/client/redirect.ts), under both values of `redirectPolicy`,
 * and which headers go along when one leaves the origin. The adapters that call these are tested against real
 * servers in test/integration/client-wire.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  CREDENTIAL_HEADERS,
  headersAcross,
  type RedirectPolicy,
  redirectTarget,
} from '../../src/client/redirect.js';

const from = new URL('https://mcp.example.com/mcp');
const follow = (status: number, method: string, location: string, policy: RedirectPolicy, base = from) =>
  redirectTarget(status, method, base, location, policy)?.href;

describe('redirectTarget', () => {
  test("'same-origin' (the default): within the origin and the method kept; nothing else", () => {
    assert.equal(follow(307, 'POST', '/mcp/', 'same-origin'), 'https://mcp.example.com/mcp/');
    assert.equal(redirectTarget(308, 'POST', from, '/v2/mcp')?.href, 'https://mcp.example.com/v2/mcp');
    assert.equal(follow(301, 'GET', '/x', 'same-origin'), 'https://mcp.example.com/x');
    assert.equal(follow(307, 'POST', 'https://other.example.com/mcp', 'same-origin'), undefined);
    assert.equal(follow(307, 'POST', 'https://mcp.example.com:8443/mcp', 'same-origin'), undefined);
    assert.equal(
      follow(
        307,
        'POST',
        'https://mcp.example.com/mcp',
        'same-origin',
        new URL('http://mcp.example.com/mcp'),
      ),
      'https://mcp.example.com/mcp',
      'http to https on the same host, default ports: an upgrade within the origin',
    );
  });

  test("'follow': another origin too, with the method kept, never https to http or to userinfo", () => {
    assert.equal(
      follow(307, 'POST', 'https://other.example.com/mcp', 'follow'),
      'https://other.example.com/mcp',
    );
    assert.equal(
      follow(308, 'DELETE', 'https://other.example.com/mcp', 'follow'),
      'https://other.example.com/mcp',
    );
    assert.equal(
      follow(302, 'GET', 'https://other.example.com/mcp', 'follow'),
      'https://other.example.com/mcp',
    );
    assert.equal(
      follow(302, 'POST', 'https://other.example.com/mcp', 'follow'),
      undefined,
      'the POST would lose its body',
    );
    assert.equal(follow(303, 'POST', '/mcp/', 'follow'), undefined);
    assert.equal(follow(307, 'POST', 'http://other.example.com/mcp', 'follow'), undefined, 'https to http');
    assert.equal(
      follow(307, 'POST', 'http://mcp.example.com/mcp', 'follow'),
      undefined,
      'https to http, same host',
    );
    assert.equal(follow(307, 'POST', 'https://u:p@other.example.com/mcp', 'follow'), undefined);
    assert.equal(follow(307, 'POST', 'ftp://other.example.com/mcp', 'follow'), undefined);
    assert.equal(
      follow(307, 'POST', 'https://other.example.com/mcp', 'follow', new URL('http://127.0.0.1:3000/mcp')),
      'https://other.example.com/mcp',
      'http to https is no downgrade',
    );
  });

  test('not a redirect, no Location, or a Location that is no URL: nothing to follow', () => {
    for (const policy of ['same-origin', 'follow'] as const) {
      assert.equal(redirectTarget(200, 'POST', from, '/x', policy), undefined);
      assert.equal(redirectTarget(307, 'POST', from, null, policy), undefined);
      assert.equal(redirectTarget(307, 'POST', from, 'http://[bad', policy), undefined);
    }
  });

  test('property: a followed redirect keeps the method, never downgrades, and leaves the origin only under follow', () => {
    const hosts = ['a.example', 'b.example', '127.0.0.1', '[::1]'];
    const url = fc
      .tuple(
        fc.constantFrom('http:', 'https:'),
        fc.constantFrom(...hosts),
        fc.constantFrom('', ':8080', ':443'),
        fc.constantFrom('/mcp', '/', '/x/y'),
      )
      .map(([scheme, host, port, path]) => new URL(`${scheme}//${host}${port}${path}`));
    fc.assert(
      fc.property(
        url,
        url,
        fc.constantFrom(200, 301, 302, 303, 304, 307, 308),
        fc.constantFrom('GET', 'POST', 'DELETE'),
        fc.constantFrom<RedirectPolicy>('same-origin', 'follow'),
        (start, to, status, method, policy) => {
          const next = redirectTarget(status, method, start, to.href, policy);
          if (next === undefined) return;
          assert.ok([301, 302, 303, 307, 308].includes(status));
          if (method !== 'GET') assert.ok(status === 307 || status === 308, 'the method is kept');
          assert.ok(!(start.protocol === 'https:' && next.protocol === 'http:'), 'no downgrade');
          const sameOrigin =
            start.origin === next.origin ||
            (start.hostname === next.hostname &&
              start.port === '' &&
              next.port === '' &&
              next.protocol === 'https:');
          if (policy === 'same-origin') assert.ok(sameOrigin, `${start.href} -> ${next.href}`);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('headersAcross', () => {
  const headers = {
    authorization: 'Bearer t',
    dpop: 'proof',
    cookie: 'c=1',
    'proxy-authorization': 'Basic x',
    'mcp-session-id': 's1',
    'mcp-protocol-version': '2025-11-25',
    'last-event-id': 'e1',
    'x-api-key': 'k',
  };

  test('within the origin: the same headers, unchanged', () => {
    assert.equal(headersAcross(from, new URL('https://mcp.example.com/v2'), headers), headers);
  });

  test('to another origin: everything but the credentials', () => {
    const kept = headersAcross(from, new URL('https://other.example.com/mcp'), headers);
    for (const name of CREDENTIAL_HEADERS) assert.equal(kept[name], undefined, name);
    assert.deepEqual(kept, {
      'mcp-session-id': 's1',
      'mcp-protocol-version': '2025-11-25',
      'last-event-id': 'e1',
      'x-api-key': 'k',
    });
    assert.equal(headers.authorization, 'Bearer t', 'the caller’s object is not changed');
  });
});
