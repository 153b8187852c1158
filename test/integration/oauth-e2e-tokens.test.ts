/**
 * Tokens that stop working while a session lives, end to end (Sluice's client ↔ oidc-provider ↔
 * Sluice's server, 2025-11-25 sessions, where streams resume):
 * - a 60 s streaming call whose 10 s access tokens expire under it: the server ends the stream when
 *   the token does (`expiresAt`), the client refreshes and resumes with Last-Event-ID, and every
 *   progress value arrives once, the result once, the tool ran once;
 * - a token revoked at the authorization server (the server asks it by RFC 7662 introspection): the
 *   next request is refused 401, the client re-authorizes and re-sends it, and it runs once; revoked in
 *   the middle of a stream, the stream ends, and the resume after re-authorizing loses nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { oauthResourceServer, type Served, serve } from '../../src/server/index.js';
import { RS_CLIENT, signingKey, TestAuthServer } from '../helpers/auth-server.js';
import { withDeadline } from '../helpers/deadline.js';
import { BrowserProvider } from '../helpers/headless-browser.js';
import { createProbe, type Probe, testServerFactory } from '../helpers/test-server.js';

const SCOPES = ['mcp:tools'];

/**
 * What the client sent to the MCP endpoint and got, in order: `METHOD status`, plus `resume` when it
 * carried Last-Event-ID. (The authorization server's requests go through the same fetch; not logged.)
 */
function recordingFetch(log: string[], endpoint: () => string): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    if (url !== endpoint()) return res;
    const headers = new Headers(init?.headers);
    log.push(`${init?.method ?? 'GET'} ${res.status}${headers.has('last-event-id') ? ' resume' : ''}`);
    return res;
  };
}

const textOf = (result: unknown): string =>
  ((result as { content?: { text?: string }[] }).content?.[0]?.text ?? '') as string;

interface Setup {
  as: TestAuthServer;
  served: Served;
  probe: Probe;
}

async function start(
  asOptions: Partial<Parameters<typeof TestAuthServer.start>[0]>,
  verify: 'jwt' | 'introspection',
): Promise<Setup> {
  const as = await TestAuthServer.start({
    keys: [await signingKey('tokens-1')],
    scopes: SCOPES,
    ...asOptions,
  });
  const probe = createProbe();
  const served = await serve({
    createServer: testServerFactory(probe),
    port: 0,
    // Open streams re-check their token this often: a revoked one ends them.
    revalidateMs: 200,
    oauth: (endpoint) =>
      oauthResourceServer({
        resource: endpoint,
        authorizationServers: [as.issuer],
        scopes: SCOPES,
        ...(verify === 'introspection'
          ? {
              verify: 'introspection' as const,
              // cacheTtlMs 0: every request asks, so a revocation counts at once.
              introspection: {
                ...{ clientId: RS_CLIENT.client_id, clientSecret: RS_CLIENT.client_secret },
                cacheTtlMs: 0,
              },
            }
          : {}),
      }),
  });
  return { as, served, probe };
}

async function connect(
  s: Setup,
  provider: BrowserProvider,
  log: string[],
): Promise<{ client: Client; transport: StreamableHttpClientTransport }> {
  const transport = new StreamableHttpClientTransport(s.served.url, {
    authProvider: provider,
    waitForAuthorizationResponse: () => provider.response(),
    fetch: recordingFetch(log, () => s.served.url),
  });
  const client = new Client({ name: 'sluice-e2e-tokens', version: '1.0.0' });
  await withDeadline(client.connect(transport), 20_000, 'connect through OAuth');
  return { client, transport };
}

/** RFC 7009 revocation of the client's current access token, by the client that holds it. */
async function revokeAccessToken(as: TestAuthServer, provider: BrowserProvider): Promise<void> {
  const info = provider.clientInformation();
  const token = provider.tokens()?.access_token;
  assert.ok(info !== undefined && token !== undefined);
  const secret = (info as { client_secret?: string }).client_secret;
  const form = new URLSearchParams({ token, token_type_hint: 'access_token' });
  if (secret === undefined) form.set('client_id', info.client_id);
  const res = await fetch(`${as.issuer}/token/revocation`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(secret === undefined ? {} : { authorization: `Basic ${btoa(`${info.client_id}:${secret}`)}` }),
    },
    body: form,
    signal: AbortSignal.timeout(5000),
  });
  assert.equal(res.status, 200, await res.text());
}

