// The transport's OAuth client (src/client/auth/session.ts) against an in-memory authorization server: a `fetch`
// that answers from a table, so no socket is opened. What is checked here is the single-flight logic around
// `challenged` (which 401/403 starts a flow, which one just goes again) and that hostile metadata fails typed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { discoverServer } from '../../src/client/auth/metadata.js';
import { OAuthHttp } from '../../src/client/auth/oauth-http.js';
import { OAuthSession } from '../../src/client/auth/session.js';
import { registerClient } from '../../src/client/auth/token.js';
import { OAuthUrlPolicy } from '../../src/client/auth/url-policy.js';
import { AuthorizationError, UnauthorizedError } from '../../src/client/index.js';

const RS = 'https://rs.example/mcp';
const AS = 'https://as.example';

const json = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** An authorization server and resource metadata in a table; `refresh` decides the refresh grant's answer. */
class World {
  readonly urls: string[] = [];
  refreshOk = true;
  issued = 0;
  fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    this.urls.push(url.href);
    if (url.href === 'https://rs.example/.well-known/oauth-protected-resource/mcp') {
      return json({ resource: RS, authorization_servers: [AS], scopes_supported: ['read'] });
    }
    if (url.href === `${AS}/.well-known/oauth-authorization-server`) {
      return json({
        issuer: AS,
        authorization_endpoint: `${AS}/authorize`,
        token_endpoint: `${AS}/token`,
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (url.href === `${AS}/token`) {
      const form = new URLSearchParams(String(init?.body));
      if (form.get('grant_type') === 'refresh_token' && !this.refreshOk) {
        return json({ error: 'invalid_grant' }, 400);
      }
      this.issued++;
      return json({
        access_token: `at-${this.issued}`,
        token_type: 'Bearer',
        expires_in: 100,
        refresh_token: `rt-${this.issued}`,
      });
    }
    return new Response('', { status: 404 });
  };
}

class Provider implements OAuthClientProvider {
  stored: OAuthTokens | undefined;
  redirects = 0;
  #verifier = '';
  readonly redirectUrl = 'http://127.0.0.1:1/callback';
  readonly clientMetadata = { client_name: 't', redirect_uris: ['http://127.0.0.1:1/callback'] };
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: 'pre-registered' };
  }
  tokens(): OAuthTokens | undefined {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.stored = tokens;
  }
  saveCodeVerifier(v: string): void {
    this.#verifier = v;
  }
  codeVerifier(): string {
    return this.#verifier;
  }
  readonly sentTo: URL[] = [];
  redirectToAuthorization(url: URL): void {
    this.redirects++;
    this.sentTo.push(url);
  }
}

function session(world: World, provider: Provider, clock: { t: number }): OAuthSession {
  return new OAuthSession({
    provider,
    serverUrl: new URL(RS),
    fetch: (input, init) => world.fetch(input, init),
    clock: {
      now: () => clock.t,
      setTimeout: (fn, ms) => setTimeout(fn, ms),
      clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    },
    waitForAuthorizationResponse: undefined,
    dpop: false,
    insecureUrls: false,
    silenceMs: 2_000,
  });
}

const authorizationRequired = (error: unknown): boolean =>
  error instanceof UnauthorizedError && error.reason === 'authorization-required';

/** A session holding a token (at-1, refresh rt-1, 100 s) obtained through a refresh, as after a first flow. */
async function withToken(): Promise<{
  world: World;
  provider: Provider;
  s: OAuthSession;
  clock: { t: number };
}> {
  const world = new World();
  const provider = new Provider();
  provider.stored = { access_token: 'at-0', token_type: 'Bearer', refresh_token: 'rt-0' };
  const clock = { t: 1_000_000 };
  const s = session(world, provider, clock);
  await s.challenged('POST', 401, undefined, 'at-0');
  assert.equal(provider.stored?.access_token, 'at-1');
  return { world, provider, s, clock };
}

describe('OAuthSession.challenged', () => {
  test('a 401 that waited on a refresh that failed runs the flow instead of going again with the dead token', async () => {
    const { world, provider, s, clock } = await withToken();
    clock.t += 99_000; // past the refresh point
    world.refreshOk = false; // the refresh token was revoked meanwhile
    const refreshing = s.accessToken(); // starts the refresh: the flow in progress
    // A request sent with at-1 before the refresh started comes back 401 while it runs.
    const challenged = s.challenged('POST', 401, undefined, 'at-1');
    assert.equal(await refreshing, 'at-1', 'the failed refresh leaves the old token');
    // RFC 6749 §6 / MCP §"Token Handling": at-1 is dead and no refresh can replace it; going again with it only
    // earns a second 401 (rejected-after-authorization). The user has to authorize.
    await assert.rejects(challenged, authorizationRequired);
    assert.equal(provider.redirects, 1);
  });

  test('a refresh token the server refused with invalid_grant is dropped, not tried again by the next flow', async () => {
    const { world, provider, s, clock } = await withToken();
    clock.t += 99_000;
    world.refreshOk = false;
    const tokenCalls = (): number => world.urls.filter((u) => u === `${AS}/token`).length;
    const before = tokenCalls();
    assert.equal(await s.accessToken(), 'at-1', 'the access token stays while it lasts');
    assert.equal(tokenCalls(), before + 1);
    // RFC 6749 §5.2: invalid_grant is final for that refresh token.
    assert.equal(provider.stored?.refresh_token, undefined);
    assert.equal(provider.stored?.access_token, 'at-1');
    await assert.rejects(s.challenged('POST', 401, undefined, 'at-1'), authorizationRequired);
    assert.equal(tokenCalls(), before + 1, 'the flow went to the user without another refresh');
  });

  test('a refresh that could not reach the server keeps the refresh token', async () => {
    const { world, provider, s, clock } = await withToken();
    clock.t += 99_000;
    const real = world.fetch;
    world.fetch = async (input, init) => {
      if (String(input) === `${AS}/token`) throw new TypeError('fetch failed');
      return real(input, init);
    };
    assert.equal(await s.accessToken(), 'at-1');
    assert.equal(provider.stored?.refresh_token, 'rt-1');
  });

  test('a 403 insufficient_scope whose token was already replaced goes again without a second flow', async () => {
    const { world, provider, s } = await withToken();
    const before = world.urls.length;
    // Sent with at-0, answered after the first flow replaced it with at-1: the new token may carry the scope.
    await s.challenged(
      'POST',
      403,
      {
        scheme: 'bearer',
        error: 'insufficient_scope',
        scope: 'write',
        resourceMetadata: undefined,
        offersDpop: false,
      },
      'at-0',
    );
    assert.equal(provider.redirects, 0, 'no second user prompt');
    assert.equal(world.urls.length, before, 'no discovery, no token request');
  });
});

