// SDK v2's minimal AuthProvider on Sluice's transport (src/client/auth/token-provider.ts): one onUnauthorized for
// many 401s that arrive together, none when the token already changed, the typed refusals, and which providers
// count as one (the OAuth ones have tokens(), the minimal one token()).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isTokenAuthProvider, TokenProviderAuth } from '../../src/client/auth/token-provider.js';
import { ForbiddenError, UnauthorizedError } from '../../src/client/index.js';

const serverUrl = new URL('http://127.0.0.1:1/mcp');
const noFetch = (): Promise<Response> => Promise.reject(new Error('no network here'));

describe('TokenProviderAuth', () => {
  test('401s that arrive together run one onUnauthorized; later ones see the new token and just go again', async () => {
    let token = 'old';
    let renewals = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const auth = new TokenProviderAuth({
      provider: {
        token: async () => token,
        onUnauthorized: async (ctx) => {
          renewals++;
          assert.equal(ctx.response.status, 401);
          assert.equal(ctx.response.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
          assert.equal(ctx.serverUrl.href, serverUrl.href);
          await gate;
          token = 'new';
        },
      },
      serverUrl,
      fetch: noFetch,
    });
    assert.equal(await auth.authorization(), 'Bearer old');
    const together = Array.from({ length: 5 }, () =>
      auth.challenged('POST', 401, undefined, 'old', 'Bearer error="invalid_token"'),
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    await Promise.all(together);
    assert.equal(renewals, 1);
    // A 401 for a request sent with the old token, arriving after the renewal: no second one.
    await auth.challenged('POST', 401, undefined, 'old', undefined);
    assert.equal(renewals, 1);
    assert.equal(await auth.authorization(), 'Bearer new');
  });

  test('without onUnauthorized a 401 is UnauthorizedError; a 403 is ForbiddenError; finish is refused', async () => {
    const auth = new TokenProviderAuth({ provider: { token: async () => 't' }, serverUrl, fetch: noFetch });
    await assert.rejects(
      auth.challenged('POST', 401, undefined, 't', 'Bearer'),
      (e: unknown) =>
        e instanceof UnauthorizedError && e.reason === 'no-auth-provider' && e.wwwAuthenticate === 'Bearer',
    );
    await assert.rejects(auth.challenged('POST', 403, undefined, 't', undefined), ForbiddenError);
    await assert.rejects(auth.finish(), /OAuthClientProvider/);
    const none = new TokenProviderAuth({
      provider: { token: async () => undefined },
      serverUrl,
      fetch: noFetch,
    });
    assert.equal(await none.authorization(), undefined);
  });

  test('which providers are the minimal kind', () => {
    assert.equal(isTokenAuthProvider({ token: async () => 'x' }), true);
    assert.equal(isTokenAuthProvider({ tokens: () => undefined, token: async () => 'x' }), false);
    assert.equal(isTokenAuthProvider({ tokens: () => undefined }), false);
  });
});
