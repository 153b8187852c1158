// Host and Origin checks (DNS rebinding), CORS for allowed origins only, and authentication with
// sessions bound to the principal that created them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RequestView } from '../../src/server/index.js';
import { ACCEPT_BOTH, assertRefusal, initializeBody, RawSession, rpc, send } from '../helpers/http.js';
import { modernBody, modernSend } from '../helpers/modern.js';
import { type Running, startServer } from '../helpers/test-server.js';

const JSON_HEADERS = { 'content-type': 'application/json', accept: ACCEPT_BOTH };

describe('security: Host and Origin, default policy (same-origin, loopback names)', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0 });
  });
  after(() => srv.close());

  const init = (headers: Record<string, string>) =>
    send(srv.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, ...headers },
      body: JSON.stringify(initializeBody()),
    });

  test('a foreign Origin with a valid Host → 403 origin-not-allowed, no session', async () => {
    const before = srv.stats();
    for (const origin of [
      'http://evil.example',
      `http://evil.example:${srv.port}`,
      'null',
      `http://localhost:${srv.port + 1}`,
      'file://',
    ]) {
      assertRefusal(await init({ origin }), 403, -32000, 'origin-not-allowed');
    }
    assert.equal(srv.stats().sessions.active, before.sessions.active);
    assert.equal(srv.stats().refusals.origin, before.refusals.origin + 5);
  });

  test('a foreign Host on a loopback bind → 403 host-not-allowed (DNS rebinding), with or without Origin', async () => {
    const before = srv.stats();
    assertRefusal(await init({ host: `evil.example:${srv.port}` }), 403, -32000, 'host-not-allowed');
    assertRefusal(
      await init({ host: 'evil.example', origin: 'http://evil.example' }),
      403,
      -32000,
      'host-not-allowed',
    );
    assertRefusal(await init({ host: `127.0.0.1.nip.io:${srv.port}` }), 403, -32000, 'host-not-allowed');
    assert.equal(srv.stats().sessions.active, before.sessions.active);
    assert.equal(srv.stats().refusals.host, before.refusals.host + 3);
  });

  test('loopback Host names are served; an absent Origin is allowed', async () => {
    for (const host of [`localhost:${srv.port}`, `127.0.0.1:${srv.port}`, `LOCALHOST:${srv.port}`]) {
      const r = await init({ host });
      assert.equal(r.status, 200, host);
      assert.equal(r.headers['access-control-allow-origin'], undefined, 'no CORS headers without Origin');
    }
  });

  test('a same-origin Origin is allowed and gets CORS headers exposing Mcp-Session-Id', async () => {
    const origin = `http://127.0.0.1:${srv.port}`;
    const r = await init({ origin });
    assert.equal(r.status, 200);
    assert.equal(r.headers['access-control-allow-origin'], origin);
    assert.match(String(r.headers['access-control-expose-headers']), /Mcp-Session-Id/i);
    assert.match(String(r.headers.vary), /Origin/);
  });

  test('CORS preflight from the same origin → 204 allowing the MCP methods and headers; from a foreign one → 403', async () => {
    const origin = `http://localhost:${srv.port}`;
    const pre = await send(srv.url, {
      method: 'OPTIONS',
      headers: {
        host: `localhost:${srv.port}`,
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-session-id, mcp-protocol-version',
      },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], origin);
    assert.equal(pre.headers['access-control-allow-methods'], 'POST, GET, DELETE');
    for (const h of ['Mcp-Session-Id', 'MCP-Protocol-Version', 'Content-Type', 'Last-Event-ID']) {
      assert.match(String(pre.headers['access-control-allow-headers']), new RegExp(h, 'i'));
    }
    assert.match(String(pre.headers['access-control-expose-headers']), /Mcp-Session-Id/i);
    const bad = await send(srv.url, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    assertRefusal(bad, 403, -32000, 'origin-not-allowed');
    assert.equal(bad.headers['access-control-allow-origin'], undefined);
  });

  test('Origin is checked on GET and DELETE too, before the session is touched', async () => {
    const s = new RawSession(srv.url);
    await s.init();
    const g = await s.get({ origin: 'http://evil.example' });
    await g.finished(2_000, 'GET 403');
    assertRefusal(g, 403, -32000, 'origin-not-allowed');
    assertRefusal(await s.delete({ origin: 'http://evil.example' }), 403, -32000, 'origin-not-allowed');
    assert.equal((await s.post(rpc('ping'))).status, 200, 'the session survived');
  });
});

