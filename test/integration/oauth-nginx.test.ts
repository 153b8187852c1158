/**
 * The resource server behind a real nginx: the public URL (nginx's) is the resource, the metadata
 * is served through the proxy by createMcpHandler itself, and the official SDK v1 client discovers,
 * authorizes against oidc-provider and calls a streaming tool through nginx. Skipped loudly without
 * nginx.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createMcpHandler, oauthResourceServer } from '../../src/server/index.js';
import { signingKey, TEST_CLIENT, TestAuthServer } from '../helpers/auth-server.js';
import { withDeadline } from '../helpers/deadline.js';
import { send } from '../helpers/http.js';
import { skipWithoutNginx, startUpstreamFirst } from '../helpers/nginx.js';
import { createProbe, testServerFactory } from '../helpers/test-server.js';

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of closers.reverse()) await c();
});

test('through nginx: metadata, discovery, token and a streaming call with the public URL as the resource', async (t) => {
  if (skipWithoutNginx(t)) return;
  const as = await TestAuthServer.start({ keys: [await signingKey('k1')], scopes: ['mcp:read'] });
  closers.push(() => as.stop());
  // The upstream listens first; the handler is attached once nginx (and so the public URL) exists.
  const { upstream, nginx } = await startUpstreamFirst(closers);
  const resource = `${nginx.origin}/mcp`;
  const oauth = oauthResourceServer({ resource, authorizationServers: [as.issuer], scopes: ['mcp:read'] });
  const handler = createMcpHandler({ createServer: testServerFactory(createProbe()), oauth });
  closers.push(async () => {
    await handler.close();
  });
  upstream.on('request', handler);

  const prm = await send(`${nginx.origin}/.well-known/oauth-protected-resource/mcp`);
  assert.equal(prm.status, 200, prm.text);
  assert.equal(prm.json().resource, resource);
  const refused = await send(resource, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: '{}',
  });
  assert.equal(refused.status, 401);
  assert.match(
    String(refused.headers['www-authenticate']),
    new RegExp(`resource_metadata="${nginx.origin}/.well-known/oauth-protected-resource/mcp"`),
  );

  const client = new Client({ name: 'sdk-v1-nginx', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(resource), {
    authProvider: new ClientCredentialsProvider({
      clientId: TEST_CLIENT.client_id,
      clientSecret: TEST_CLIENT.client_secret,
      expectedIssuer: as.issuer,
      scope: 'mcp:read',
    }),
  });
  await withDeadline(client.connect(transport), 10_000, 'SDK connect through nginx and OAuth');
  const progress: number[] = [];
  const r = await withDeadline(
    client.callTool({ name: 'progress', arguments: { n: 5, delayMs: 20 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    }),
    10_000,
    'streaming call through nginx',
  );
  assert.ok(Array.isArray(r.content));
  assert.deepEqual(progress, [1, 2, 3, 4, 5]);
  await transport.terminateSession();
  await client.close();
});
