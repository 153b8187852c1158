/**
 * `sessionIdPrefix` (core/options.ts): checked once, and every session id the instance mints is
 * `<prefix>.<random>` with the random part unchanged (base64url, no dot), so a balancer can read
 * the owner from what precedes the first dot (docs/scale-out.md, "Owner-affine routing"). A session
 * so named is served as any other, and an id with a foreign prefix is only an unknown session.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { newSessionId } from '../../src/core/era-2025/ids.js';
import { resolveOptions } from '../../src/core/options.js';
import { InvalidOptionError } from '../../src/errors.js';
import { RawSession, rpc } from '../helpers/http.js';
import { type Running, startServer } from '../helpers/test-server.js';

const PREFIX = /^[A-Za-z0-9_-]{1,32}$/;

describe('sessionIdPrefix: the option', () => {
  test('absent: ids are the random part alone, as before', () => {
    assert.equal(resolveOptions({}).sessionIdPrefix, undefined);
    assert.match(newSessionId(), /^[A-Za-z0-9_-]{24}$/);
  });

  test('refused once, with the rule, for anything but 1-32 of A-Z a-z 0-9 _ -', () => {
    for (const bad of ['', 'a.b', 'a b', 'a{b}', 'é', 'x'.repeat(33), 7, null]) {
      assert.throws(
        () => resolveOptions({ sessionIdPrefix: bad as never }),
        (e: unknown) => e instanceof InvalidOptionError && /sessionIdPrefix must be 1-32/.test(e.message),
        String(bad),
      );
    }
  });

  test('any allowed prefix: <prefix>.<24 base64url>, the prefix exactly what precedes the first dot', () => {
    fc.assert(
      fc.property(fc.stringMatching(PREFIX), (prefix) => {
        assert.equal(resolveOptions({ sessionIdPrefix: prefix }).sessionIdPrefix, prefix);
        const id = newSessionId(prefix);
        assert.equal(id.slice(0, id.indexOf('.')), prefix);
        assert.match(id.slice(prefix.length + 1), /^[A-Za-z0-9_-]{24}$/);
        // Visible ASCII only (2025-11-25 basic/transports §"Session Management").
        assert.match(id, /^[\x21-\x7e]+$/);
      }),
      { numRuns: 300 },
    );
  });
});

describe('sessionIdPrefix: a served session', () => {
  let s: Running;
  before(async () => {
    s = await startServer({ sessionIdPrefix: 'east-1' });
  });
  after(async () => {
    await s.close();
  });

  test('initialize mints east-1.<random>, and the session serves requests', async () => {
    const c = new RawSession(s.url);
    await c.init();
    assert.match(c.sid ?? '', /^east-1\.[A-Za-z0-9_-]{24}$/);
    const r = await c.post(rpc('tools/list'));
    assert.equal(r.status, 200);
    assert.ok(Array.isArray(r.json().result.tools));
  });

  test('a well-formed id of another prefix is an unknown session (404), nothing created', async () => {
    const before = s.stats().sessions.created;
    const c = new RawSession(s.url);
    c.sid = `west-2.${'A'.repeat(24)}`;
    c.version = '2025-11-25';
    const r = await c.post(rpc('tools/list'));
    assert.equal(r.status, 404);
    assert.equal(s.stats().sessions.created, before);
  });
});
