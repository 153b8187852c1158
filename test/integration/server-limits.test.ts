// Per-session limits refuse with 429 and Retry-After, change nothing, and free their slot again;
// the bind warning names unauthenticated non-loopback binds only.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { bindWarning } from '../../src/server/serve.js';
import { assertRefusal, RawSession, toolCall } from '../helpers/http.js';
import { startServer } from '../helpers/test-server.js';

describe('per-session limits', () => {
  test('maxInflightPerSession: the request over the limit gets 429, the others finish, the slot frees', async () => {
    const srv = await startServer({ maxInflightPerSession: 2, streamAfterMs: 0 });
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const a = s.post(toolCall('slow', { ms: 300 }, 'a'));
    const b = s.post(toolCall('slow', { ms: 300 }, 'b'));
    await new Promise((r) => setTimeout(r, 50));
    const c = await s.post(toolCall('echo', { text: 'c' }, 'c'));
    assertRefusal(c, 429, -32000, 'too-many-requests');
    assert.equal(c.headers['retry-after'], '1');
    assert.equal(srv.probe.started.has('echo'), false, 'the refused request never reached a handler');
    assert.equal((await a).status, 200);
    assert.equal((await b).status, 200);
    assert.equal((await s.post(toolCall('echo', { text: 'd' }, 'd'))).json().result.content[0].text, 'd');
  });

  test('maxStreamsPerSession counts open exchanges and the GET stream', async () => {
    const srv = await startServer({ maxStreamsPerSession: 2, streamAfterMs: 0 });
    after(() => srv.close());
    const s = new RawSession(srv.url);
    await s.init();
    const get = await s.get();
    const a = s.post(toolCall('slow', { ms: 300 }, 'a'));
    await new Promise((r) => setTimeout(r, 50));
    assertRefusal(await s.post(toolCall('echo', { text: 'x' }, 'x')), 429, -32000, 'too-many-streams');
    // Replacing the GET stream does not need a new slot.
    const get2 = await s.get();
    assert.equal(get2.status, 200);
    await get.finished(2_000, 'the replaced GET ends');
    assert.equal((await a).status, 200);
    assert.equal((await s.post(toolCall('echo', { text: 'y' }, 'y'))).status, 200);
    get2.destroy();
  });
});

describe('bind warning', () => {
  test('only for a non-loopback bind without authentication', () => {
    assert.equal(bindWarning('127.0.0.1', 3000, false), undefined);
    assert.equal(bindWarning('::1', 3000, false), undefined);
    assert.equal(bindWarning('0.0.0.0', 3000, true), undefined);
    assert.match(bindWarning('0.0.0.0', 3000, false) ?? '', /0\.0\.0\.0:3000.*no authentication/);
    assert.match(bindWarning('::', 8080, false) ?? '', /\[::\]:8080/);
  });
});
