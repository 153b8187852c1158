/**
 * OAuth end to end, nothing scripted: Sluice's client ↔ a real authorization server (oidc-provider on
 * 127.0.0.1, test/helpers/auth-server.ts) ↔ Sluice's server with `oauthResourceServer`. The client
 * discovers the resource's metadata from the 401, the authorization server's from the metadata,
 * registers itself dynamically, runs the authorization-code flow with PKCE and the resource indicator
 * (the test is the user agent: test/helpers/headless-browser.ts follows oidc-provider's redirects and
 * cookies through login and consent), gets a JWT for exactly this resource, and calls tools — in both
 * protocol eras (a 2025-11-25 session through SDK v1's Client, the 2026-07-28 stateless wire through
 * SDK v2's), on the Node and the fetch binding, and behind nginx (skipped loudly without it); and a tool that
 * needs another scope: 403 `insufficient_scope`, a second authorization for the union, the call runs once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client as V2Client } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import {
  createMcpHandler,
  type McpHandler,
  oauthResourceServer,
  type Served,
  type ServeOptions,
  serve,
} from '../../src/server/index.js';
import { signingKey, TestAuthServer } from '../helpers/auth-server.js';
import { withDeadline } from '../helpers/deadline.js';
import { BrowserProvider, jwtClaims } from '../helpers/headless-browser.js';
import { findNginx, skipWithoutNginx, startUpstreamFirst } from '../helpers/nginx.js';
import { serveFetch } from '../helpers/serve-fetch.js';
import { createProbe, type Probe, testServerFactory } from '../helpers/test-server.js';

const SCOPES = ['mcp:tools'];
/** A scope only one tool needs (step-up). */
const ADMIN = 'mcp:admin';
const ERAS = ['2025-11-25', '2026-07-28'] as const;
type Era = (typeof ERAS)[number];
const DEADLINE_MS = 20_000;

let as: TestAuthServer;
before(async () => {
  as = await TestAuthServer.start({ keys: [await signingKey('e2e-1')], scopes: [...SCOPES, ADMIN] });
});
after(async () => {
  await as?.stop();
});

const textOf = (result: unknown): string =>
  ((result as { content?: { text?: string }[] }).content?.[0]?.text ?? '') as string;

interface Connected {
  call(
    name: string,
    args: Record<string, unknown>,
    onprogress?: (p: { progress: number }) => void,
  ): Promise<unknown>;
  era(): string;
  close(): Promise<void>;
}