describe('security: allowedOrigins', () => {
  let srv: Running;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, allowedOrigins: ['https://app.example.com'] });
  });
  after(() => srv.close());

  test('only listed origins pass (same-origin is no longer implied); preflight only for them', async () => {
    const ok = await send(srv.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, origin: 'https://app.example.com' },
      body: JSON.stringify(initializeBody()),
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['access-control-allow-origin'], 'https://app.example.com');
    for (const origin of [
      `http://127.0.0.1:${srv.port}`,
      'http://app.example.com',
      'https://app.example.com.evil.io',
    ]) {
      const r = await send(srv.url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, origin },
        body: JSON.stringify(initializeBody()),
      });
      assertRefusal(r, 403, -32000, 'origin-not-allowed');
    }
    const pre = await send(srv.url, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.match(String(pre.headers['access-control-allow-headers']), /Mcp-Session-Id/i);
  });
});

describe('security: authenticate and principals', () => {
  let srv: Running;
  const users: Record<string, string> = {
    'token-alice': 'alice',
    'token-bob': 'bob',
    'token-carol': 'carol',
  };
  before(async () => {
    srv = await startServer({
      keepaliveMs: 0,
      resourceMetadataUrl: 'https://auth.example/.well-known/oauth-protected-resource',
      authenticate: (req: RequestView) => {
        const h = req.headers.authorization;
        const p = typeof h === 'string' ? users[h.replace(/^Bearer /, '')] : undefined;
        if (p === undefined) return null;
        // Carol's credential sends headers of its own, some of which it may not set.
        return p !== 'carol'
          ? { principal: p }
          : {
              principal: p,
              headers: {
                'X-Credential-Note': 'renew soon',
                'content-type': 'text/plain',
                'mcp-session-id': 'forged',
                'x-smuggled': 'a\r\nset-cookie: x=1',
                'bad name': 'v',
              },
            };
      },
    });
  });
  after(() => srv.close());

  test('no or bad credentials → 401 with WWW-Authenticate naming the resource metadata; nothing created', async () => {
    for (const auth of [undefined, 'Bearer nope']) {
      const r = await send(srv.url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, ...(auth === undefined ? {} : { authorization: auth }) },
        body: JSON.stringify(initializeBody()),
      });
      assertRefusal(r, 401, -32000, 'unauthorized');
      assert.equal(
        r.headers['www-authenticate'],
        'Bearer resource_metadata="https://auth.example/.well-known/oauth-protected-resource"',
      );
    }
    assert.equal(srv.stats().sessions.active, 0);
    assert.equal(srv.stats().refusals.auth, 2);
  });

  test("another principal's session id → 404 on POST, GET, DELETE; the owner's session is untouched", async () => {
    const alice = new RawSession(srv.url, { authorization: 'Bearer token-alice' });
    await alice.init();
    const bob = new RawSession(srv.url, { authorization: 'Bearer token-bob' });
    bob.sid = alice.sid;
    bob.version = alice.version;
    assertRefusal(await bob.post(rpc('ping')), 404, -32001, 'session-not-found');
    const g = await bob.get();
    await g.finished(2_000, 'GET 404');
    assertRefusal(g, 404, -32001, 'session-not-found');
    assertRefusal(await bob.delete(), 404, -32001, 'session-not-found');
    assert.equal((await alice.post(rpc('ping'))).status, 200);
    // Alice's credentials are needed on every request, not just the first.
    const anon = new RawSession(srv.url);
    anon.sid = alice.sid;
    assertRefusal(await anon.post(rpc('ping')), 401, -32000, 'unauthorized');
    assert.equal((await alice.delete()).status, 204);
  });

  test("a credential's own headers reach every answer; Sluice's own and malformed ones are dropped", async () => {
    const carol = new RawSession(srv.url, { authorization: 'Bearer token-carol' });
    const init = await carol.init();
    assert.equal(init.headers['x-credential-note'], 'renew soon');
    assert.match(String(init.headers['content-type']), /^(application\/json|text\/event-stream)/);
    assert.notEqual(carol.sid, 'forged');
    assert.equal(init.headers['x-smuggled'], undefined);
    assert.equal(init.headers['set-cookie'], undefined);
    const call = await carol.post(rpc('ping'));
    assert.equal(call.status, 200, call.text);
    assert.equal(call.headers['x-credential-note'], 'renew soon');
    const g = await carol.get();
    assert.equal(g.status, 200);
    assert.equal(g.headers['x-credential-note'], 'renew soon');
    assert.equal(g.headers['content-type'], 'text/event-stream');
    g.destroy();
    assert.equal((await carol.delete()).status, 204);
    // A 2026-07-28 request (no session), answered as JSON and as a stream alike.
    for (const mode of ['application/json', 'text/event-stream']) {
      const body = modernBody('tools/call', { name: 'echo', arguments: { text: 'm' } });
      const m = await modernSend(srv.url, body, { authorization: 'Bearer token-carol', accept: mode });
      assert.equal(m.status, 200, m.text);
      assert.equal(m.headers['x-credential-note'], 'renew soon', mode);
      assert.ok(String(m.headers['content-type']).startsWith(mode), mode);
    }
  });
});
