// The OAuth client's DNS check on Node (src/client/http-node-guarded.ts): a URL whose host is a name, not an
// address literal, passes the URL policy by its spelling; the addresses the name resolves to are checked at the
// lookup the connection uses, so a public-looking name that resolves to an internal address is refused before
// any connection is made. The machine's own host name serves as that name when it resolves to loopback only
// (as /etc/hosts makes it on Debian and in containers): no traffic leaves 127.0.0.1.
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { OAuthHttp } from '../../src/client/auth/oauth-http.js';
import { OAuthUrlPolicy } from '../../src/client/auth/url-policy.js';
import { AuthorizationError } from '../../src/client/errors.js';
import { AddressRefusedError } from '../../src/client/http-client.js';
import { createGuardedFetch } from '../../src/client/http-node-guarded.js';

/** The host name, when every address it resolves to is loopback; else why the name-based cases cannot run. */
async function loopbackName(): Promise<{ name: string } | { skip: string }> {
  const name = hostname();
  try {
    const addresses = await lookup(name, { all: true });
    if (addresses.length > 0 && addresses.every((a) => a.address === '::1' || a.address.startsWith('127.'))) {
      return { name };
    }
    return { skip: `SKIPPED: host name ${name} resolves to ${addresses.map((a) => a.address).join(', ')}` };
  } catch (error) {
    return { skip: `SKIPPED: host name ${name} does not resolve (${String(error)})` };
  }
}

describe('the OAuth client checks what a name resolves to (Node)', () => {
  let server: Server;
  let port = 0;
  const requests: string[] = [];
  let named: { name: string } | { skip: string };

  before(async () => {
    server = createServer((req, res) => {
      requests.push(`${req.method ?? ''} ${req.url ?? ''}`);
      let body = '';
      req.on('data', (d: Buffer) => {
        body += d.toString();
      });
      req.on('end', () => {
        if (req.url === '/empty') return void res.writeHead(204).end();
        res.writeHead(200, { 'content-type': 'application/json', 'x-two': 'a' });
        res.end(
          JSON.stringify({
            method: req.method,
            body,
            type: req.headers['content-type'] ?? null,
            agent: req.headers['user-agent'] ?? null,
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    named = await loopbackName();
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('a guard that refuses the resolved addresses stops the request before it connects', async () => {
    requests.length = 0;
    const fetchFn = createGuardedFetch(() => (address) => !address.startsWith('127.') && address !== '::1');
    await assert.rejects(fetchFn(`http://localhost:${port}/x`), (e: unknown) => {
      const refused = e instanceof AddressRefusedError ? e : (e as { cause?: unknown }).cause;
      assert.ok(refused instanceof AddressRefusedError, String(e));
      assert.match(refused.addresses, /127\.0\.0\.1|::1/);
      return true;
    });
    assert.deepEqual(requests, [], 'nothing reached the server');
  });

  test('with the addresses allowed it is a plain fetch: method, headers, string body, status, null body', async () => {
    const fetchFn = createGuardedFetch(() => () => true);
    const posted = await fetchFn(`http://localhost:${port}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=x',
    });
    assert.equal(posted.status, 200);
    assert.equal(posted.headers.get('x-two'), 'a');
    assert.deepEqual(await posted.json(), {
      method: 'POST',
      body: 'grant_type=x',
      type: 'application/x-www-form-urlencoded',
      agent: 'node',
    });
    const empty = await fetchFn(`http://127.0.0.1:${port}/empty`);
    assert.equal(empty.status, 204);
    assert.equal(empty.body, null);
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(fetchFn(`http://127.0.0.1:${port}/x`, { signal: aborted.signal }));
  });

  test('the policy guards names only where it must', () => {
    const publicServer = new OAuthUrlPolicy(new URL('https://mcp.example/mcp'), false);
    const guard = publicServer.addressGuard(new URL('https://as.example/token'));
    assert.ok(guard !== undefined);
    for (const internal of [
      '10.0.0.1',
      '169.254.169.254',
      '127.0.0.1',
      '::1',
      '::ffff:7f00:1',
      'fd00::1',
      '0.0.0.0',
    ]) {
      assert.equal(guard(internal), false, internal);
    }
    assert.equal(guard('93.184.216.34'), true);
    assert.equal(guard('2606:2800:220:1:248:1893:25c8:1946'), true);
    // The server's own origin, address literals (checked by spelling already), loopback names, a lifted policy.
    assert.equal(publicServer.addressGuard(new URL('https://mcp.example/.well-known/x')), undefined);
    assert.equal(publicServer.addressGuard(new URL('https://93.184.216.34/')), undefined);
    assert.equal(publicServer.addressGuard(new URL('https://[2606:2800::1]/')), undefined);
    assert.equal(
      new OAuthUrlPolicy(new URL('https://mcp.example/mcp'), true).addressGuard(
        new URL('https://as.example/'),
      ),
      undefined,
    );
    // A server on a private network may name one there.
    const privateServer = new OAuthUrlPolicy(new URL('https://10.0.0.5/mcp'), false);
    assert.equal(privateServer.addressGuard(new URL('https://as.corp.example/'))?.('10.0.0.6'), true);
    assert.equal(privateServer.addressGuard(new URL('https://as.corp.example/'))?.('169.254.169.254'), false);
  });

  test('end to end: a public-looking name that resolves to loopback is refused as url-refused', async (t) => {
    if ('skip' in named) {
      t.skip(named.skip);
      return;
    }
    const { name } = named;
    requests.length = 0;
    const policy = new OAuthUrlPolicy(new URL('https://mcp.example/mcp'), false);
    const http = new OAuthHttp(
      createGuardedFetch((url) => policy.addressGuard(url)),
      policy,
      2_000,
    );
    const url = `https://${name}:${port}/.well-known/oauth-authorization-server`;
    await assert.rejects(
      http.exchange(url, 'authorization server metadata', { method: 'GET' }, 'discovery-failed', 1024),
      (e: unknown) =>
        e instanceof AuthorizationError && e.reason === 'url-refused' && e.message.includes(name),
    );
    assert.deepEqual(requests, [], 'no connection was made');
  });
});
