// Error bodies that say what to do (issue 21, items 10 and 6): a refusal names the value it got
// and the option, flag or proxy setting that fixes it, so a new user does not have to read the
// source. The codes and reasons are unchanged (docs/errors.md); the messages are what is pinned.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ACCEPT_BOTH,
  assertRefusal,
  initializeBody,
  RawSession,
  rpc,
  send,
  toolCall,
} from '../helpers/http.js';
import { MODERN } from '../helpers/modern.js';
import { type Running, startServer } from '../helpers/test-server.js';

const JSON_HEADERS = { 'content-type': 'application/json', accept: ACCEPT_BOTH };

describe('refusals that say what to do', () => {
  let srv: Running;
  let s: RawSession;
  before(async () => {
    srv = await startServer({ keepaliveMs: 0, maxBodyBytes: 4096 });
    s = new RawSession(srv.url);
    await s.init();
  });
  after(() => srv.close());

  const post = (body: string, headers: Record<string, string>) =>
    send(srv.url, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body });
  const messageOf = (r: { json(): { error: { message: string } } }) => r.json().error.message;

  test('a request without Mcp-Session-Id is told to initialize first', async () => {
    const r = await post(JSON.stringify(rpc('tools/list')), {});
    assertRefusal(r, 400, -32000, 'missing-session-id');
    assert.match(messageOf(r), /Mcp-Session-Id header is required/);
    assert.match(messageOf(r), /send initialize first/);
  });

  test('413 names maxBodyBytes and the limit', async () => {
    const r = await post(JSON.stringify(toolCall('echo', { text: 'x'.repeat(5000) })), s.headers());
    assertRefusal(r, 413, -32000, 'body-too-large');
    assert.match(messageOf(r), /exceeds 4096 bytes \(server option maxBodyBytes\)/);
  });

  test('a foreign Host is named, with allowedHosts, --allow-host and the proxy header as fixes', async () => {
    const r = await post(JSON.stringify(initializeBody()), { host: 'mcp_backends' });
    assertRefusal(r, 403, -32000, 'host-not-allowed');
    const m = messageOf(r);
    assert.match(m, /Host "mcp_backends" not allowed/);
    assert.match(m, /allowedHosts/);
    assert.match(m, /--allow-host/);
    assert.match(m, /proxy_set_header Host \$http_host;/);
  });

  test('a received value is quoted and cut: control characters escaped, at most 100 characters', async () => {
    const r = await post(JSON.stringify(initializeBody()), { host: `${'a'.repeat(300)}.example` });
    assertRefusal(r, 403, -32000, 'host-not-allowed');
    assert.match(messageOf(r), new RegExp(`Host "${'a'.repeat(100)}…" not allowed`));
  });

  test('a foreign Origin is named with the Host it was compared with, allowedOrigins, --allow-origin and the proxy header', async () => {
    const r = await post(JSON.stringify(initializeBody()), { origin: 'https://app.example.com' });
    assertRefusal(r, 403, -32000, 'origin-not-allowed');
    const m = messageOf(r);
    assert.match(m, /Origin "https:\/\/app\.example\.com" not allowed \(Host "127\.0\.0\.1:\d+"\)/);
    assert.match(m, /allowedOrigins/);
    assert.match(m, /--allow-origin/);
    assert.match(m, /proxy_set_header Host \$http_host;/);
  });

  test('a 2026-07-28 header on a session request carries data.reason, keeps the revision code and echoes the id', async () => {
    const r = await post(JSON.stringify(toolCall('echo', { text: 'x' }, 'w1')), {
      ...s.headers(),
      'mcp-protocol-version': MODERN,
    });
    assert.equal(r.status, 400, r.text);
    const b = r.json();
    assert.equal(b.id, 'w1');
    assert.equal(b.error.code, -32602);
    assert.equal(b.error.data?.reason, 'modern-request-on-session');
    assert.match(b.error.message, /carries Mcp-Session-Id/);
    // Without a session it is the revision's own refusal, as before: no reason.
    const bare = await post(JSON.stringify(toolCall('echo', { text: 'x' }, 'w2')), {
      'mcp-protocol-version': MODERN,
    });
    assert.equal(bare.status, 400);
    assert.equal(bare.json().error.code, -32602);
    assert.equal(bare.json().error.data, undefined);
  });
});
