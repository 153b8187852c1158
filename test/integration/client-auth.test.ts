// OAuth in the client transport (src/client/auth/) against a scripted authorization server and a Sluice resource
// server on 127.0.0.1 (test/helpers/oauth-fixture.ts): what only the transport can do — one flow for many 401s,
// the re-send after it, refresh before expiry, a stream that resumes after re-authorizing without losing or
// repeating an event, bounded step-up — and the typed refusals.
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  AuthorizationError,
  type StreamableHttpClientOptions,
  StreamableHttpClientTransport,
  UnauthorizedError,
} from '../../src/client/index.js';
import { withDeadline } from '../helpers/deadline.js';
import {
  HeadlessProvider,
  type ResourceServer,
  type ScriptedAs,
  startAs,
  startResource,
} from '../helpers/oauth-fixture.js';

const open: { as: ScriptedAs; rs: ResourceServer; clients: Client[] }[] = [];

async function setUp(
  asOptions: Parameters<typeof startAs>[0] = {},
  resource?: string,
): Promise<{ as: ScriptedAs; rs: ResourceServer; clients: Client[] }> {
  const as = await startAs(asOptions);
  const rs = await startResource(as, resource);
  const fixture = { as, rs, clients: [] as Client[] };
  open.push(fixture);
  return fixture;
}

function connect(
  fixture: { rs: ResourceServer; clients: Client[] },
  provider: HeadlessProvider,
  options: StreamableHttpClientOptions = {},
): { client: Client; transport: StreamableHttpClientTransport; ready: Promise<void> } {
  const client = new Client({ name: 'auth-test', version: '1.0.0' });
  const transport = new StreamableHttpClientTransport(fixture.rs.url, {
    authProvider: provider,
    waitForAuthorizationResponse: () => provider.response(),
    ...options,
  });
  fixture.clients.push(client);
  return { client, transport, ready: client.connect(transport) };
}

const text = (result: unknown): string =>
  ((result as { content: { text: string }[] }).content[0] ?? { text: '' }).text;

afterEach(async () => {
  for (const { as, rs, clients } of open.splice(0)) {
    for (const c of clients) await c.close().catch(() => undefined);
    // No token ever travels in a URL, to either server.
    for (const secret of as.secrets) {
      assert.ok(!as.urls.some((u) => u.includes(secret)), 'a token in an authorization server URL');
      assert.ok(!rs.urls.some((u) => u.includes(secret)), 'a token in a resource server URL');
    }
    await rs.close();
    await as.close();
  }
});

