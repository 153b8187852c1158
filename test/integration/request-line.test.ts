/**
 * What node:http leaves to the server about the request line and Host (RFC 9112 §3.2, §3.2.2):
 * more than one Host field line is a 400 that changes nothing; an absolute-form target is served as
 * its origin-form path, and its authority, not the Host header, is the name the Host check sees.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Served, serve } from '../../src/server/index.js';
import { initializeBody, rawExchange, rawStatus } from '../helpers/http.js';
import { createProbe, testServerFactory } from '../helpers/test-server.js';

/** A raw HTTP/1.1 POST of `initialize` to `target`, with the given Host lines. */
function initialize(target: string, hosts: string[]): string {
  const body = JSON.stringify(initializeBody());
  return [
    `POST ${target} HTTP/1.1`,
    ...hosts.map((h) => `Host: ${h}`),
    'Connection: close',
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

function reasonOf(raw: string): string | undefined {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  const json = body.includes('{') ? body.slice(body.indexOf('{'), body.lastIndexOf('}') + 1) : '{}';
  return (JSON.parse(json) as { error?: { data?: { reason?: string } } }).error?.data?.reason;
}

describe('the request line and Host (RFC 9112 §3.2)', () => {
  let served: Served;
  let port: number;
  before(async () => {
    served = await serve({ createServer: testServerFactory(createProbe()), port: 0, keepaliveMs: 0 });
    port = Number(new URL(served.url).port);
  });
  after(async () => {
    await served.close();
  });

  test('two Host lines are a 400 duplicate-host, whatever the names, and open no session', async () => {
    const sessions = served.handler.stats().sessions.active;
    for (const hosts of [
      [`127.0.0.1:${port}`, `127.0.0.1:${port}`],
      [`127.0.0.1:${port}`, 'evil.example'],
      ['evil.example', `127.0.0.1:${port}`],
    ]) {
      const raw = await rawExchange(port, initialize('/mcp', hosts));
      assert.equal(rawStatus(raw), 400, raw);
      assert.equal(reasonOf(raw), 'duplicate-host', raw);
    }
    assert.equal(served.handler.stats().sessions.active, sessions);
    // One Host line is served as before.
    assert.equal(rawStatus(await rawExchange(port, initialize('/mcp', [`127.0.0.1:${port}`]))), 200);
  });

  test('an absolute-form target is served (§3.2.2), its query kept apart from the path', async () => {
    const raw = await rawExchange(port, initialize(`http://127.0.0.1:${port}/mcp`, [`127.0.0.1:${port}`]));
    assert.equal(rawStatus(raw), 200, raw);
    assert.match(raw, /mcp-session-id: /i);
    const withQuery = await rawExchange(
      port,
      initialize(`HTTP://127.0.0.1:${port}/mcp?x=1`, [`127.0.0.1:${port}`]),
    );
    assert.equal(rawStatus(withQuery), 200, withQuery);
    const elsewhere = await rawExchange(
      port,
      initialize(`http://127.0.0.1:${port}/other`, [`127.0.0.1:${port}`]),
    );
    assert.equal(rawStatus(elsewhere), 404, elsewhere);
  });

  test("an absolute-form target's authority replaces Host: a foreign one is refused on a loopback bind", async () => {
    // The Host line names this server; the target, which §3.2.2 says wins, names another.
    const raw = await rawExchange(port, initialize('http://evil.example/mcp', [`127.0.0.1:${port}`]));
    assert.equal(rawStatus(raw), 403, raw);
    assert.equal(reasonOf(raw), 'host-not-allowed', raw);
  });
});
