/**
 * The client's GET streams and authorization, end to end (oidc-provider issuing DPoP-bound tokens,
 * Sluice's client, Sluice's resource server behind a scripted front): a GET answered 401
 * `use_dpop_nonce` (RFC 9449 §9) is sent again with the nonce, and a 401 after that still gets the
 * stream's authorization: the nonce does not use it up. The front answers the session's first two
 * standalone GETs itself and hands everything else to the Sluice handler.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { createMcpHandler, type McpHandler, oauthResourceServer } from '../../src/server/index.js';
import { signingKey, TestAuthServer } from '../helpers/auth-server.js';
import { withDeadline } from '../helpers/deadline.js';
import { BrowserProvider } from '../helpers/headless-browser.js';
import { until } from '../helpers/http.js';
import { createProbe, testServerFactory } from '../helpers/test-server.js';

const SCOPES = ['mcp:tools'];
let as: TestAuthServer;
let front: Server;
let handler: McpHandler;
let url = '';
/** `<status> <what the front saw>` per standalone GET, in order. */
const gets: string[] = [];
/** The standalone GET the front handed to the handler. */
let handed: ServerResponse | undefined;
const opened = (): boolean => handed?.headersSent === true && handed.statusCode === 200;

before(async () => {
  as = await TestAuthServer.start({ keys: [await signingKey('get-1')], scopes: SCOPES });
  front = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && req.headers['mcp-session-id'] !== undefined) {
      const proof = req.headers['dpop'];
      const nonce = typeof proof === 'string' && proof.includes('.') ? proofNonce(proof) : undefined;
      const n = gets.length;
      if (n === 0) {
        gets.push(`401 nonce asked (scheme ${String(req.headers.authorization).split(' ')[0]})`);
        res.writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${handlerMetadata()}", DPoP error="use_dpop_nonce", error_description="a nonce is required", algs="ES256"`,
          'dpop-nonce': 'nonce-1',
          'content-type': 'application/json',
        });
        res.end('{"error":"use_dpop_nonce"}');
        return;
      }
      if (n === 1) {
        gets.push(`401 token refused (nonce ${nonce ?? 'none'})`);
        res.writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${handlerMetadata()}", DPoP error="invalid_token", error_description="expired", algs="ES256"`,
          'content-type': 'application/json',
        });
        res.end('{"error":"invalid_token"}');
        return;
      }
      // Answered by Sluice, whose stream stays open: its status is read once the head is out.
      handed = res;
      gets.push('handed to the handler');
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(front.address() as AddressInfo).port}/mcp`;
  handler = createMcpHandler({
    createServer: testServerFactory(createProbe()),
    oauth: oauthResourceServer({ resource: url, authorizationServers: [as.issuer], scopes: SCOPES }),
  });
});

after(async () => {
  await handler?.close();
  await new Promise<void>((resolve) => {
    front?.closeAllConnections();
    front?.close(() => resolve());
  });
  await as?.stop();
});

function handlerMetadata(): string {
  const u = new URL(url);
  return `${u.origin}/.well-known/oauth-protected-resource${u.pathname}`;
}

/** The `nonce` claim of a DPoP proof (a JWT; read, not verified: the front only reports it). */
function proofNonce(proof: string): string | undefined {
  const payload = proof.split('.')[1] ?? '';
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { nonce?: unknown };
  return typeof claims.nonce === 'string' ? claims.nonce : undefined;
}

test('a standalone GET: 401 use_dpop_nonce, then 401 invalid_token: the nonce is taken, the client authorizes, the stream opens', async () => {
  const provider = new BrowserProvider();
  const transport = new StreamableHttpClientTransport(url, {
    authProvider: provider,
    waitForAuthorizationResponse: () => provider.response(),
  });
  const errors: unknown[] = [];
  transport.onerror = (e) => errors.push(e);
  const client = new Client({ name: 'get-auth', version: '1.0.0' });
  try {
    await withDeadline(client.connect(transport), 20_000, 'connecting through OAuth');
    assert.equal(provider.tokens()?.token_type.toLowerCase(), 'dpop', 'oidc-provider bound the token');
    await until(() => opened() || errors.length > 0, 20_000, 'the standalone GET settling').catch(
      (e: unknown) => {
        throw new Error(`${String(e)}; GETs: ${gets.join('; ')}; errors: ${errors.map(String).join('; ')}`);
      },
    );
    assert.deepEqual(errors, [], 'no error reached the transport');
    assert.deepEqual(gets.slice(0, 2), [
      '401 nonce asked (scheme DPoP)',
      '401 token refused (nonce nonce-1)',
    ]);
    assert.deepEqual(gets.slice(2), ['handed to the handler']);
    assert.ok(opened(), 'the handler opened the stream (200)');
    // The 401 after the nonce was answered with a fresh token (a refresh or a second authorization).
    assert.ok(provider.saved.length >= 2, `tokens saved: ${provider.saved.length}`);
  } finally {
    await client.close();
  }
});
