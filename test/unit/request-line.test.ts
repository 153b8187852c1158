/** src/server/request-line.ts over every form of request target (RFC 9112 §3.2). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { hostLines, targetAuthority, targetPath, targetPathname } from '../../src/server/request-line.js';

const pathChars = fc.constantFrom(..."abcXYZ019-._~%/:@!$&'()*+,;=".split(''));
const path = fc.array(pathChars, { maxLength: 20 }).map((cs) => `/${cs.join('')}`);
const query = fc.option(
  fc.array(fc.constantFrom(...'ab=&?/:'.split('')), { maxLength: 10 }).map((cs) => `?${cs.join('')}`),
  { nil: '' },
);
const authority = fc.constantFrom('127.0.0.1:3000', 'localhost', '[::1]:8080', 'evil.example', 'a.b:1', '');

test('origin-form is kept; absolute-form gives the same path, query and authority', () => {
  fc.assert(
    fc.property(
      path,
      query,
      authority,
      fc.constantFrom('http', 'https', 'HTTP', 'Https'),
      (p, q, a, scheme) => {
        assert.equal(targetPath(p + q), p + q);
        assert.equal(targetAuthority(p + q), undefined);
        const absolute = `${scheme}://${a}${p}${q}`;
        assert.equal(targetPath(absolute), p + q);
        assert.equal(targetPathname(absolute), p);
        assert.equal(targetAuthority(absolute), a);
      },
    ),
  );
});

test('an absolute-form target without a path is the root', () => {
  assert.equal(targetPath('http://127.0.0.1:3000'), '/');
  assert.equal(targetPath('http://127.0.0.1:3000?x=1'), '/?x=1');
  assert.equal(targetPathname('http://127.0.0.1:3000?x=1'), '/');
  // Neither form (asterisk-form, or a scheme that is not http): left as it is, and routes nowhere.
  assert.equal(targetPath('*'), '*');
  assert.equal(targetAuthority('ftp://x/mcp'), undefined);
});

test('Host lines are counted by name, in any case, and only names count', () => {
  assert.equal(hostLines(['Host', 'a', 'Accept', '*/*']), 1);
  assert.equal(hostLines(['Host', 'a', 'HOST', 'b', 'host', 'c']), 3);
  assert.equal(hostLines(['X-Host', 'host', 'Accept', 'host']), 0);
  assert.equal(hostLines([]), 0);
});
