// The OAuth client's URL policy (src/client/auth/url-policy.ts): which URLs from a server's challenge and metadata
// the client may fetch or send the user to. The address classes must not depend on how a hostile server spells
// an address (decimal, hex, octal, short forms, IPv4-mapped or NAT64 IPv6): checked over every IPv4 address
// fast-check draws, each spelled every way the WHATWG URL parser accepts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { hostKind, OAuthUrlPolicy } from '../../src/client/auth/url-policy.js';
import { AuthorizationError } from '../../src/client/errors.js';

const kindOf = (url: string): string => hostKind(new URL(url));

describe('hostKind', () => {
  test('well-known addresses', () => {
    const cases: [string, string][] = [
      ['https://8.8.8.8/', 'public'],
      ['https://as.example/', 'public'],
      ['https://localhost/', 'loopback'],
      ['https://LOCALHOST./', 'loopback'], // the absolute form of the same name
      ['https://a.localhost/', 'loopback'],
      ['https://127.0.0.1/', 'loopback'],
      ['https://127.200.3.4/', 'loopback'],
      ['https://[::1]/', 'loopback'],
      ['https://10.1.2.3/', 'private'],
      ['https://172.16.0.1/', 'private'],
      ['https://172.31.255.255/', 'private'],
      ['https://172.32.0.1/', 'public'],
      ['https://192.168.0.1/', 'private'],
      ['https://100.64.0.1/', 'private'],
      ['https://[fd00::1]/', 'private'],
      ['https://169.254.169.254/', 'link-local'],
      ['https://[fe80::1]/', 'link-local'],
      ['https://0.0.0.0/', 'reserved'],
      ['https://[::]/', 'reserved'],
      ['https://224.0.0.1/', 'reserved'],
      ['https://255.255.255.255/', 'reserved'],
      ['https://[ff02::1]/', 'reserved'],
      ['https://[2001:db8::1]/', 'public'],
      ['https://[::ffff:169.254.169.254]/', 'link-local'],
      ['https://[::ffff:127.0.0.1]/', 'loopback'],
      ['https://[64:ff9b::10.0.0.1]/', 'private'],
    ];
    for (const [url, kind] of cases) assert.equal(kindOf(url), kind, url);
  });

  test('every spelling of an IPv4 address has the class of its dotted form', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    fc.assert(
      fc.property(octet, octet, octet, octet, (a, b, c, d) => {
        const dotted = `${a}.${b}.${c}.${d}`;
        const expected = kindOf(`http://${dotted}/`);
        const n = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
        const spellings = [
          String(n),
          `0x${n.toString(16)}`,
          `0${n.toString(8)}`,
          `0x${a.toString(16)}.0x${b.toString(16)}.0x${c.toString(16)}.0x${d.toString(16)}`,
          `0${a.toString(8)}.0${b.toString(8)}.0${c.toString(8)}.0${d.toString(8)}`,
          `${a}.${(b << 16) + (c << 8) + d}`,
          `${a}.${b}.${(c << 8) + d}`,
          `${dotted}.`,
          `[::ffff:${dotted}]`,
          `[::ffff:${((a << 8) + b).toString(16)}:${((c << 8) + d).toString(16)}]`,
          `[64:ff9b::${dotted}]`,
        ];
        for (const host of spellings) {
          assert.equal(kindOf(`http://${host}/`), expected, `${host} spells ${dotted}`);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

function refusal(policy: OAuthUrlPolicy, url: string): string | undefined {
  try {
    policy.check(url, 'authorization server');
    return undefined;
  } catch (error) {
    assert.ok(error instanceof AuthorizationError);
    return error.reason;
  }
}

describe('OAuthUrlPolicy', () => {
  test('a server on the public internet: https only, no internal addresses', () => {
    const policy = new OAuthUrlPolicy(new URL('https://mcp.example/mcp'), false);
    assert.equal(refusal(policy, 'https://as.example/tenant'), undefined);
    assert.equal(refusal(policy, 'https://8.8.8.8/'), undefined);
    assert.equal(refusal(policy, 'http://as.example/'), 'url-refused');
    assert.equal(refusal(policy, 'https://169.254.169.254/latest/meta-data/'), 'url-refused');
    assert.equal(refusal(policy, 'https://[::ffff:a9fe:a9fe]/'), 'url-refused');
    assert.equal(refusal(policy, 'https://10.0.0.1/'), 'url-refused');
    assert.equal(refusal(policy, 'https://0x7f000001/'), 'url-refused');
    assert.equal(refusal(policy, 'http://localhost:6379/'), 'url-refused');
    assert.equal(refusal(policy, 'https://0.0.0.0/'), 'url-refused');
    assert.equal(refusal(policy, 'file:///etc/passwd'), 'url-refused');
    assert.equal(refusal(policy, 'javascript:alert(1)'), 'url-refused');
    assert.equal(refusal(policy, 'not a url'), 'discovery-failed');
  });

  test("the server's own origin is always allowed, even over plain HTTP", () => {
    const policy = new OAuthUrlPolicy(new URL('http://mcp.example/mcp'), false);
    assert.equal(refusal(policy, 'http://mcp.example/.well-known/oauth-protected-resource/mcp'), undefined);
    assert.equal(refusal(policy, 'http://mcp.example:8080/'), 'url-refused');
  });

  test('a loopback server (development) may name loopback servers over http, not internal ones', () => {
    const policy = new OAuthUrlPolicy(new URL('http://127.0.0.1:3000/mcp'), false);
    assert.equal(refusal(policy, 'http://127.0.0.1:4000/'), undefined);
    assert.equal(refusal(policy, 'http://localhost:4000/'), undefined);
    assert.equal(refusal(policy, 'http://[::1]:4000/'), undefined);
    assert.equal(refusal(policy, 'https://as.example/'), undefined);
    assert.equal(refusal(policy, 'https://192.168.1.1/'), 'url-refused');
    assert.equal(refusal(policy, 'http://169.254.169.254/'), 'url-refused');
  });

  test('a server on a private address may name another, over https', () => {
    const policy = new OAuthUrlPolicy(new URL('https://10.0.0.5/mcp'), false);
    assert.equal(refusal(policy, 'https://10.0.0.6/'), undefined);
    assert.equal(refusal(policy, 'https://[fd12::6]/'), undefined);
    assert.equal(refusal(policy, 'http://10.0.0.6/'), 'url-refused');
    assert.equal(refusal(policy, 'https://169.254.169.254/'), 'url-refused');
    assert.equal(refusal(policy, 'https://127.0.0.1/'), 'url-refused');
  });

  test('insecureOAuthUrls lifts the policy for HTTP(S) URLs only', () => {
    const policy = new OAuthUrlPolicy(new URL('https://mcp.example/mcp'), true);
    assert.equal(refusal(policy, 'http://10.0.0.6/'), undefined);
    assert.equal(refusal(policy, 'http://169.254.169.254/'), undefined);
    assert.equal(refusal(policy, 'file:///etc/passwd'), 'url-refused');
  });
});