describe('a 60 s streaming call across access-token expiry', () => {
  let s: Setup;
  before(async () => {
    s = await start({ accessTokenTtlS: 10 }, 'jwt');
  });
  after(async () => {
    await s?.served.close();
    await s?.as.stop();
  });

  test('10 s tokens: the stream ends with each, the client refreshes and resumes; every value once', async () => {
    const provider = new BrowserProvider();
    const log: string[] = [];
    const { client } = await connect(s, provider, log);
    try {
      const seen: number[] = [];
      const result = await withDeadline(
        client.callTool({ name: 'progress', arguments: { n: 60, delayMs: 1000 } }, undefined, {
          onprogress: (p) => seen.push(p.progress),
          timeout: 120_000,
        }),
        120_000,
        'the 60 s call',
      );
      assert.equal(textOf(result), 'done 60');
      assert.deepEqual(
        seen,
        Array.from({ length: 60 }, (_, i) => i + 1),
      );
      assert.equal(s.probe.started.get('progress'), 1, 'the tool ran once');
      assert.deepEqual(s.probe.finished, ['progress:60']);
      // One login; after it only refreshes (a 10 s token, renewed at least every 10 s of the minute).
      assert.equal(provider.authorizations, 1);
      assert.ok(
        provider.saved.length >= 6,
        `${provider.saved.length} token sets: expected the login and 5+ refreshes`,
      );
      // The stream was cut when each token expired and resumed by GET with Last-Event-ID, never refused.
      const resumes = log.filter((l) => l === 'GET 200 resume').length;
      assert.ok(resumes >= 4, `resumes: ${log.join(', ')}`);
      assert.ok(
        !log.some((l) => l.startsWith('GET 401')),
        `no resume met an expired token: ${log.join(', ')}`,
      );
    } finally {
      await client.close();
    }
  });
});

describe('a token revoked at the authorization server (introspection)', () => {
  let s: Setup;
  before(async () => {
    s = await start({ accessTokenFormat: 'opaque' }, 'introspection');
  });
  after(async () => {
    await s?.served.close();
    await s?.as.stop();
  });

  test('the next request gets 401, the client re-authorizes and re-sends it; it runs once', async () => {
    const provider = new BrowserProvider();
    const log: string[] = [];
    const { client, transport } = await connect(s, provider, log);
    try {
      assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { text: 'before' } })), 'before');
      const session = transport.sessionId;
      const revoked = provider.tokens()?.access_token;
      await revokeAccessToken(s.as, provider);
      const from = log.length;
      assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after' } })), 'after');
      assert.deepEqual(
        log
          .slice(from)
          .filter((l) => l.startsWith('POST'))
          .slice(0, 2),
        ['POST 401', 'POST 200'],
      );
      assert.notEqual(provider.tokens()?.access_token, revoked, 'a new token');
      assert.equal(transport.sessionId, session, 'the same session: the principal did not change');
      assert.deepEqual(
        s.probe.finished.filter((l) => l.startsWith('echo')),
        ['echo:before', 'echo:after'],
        'each call ran once',
      );
    } finally {
      await client.close();
    }
  });

  test('revoked during a stream: the stream ends, the resume re-authorizes; every value once', async () => {
    s.probe.started.clear();
    const provider = new BrowserProvider();
    const log: string[] = [];
    const { client } = await connect(s, provider, log);
    try {
      const seen: number[] = [];
      let revoking: Promise<void> | undefined;
      const result = await withDeadline(
        client.callTool({ name: 'progress', arguments: { n: 20, delayMs: 100 } }, undefined, {
          onprogress: (p) => {
            seen.push(p.progress);
            if (p.progress === 5) revoking = revokeAccessToken(s.as, provider);
          },
        }),
        30_000,
        'the streaming call',
      );
      await revoking;
      assert.equal(textOf(result), 'done 20');
      assert.deepEqual(
        seen,
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      assert.equal(s.probe.started.get('progress'), 1, 'resumed, not re-sent');
      assert.ok(log.includes('GET 401 resume'), `the resume met the revoked token: ${log.join(', ')}`);
      assert.ok(log.includes('GET 200 resume'), `and resumed after re-authorizing: ${log.join(', ')}`);
    } finally {
      await client.close();
    }
  });
});