describe('OAuthSession.finish', () => {
  /** The redirect the user agent comes back with from the authorization request `url`. */
  const back = (url: URL | undefined, code: string): URL => {
    const q = url?.searchParams;
    return new URL(`${q?.get('redirect_uri')}?code=${code}&state=${q?.get('state')}`);
  };

  test('two authorizations started without waitForAuthorizationResponse: each redirect finishes its own', async () => {
    const world = new World();
    const provider = new Provider();
    const s = session(world, provider, { t: 0 });
    // Two requests refused 401, one after the other's flow ended (authorization-required): two user prompts.
    await assert.rejects(s.challenged('POST', 401, undefined, undefined), authorizationRequired);
    await assert.rejects(s.challenged('POST', 401, undefined, undefined), authorizationRequired);
    const [first, second] = provider.sentTo;
    assert.notEqual(first?.searchParams.get('state'), second?.searchParams.get('state'));
    // The user completes the first one they were shown (RFC 6749 §10.12: its own state, its own verifier).
    await s.finish(back(first, 'c1'));
    assert.equal(provider.stored?.access_token, 'at-1');
    // A redirect whose state matches none of those pending is refused, and leaves them pending.
    await assert.rejects(
      s.finish(new URL('http://127.0.0.1:1/callback?code=c3&state=forged')),
      (e: unknown) => e instanceof AuthorizationError && e.reason === 'state-mismatch',
    );
    await s.finish(back(second, 'c2'));
    assert.equal(provider.stored?.access_token, 'at-2');
  });
});

describe('OAuthSession.finish, forged answers', () => {
  test('an error redirect without the state that was sent is refused and does not end the authorization', async () => {
    const world = new World();
    const provider = new Provider();
    const s = session(world, provider, { t: 0 });
    await assert.rejects(s.challenged('POST', 401, undefined, undefined), authorizationRequired);
    const sent = provider.sentTo[0];
    // RFC 6749 §4.1.2.1: an error response carries the state too; one without it is a forgery (CSRF), and must
    // not cancel the user's authorization in progress (§10.12).
    await assert.rejects(
      s.finish(new URL('http://127.0.0.1:1/callback?error=access_denied&state=forged')),
      (e: unknown) => e instanceof AuthorizationError && e.reason === 'state-mismatch',
    );
    const q = sent?.searchParams;
    await s.finish(new URL(`http://127.0.0.1:1/callback?code=c1&state=${q?.get('state')}`));
    assert.equal(provider.stored?.access_token, 'at-1');
  });
});

describe('authorization server metadata', () => {
  test('an issuer that is not a string fails typed (metadata-issuer-mismatch), never with a TypeError', async () => {
    for (const issuer of [{ toString: 1 }, { valueOf: null, toString: null }, ['x'], 'x'.repeat(100_000)]) {
      const http = new OAuthHttp(
        async () => json({ issuer, authorization_endpoint: `${AS}/a`, token_endpoint: `${AS}/t` }),
        new OAuthUrlPolicy(new URL(RS), false),
        2_000,
      );
      await assert.rejects(discoverServer(http, AS), (error: unknown) => {
        assert.ok(error instanceof AuthorizationError, String(error));
        assert.equal(error.reason, 'metadata-issuer-mismatch');
        assert.ok(error.message.length < 1_000, 'the message quotes a bounded part of the document');
        return true;
      });
    }
  });
});

describe('dynamic client registration (RFC 7591 §3.2.1)', () => {
  test('a response whose client_secret (or client_id) is not a string is refused typed', async () => {
    const answers: unknown[] = [
      { client_id: 'c', client_secret: { toString: 1 } },
      { client_id: 'c', client_secret: 42 },
      { client_id: '' },
      { client_id: 'c', redirect_uris: 'not a list', client_secret: ['s'] },
    ];
    for (const body of answers) {
      const http = new OAuthHttp(async () => json(body, 201), new OAuthUrlPolicy(new URL(RS), false), 2_000);
      await assert.rejects(
        registerClient(http, `${AS}/register`, { redirect_uris: ['http://127.0.0.1:1/cb'] }, true),
        (error: unknown) => error instanceof AuthorizationError && error.reason === 'registration-failed',
        JSON.stringify(body),
      );
    }
    // A public client's `"client_secret": null` (seen in the wild) is no secret, not a refusal.
    const http = new OAuthHttp(
      async () => json({ client_id: 'c', client_secret: null }, 201),
      new OAuthUrlPolicy(new URL(RS), false),
      2_000,
    );
    const info = await registerClient(
      http,
      `${AS}/register`,
      { redirect_uris: ['http://127.0.0.1:1/cb'] },
      true,
    );
    assert.deepEqual(info, { client_id: 'c' });
  });
});
