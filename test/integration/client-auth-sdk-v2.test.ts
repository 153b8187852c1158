/**
 * Sluice's transport as the drop-in for SDK v2's `StreamableHTTPClientTransport`, authorization included: it takes
 * the providers v2's transport takes — v2's `OAuthClientProvider` (here its `ClientCredentialsProvider`) and v2's
 * minimal `AuthProvider` (`token()`, `onUnauthorized()`) — under v2's `Client`, in both eras, against Sluice's
 * resource server with oidc-provider as the authorization server. (That these types are accepted is checked by
 * this file compiling.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type AuthProvider,
  ClientCredentialsProvider,
  type OAuthClientProvider,
  Client as V2Client,
} from '@modelcontextprotocol/client';
import {
  InvalidOptionError,
  StreamableHttpClientTransport,
  UnauthorizedError,
} from '../../src/client/index.js';
import type { Served } from '../../src/server/index.js';
import { TEST_CLIENT, type TestAuthServer } from '../helpers/auth-server.js';
import { withDeadline } from '../helpers/deadline.js';
import { type OAuthServed, startOAuthServed } from '../helpers/oauth-served.js';
import type { Probe } from '../helpers/test-server.js';

const SCOPES = ['mcp:tools'];
type UnauthorizedContext = Parameters<NonNullable<AuthProvider['onUnauthorized']>>[0];
const ERAS = ['legacy', 'modern'] as const;

const textOf = (result: unknown): string =>
  ((result as { content?: { text?: string }[] }).content?.[0]?.text ?? '') as string;

describe('SDK v2 auth providers on the drop-in transport', () => {
  let fixture: OAuthServed | undefined;
  let as: TestAuthServer;
  let served: Served;
  let probe: Probe;
  before(async () => {
    fixture = await startOAuthServed('v2-providers', SCOPES);
    ({ as, served, probe } = fixture);
  });
  after(async () => {
    await fixture?.stop();
  });

  async function connect(
    era: (typeof ERAS)[number],
    authProvider: AuthProvider | OAuthClientProvider,
  ): Promise<{ client: V2Client; transport: StreamableHttpClientTransport }> {
    const client = new V2Client(
      { name: 'sluice-v2-providers', version: '1.0.0' },
      era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {},
    );
    const transport = new StreamableHttpClientTransport(served.url, { authProvider });
    await withDeadline(client.connect(transport), 20_000, `connect (${era})`);
    assert.equal(client.getProtocolEra(), era);
    return { client, transport };
  }

  for (const era of ERAS) {
    test(`${era}: v2's ClientCredentialsProvider (an OAuthClientProvider) authorizes by itself`, async () => {
      const provider = new ClientCredentialsProvider({
        clientId: TEST_CLIENT.client_id,
        clientSecret: TEST_CLIENT.client_secret,
        expectedIssuer: as.issuer,
        scope: SCOPES.join(' '),
      });
      const { client } = await connect(era, provider);
      try {
        assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { text: 'cc' } })), 'cc');
        assert.equal(typeof (await provider.tokens())?.access_token, 'string');
      } finally {
        await client.close();
      }
    });

    test(`${era}: v2's minimal AuthProvider: token() per request, one onUnauthorized for many 401s`, async () => {
      let current: string | undefined;
      const contexts: UnauthorizedContext[] = [];
      const provider: AuthProvider = {
        token: async () => current,
        onUnauthorized: async (ctx) => {
          contexts.push(ctx);
          current = await as.token(served.url, SCOPES.join(' '));
        },
      };
      const { client } = await connect(era, provider);
      try {
        // The first request had no token: one 401, one onUnauthorized, then it went again.
        assert.equal(contexts.length, 1);
        const first = contexts[0];
        assert.equal(first?.response.status, 401);
        assert.match(first?.response.headers.get('www-authenticate') ?? '', /resource_metadata=/);
        assert.equal(first?.serverUrl.href, served.url);
        assert.equal(typeof first?.fetchFn, 'function');
        // The token goes bad: six calls at once meet 401, one onUnauthorized renews it, each call runs once.
        current = 'not-a-token';
        probe.finished.length = 0;
        const texts = await withDeadline(
          Promise.all(
            Array.from({ length: 6 }, (_, i) =>
              client.callTool({ name: 'echo', arguments: { text: `c${i}` } }),
            ),
          ),
          20_000,
          'six calls',
        );
        assert.deepEqual(texts.map(textOf), ['c0', 'c1', 'c2', 'c3', 'c4', 'c5']);
        assert.equal(contexts.length, 2, 'one onUnauthorized for the six');
        assert.equal(probe.finished.filter((l) => l.startsWith('echo:c')).length, 6, 'each call ran once');
      } finally {
        await client.close();
      }
    });
  }

  test('a minimal AuthProvider without onUnauthorized: the 401 is an UnauthorizedError', async () => {
    const transport = new StreamableHttpClientTransport(served.url, {
      authProvider: { token: async () => 'not-a-token' },
    });
    const client = new V2Client({ name: 'sluice-v2-providers', version: '1.0.0' });
    await assert.rejects(
      withDeadline(client.connect(transport), 20_000, 'connect'),
      (error: unknown) =>
        error instanceof UnauthorizedError &&
        error.reason === 'no-auth-provider' &&
        (error.wwwAuthenticate ?? '').includes('invalid_token'),
    );
    await assert.rejects(transport.finishAuth('code'), InvalidOptionError);
    await client.close();
  });

  test('an authProvider that is neither kind is refused when the transport is built', () => {
    assert.throws(
      () => new StreamableHttpClientTransport(served.url, { authProvider: {} as unknown as AuthProvider }),
      InvalidOptionError,
    );
  });
});