describe('client OAuth', () => {
  test('the first request authorizes (discovery, registration, PKCE, resource) and is re-sent once', async () => {
    const f = await setUp();
    const provider = new HeadlessProvider();
    const { client, ready } = connect(f, provider);
    await withDeadline(ready, 10_000, 'connect');
    assert.equal(text(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })), 'hi');
    assert.equal(f.as.registrations, 1);
    assert.deepEqual(f.as.authorizations, ['read']);
    // RFC 8707: the metadata's identifier byte for byte, in both requests.
    assert.deepEqual(f.as.resources, [f.rs.url]);
    assert.deepEqual(
      f.as.tokenCalls.map((c) => [c.grant, c.resource]),
      [['authorization_code', f.rs.url]],
    );
    assert.equal(f.rs.statuses.filter((s) => s === 401).length, 1, 'one 401, then the token');
  });

  test('many requests hitting 401 together run one flow, and each runs once', async () => {
    const f = await setUp({ refresh: false });
    const provider = new HeadlessProvider();
    const { client, ready } = connect(f, provider);
    await withDeadline(ready, 10_000, 'connect');
    f.as.revokeAll();
    const results = await withDeadline(
      Promise.all(
        Array.from({ length: 6 }, (_, i) => client.callTool({ name: 'echo', arguments: { text: `m${i}` } })),
      ),
      15_000,
      'six calls',
    );
    assert.deepEqual(results.map(text), ['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
    assert.equal(f.as.authorizations.length, 2, 'one flow at connect, one for the six');
    assert.equal(f.rs.probe.finished.filter((l) => l.startsWith('echo:')).length, 6, 'each call ran once');
  });

  test('a token about to expire is refreshed before the request goes out', async () => {
    const f = await setUp({ expiresIn: 3600, refresh: true });
    const provider = new HeadlessProvider();
    let skew = 0;
    const clock = {
      now: () => Date.now() + skew,
      setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
      clearTimeout: (h: unknown) => clearTimeout(h as NodeJS.Timeout),
    };
    const { client, ready } = connect(f, provider, { clock });
    await withDeadline(ready, 10_000, 'connect');
    const before = provider.stored?.access_token;
    const unauthorized = f.rs.statuses.filter((s) => s === 401).length;
    skew = 3590 * 1000;
    await client.callTool({ name: 'echo', arguments: { text: 'late' } });
    assert.deepEqual(
      f.as.tokenCalls.map((c) => c.grant),
      ['authorization_code', 'refresh_token'],
    );
    assert.equal(f.as.tokenCalls[1]?.resource, f.rs.url);
    assert.notEqual(provider.stored?.access_token, before);
    assert.equal(f.rs.statuses.filter((s) => s === 401).length, unauthorized, 'no 401: refreshed in time');
  });

  test('a stream whose token is revoked re-authorizes and resumes: every progress value once', async () => {
    const f = await setUp({ refresh: false });
    const provider = new HeadlessProvider();
    const { client, ready } = connect(f, provider);
    await withDeadline(ready, 10_000, 'connect');
    const seen: number[] = [];
    let revoked = false;
    const result = await withDeadline(
      client.callTool({ name: 'progress', arguments: { n: 30, delayMs: 40 } }, undefined, {
        onprogress: (p) => {
          seen.push(p.progress);
          if (p.progress === 5 && !revoked) {
            revoked = true;
            f.as.revokeAll();
          }
        },
        timeout: 30_000,
      }),
      30_000,
      'progress call',
    );
    assert.equal(text(result), 'done 30');
    assert.deepEqual(
      seen,
      Array.from({ length: 30 }, (_, i) => i + 1),
    );
    assert.ok(f.as.authorizations.length >= 2, 're-authorized after the revocation');
    assert.ok(
      f.rs.answers.includes('GET 401'),
      `a resuming GET met the revoked token: ${f.rs.answers.join(', ')}`,
    );
    assert.equal(f.rs.probe.started.get('progress'), 1, 'the tool ran once (resumed, not re-sent)');
  });

  test('403 insufficient_scope steps up with the union of scopes', async () => {
    const f = await setUp();
    f.rs.toolScopes = ['write'];
    const provider = new HeadlessProvider();
    const { client, ready } = connect(f, provider);
    await withDeadline(ready, 10_000, 'connect');
    assert.equal(text(await client.callTool({ name: 'echo', arguments: { text: 'w' } })), 'w');
    assert.deepEqual(f.as.authorizations, ['read', 'read write']);
  });

  test('step-up is bounded: a scope never granted ends in AuthorizationError step-up-exhausted', async () => {
    const f = await setUp();
    f.rs.toolScopes = ['admin'];
    const provider = new HeadlessProvider();
    const { client, ready } = connect(f, provider);
    await withDeadline(ready, 10_000, 'connect');
    await assert.rejects(
      client.callTool({ name: 'echo', arguments: { text: 'x' } }),
      (error: unknown) => error instanceof AuthorizationError && error.reason === 'step-up-exhausted',
    );
    assert.equal(f.as.authorizations.length, 3, 'the first authorization and two step-ups');
    assert.equal(f.rs.probe.started.get('echo'), undefined);
  });

  test('metadata for another resource is refused before any authorization', async () => {
    const f = await setUp({}, 'https://elsewhere.example/mcp');
    const provider = new HeadlessProvider();
    const { ready } = connect(f, provider);
    await assert.rejects(
      withDeadline(ready, 10_000, 'connect'),
      (error: unknown) => error instanceof AuthorizationError && error.reason === 'resource-mismatch',
    );
    assert.deepEqual(f.as.authorizations, []);
    assert.equal(f.as.registrations, 0);
  });

  test('without waitForAuthorizationResponse: UnauthorizedError authorization-required, then finishAuth', async () => {
    const f = await setUp();
    const provider = new HeadlessProvider();
    const first = new StreamableHttpClientTransport(f.rs.url, { authProvider: provider });
    const client = new Client({ name: 'auth-test', version: '1.0.0' });
    await assert.rejects(
      client.connect(first),
      (error: unknown) => error instanceof UnauthorizedError && error.reason === 'authorization-required',
    );
    await first.finishAuth(await provider.response());
    await client.close();
    const again = new Client({ name: 'auth-test', version: '1.0.0' });
    f.clients.push(again);
    await again.connect(new StreamableHttpClientTransport(f.rs.url, { authProvider: provider }));
    assert.equal(text(await again.callTool({ name: 'echo', arguments: { text: 'ok' } })), 'ok');
    assert.equal(f.as.authorizations.length, 1);
  });

  test('no provider: 401 surfaces as UnauthorizedError no-auth-provider with the challenge', async () => {
    const f = await setUp();
    const client = new Client({ name: 'auth-test', version: '1.0.0' });
    f.clients.push(client);
    await assert.rejects(
      client.connect(new StreamableHttpClientTransport(f.rs.url)),
      (error: unknown) =>
        error instanceof UnauthorizedError &&
        error.reason === 'no-auth-provider' &&
        error.wwwAuthenticate?.includes('resource_metadata') === true,
    );
  });
});
