/**
 * A Sluice server behind `oauthResourceServer`, trusting a real oidc-provider (auth-server.ts), with
 * the test tools and their probe: the fixture of the tests that run a client's own OAuth flow
 * against Sluice's server.
 */
import { oauthResourceServer, type Served, serve } from '../../src/server/index.js';
import { signingKey, TestAuthServer } from './auth-server.js';
import { createProbe, type Probe, testServerFactory } from './test-server.js';

export interface OAuthServed {
  readonly as: TestAuthServer;
  readonly served: Served;
  readonly probe: Probe;
  stop(): Promise<void>;
}

export async function startOAuthServed(kid: string, scopes: string[]): Promise<OAuthServed> {
  const as = await TestAuthServer.start({ keys: [await signingKey(kid)], scopes });
  const probe = createProbe();
  const served = await serve({
    createServer: testServerFactory(probe),
    port: 0,
    oauth: (endpoint) =>
      oauthResourceServer({ resource: endpoint, authorizationServers: [as.issuer], scopes }),
  });
  return {
    as,
    served,
    probe,
    stop: async () => {
      await served.close();
      await as.stop();
    },
  };
}