/** Sluice's transport with the browser-driven provider, under SDK v1's Client (2025-11-25) or v2's (2026-07-28). */
async function connect(url: string, era: Era, provider: BrowserProvider): Promise<Connected> {
  const transport = new StreamableHttpClientTransport(url, {
    authProvider: provider,
    waitForAuthorizationResponse: () => provider.response(),
  });
  if (era === '2025-11-25') {
    const client = new V1Client({ name: 'sluice-e2e', version: '1.0.0' });
    await withDeadline(client.connect(transport), DEADLINE_MS, 'SDK v1 Client connecting through OAuth');
    return {
      call: (name, args, onprogress) =>
        client.callTool({ name, arguments: args }, undefined, onprogress === undefined ? {} : { onprogress }),
      era: () => (transport.sessionId === undefined ? 'stateless' : 'session'),
      close: () => client.close(),
    };
  }
  const client = new V2Client(
    { name: 'sluice-e2e', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  await withDeadline(client.connect(transport), DEADLINE_MS, 'SDK v2 Client connecting through OAuth');
  return {
    call: (name, args, onprogress) =>
      client.callTool({ name, arguments: args }, onprogress === undefined ? {} : { onprogress }),
    era: () => client.getProtocolEra() ?? 'none',
    close: () => client.close(),
  };
}

/** The whole flow against `url` (the resource), then a plain call and a streaming one. */
async function endToEnd(url: string, era: Era, probe: Probe): Promise<void> {
  const provider = new BrowserProvider();
  const c = await connect(url, era, provider);
  try {
    assert.equal(c.era(), era === '2025-11-25' ? 'session' : 'modern');
    assert.equal(textOf(await withDeadline(c.call('echo', { text: 'e2e' }), DEADLINE_MS, 'echo')), 'e2e');
    const seen: number[] = [];
    const result = await withDeadline(
      c.call('progress', { n: 5, delayMs: 20 }, (p) => seen.push(p.progress)),
      DEADLINE_MS,
      'progress',
    );
    assert.equal(textOf(result), 'done 5');
    assert.deepEqual(seen, [1, 2, 3, 4, 5]);
    assert.equal(probe.started.get('progress'), 1, 'the streaming call ran once');
  } finally {
    await c.close();
  }
  // One authorization for the whole session, by a client that registered itself.
  assert.equal(provider.authorizations, 1);
  const client = provider.clientInformation();
  assert.ok(client !== undefined && typeof client.client_id === 'string', 'dynamically registered');
  // What oidc-provider issued: a JWT for exactly this resource (RFC 8707), from this issuer, for the
  // user who logged in, with the scope the resource's metadata advertised, and a refresh token.
  const tokens = provider.tokens();
  assert.ok(tokens !== undefined);
  assert.equal(typeof tokens.refresh_token, 'string');
  const claims = jwtClaims(tokens.access_token);
  // oidc-provider offers DPoP (RFC 9449) and the client takes it: the token is bound to the client's key,
  // and the server refuses it without a proof (§7.2), so a copy of the token alone is worth nothing.
  assert.equal(tokens.token_type.toLowerCase(), 'dpop');
  assert.equal(typeof (claims['cnf'] as { jkt?: unknown } | undefined)?.jkt, 'string');
  const stolen = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${tokens.access_token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  assert.equal(stolen.status, 401);
  assert.equal(
    ((await stolen.json()) as { error: { data: { reason: string } } }).error.data.reason,
    'token-dpop',
  );
  assert.equal(claims['iss'], as.issuer);
  assert.equal(claims['aud'], url);
  assert.equal(claims['sub'], 'alice');
  assert.equal(claims['client_id'], client.client_id);
  assert.deepEqual(
    String(claims['scope']).split(' ').sort(),
    SCOPES,
    'what the challenge asked for, no more',
  );
  // The authorization request carried the resource byte for byte and PKCE S256; no token in any URL.
  const authorize = new URL(provider.browser.visited[0] ?? '/', as.issuer);
  assert.equal(authorize.searchParams.get('resource'), url);
  assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
  for (const visited of provider.browser.visited) {
    assert.ok(!visited.includes(tokens.access_token) && !visited.includes(tokens.refresh_token ?? '\0'));
  }
}

for (const binding of ['node', 'fetch'] as const) {
  describe(`OAuth end to end, ${binding} binding`, () => {
    let served: Served;
    let probe: Probe;
    before(async () => {
      probe = createProbe();
      const options: ServeOptions = {
        createServer: testServerFactory(probe),
        port: 0,
        oauth: (endpoint) =>
          oauthResourceServer({ resource: endpoint, authorizationServers: [as.issuer], scopes: SCOPES }),
      };
      served = binding === 'node' ? await serve(options) : await serveFetch(options);
    });
    after(async () => {
      await served?.close();
    });

    for (const era of ERAS) {
      test(`${era}: discovery, registration, authorization code with PKCE, a JWT for this resource, calls`, async () => {
        probe.started.clear();
        await endToEnd(served.url, era, probe);
      });
    }
  });
}

describe('OAuth end to end, step-up for a tool that needs another scope', () => {
  let served: Served;
  let probe: Probe;
  before(async () => {
    probe = createProbe();
    served = await serve({
      createServer: testServerFactory(probe),
      port: 0,
      oauth: (endpoint) =>
        oauthResourceServer({
          resource: endpoint,
          authorizationServers: [as.issuer],
          scopes: SCOPES,
          toolScopes: { progress: [ADMIN] },
        }),
    });
  });
  after(async () => {
    await served?.close();
  });

  for (const era of ERAS) {
    test(`${era}: 403 insufficient_scope, the user consents to the extra scope, the call runs once`, async () => {
      probe.started.clear();
      const provider = new BrowserProvider();
      const c = await connect(served.url, era, provider);
      try {
        assert.equal(
          textOf(await withDeadline(c.call('echo', { text: 'plain' }), DEADLINE_MS, 'echo')),
          'plain',
        );
        assert.equal(provider.authorizations, 1);
        assert.ok(!String(jwtClaims(provider.tokens()?.access_token ?? '')['scope']).includes(ADMIN));
        const seen: number[] = [];
        const result = await withDeadline(
          c.call('progress', { n: 3, delayMs: 10 }, (p) => seen.push(p.progress)),
          DEADLINE_MS,
          'the admin tool',
        );
        assert.equal(textOf(result), 'done 3');
        assert.deepEqual(seen, [1, 2, 3]);
      } finally {
        await c.close();
      }
      assert.equal(provider.authorizations, 2, 'one step-up');
      const scopes = String(jwtClaims(provider.tokens()?.access_token ?? '')['scope'])
        .split(' ')
        .sort();
      assert.deepEqual(scopes, [ADMIN, ...SCOPES].sort());
      assert.equal(probe.started.get('progress'), 1, 'refused before it ran, then ran once');
      // The second authorization asked for the union (SEP-2350), and the user consented once more.
      const second = provider.browser.visited.filter((v) => v.startsWith('/auth?'))[1] ?? '';
      assert.deepEqual(
        new URL(second, as.issuer).searchParams
          .get('scope')
          ?.split(' ')
          .filter((s) => s.startsWith('mcp:'))
          .sort(),
        [ADMIN, ...SCOPES].sort(),
      );
    });
  }
});

describe('OAuth end to end through nginx', () => {
  const closers: (() => Promise<unknown>)[] = [];
  let resource = '';
  let probe: Probe;
  before(async () => {
    if (findNginx() === undefined) return; // each test then skips loudly
    // The upstream listens first; the handler is attached once nginx (and so the public URL) exists.
    const { upstream, nginx } = await startUpstreamFirst(closers);
    resource = `${nginx.origin}/mcp`;
    probe = createProbe();
    const handler: McpHandler = createMcpHandler({
      createServer: testServerFactory(probe),
      oauth: oauthResourceServer({ resource, authorizationServers: [as.issuer], scopes: SCOPES }),
    });
    closers.push(() => handler.close());
    upstream.on('request', handler);
  });
  after(async () => {
    for (const c of closers.reverse()) await c();
  });

  for (const era of ERAS) {
    test(`${era}: the public URL is the resource; the flow and a streaming call go through the proxy`, async (t) => {
      if (skipWithoutNginx(t)) return;
      probe.started.clear();
      await endToEnd(resource, era, probe);
    });
  }
});
