// The OAuth side of `sluice conformance-client` for the suite's `auth/*` scenarios: a headless
// `OAuthClientProvider` (SDK v1 interface) that follows the authorization redirect itself — the suite's mock
// authorization server redirects at once — and hands the redirect URI back to the transport through
// `waitForAuthorizationResponse`, so `state` and RFC 9207 `iss` are checked as for a real user. The
// client-credentials extension scenarios use the SDK's own non-interactive providers.
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  ClientCredentialsProvider,
  PrivateKeyJwtProvider,
} from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { StreamableHttpClientOptions } from '../client/index.js';

/** What the suite may pass in MCP_CONFORMANCE_CONTEXT for an auth scenario. */
export interface AuthContext {
  readonly client_id?: string;
  readonly client_secret?: string;
  readonly private_key_pem?: string;
  readonly signing_algorithm?: string;
}

/** The URL-shaped client id the suite expects when the server supports client ID metadata documents. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
/** Never listened on: the redirect is followed by fetching the authorization URL, not by a browser. */
const REDIRECT_URL = 'http://127.0.0.1:3000/callback';

/** Keeps everything in memory and "visits" the authorization URL with a fetch that does not follow redirects. */
class HeadlessProvider implements OAuthClientProvider {
  readonly clientMetadataUrl = CLIENT_METADATA_URL;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';
  #redirect: Promise<URL> | undefined;

  constructor(preRegistered: OAuthClientInformationMixed | undefined) {
    this.#client = preRegistered;
  }

  get redirectUrl(): string {
    return REDIRECT_URL;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'sluice-conformance-client',
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.#client = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.#tokens = undefined;
    if (scope === 'all' || scope === 'client') this.#client = undefined;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }

  redirectToAuthorization(url: URL): void {
    this.#redirect = (async () => {
      const response = await fetch(url, { redirect: 'manual' });
      await response.body?.cancel();
      const location = response.headers.get('location');
      if (location === null)
        throw new Error(`the authorization endpoint answered HTTP ${response.status} without a redirect`);
      return new URL(location, url);
    })();
  }

  /** The redirect URI the authorization endpoint sent the "user agent" to. */
  authorizationResponse(): Promise<URL> {
    const redirect = this.#redirect;
    this.#redirect = undefined;
    if (redirect === undefined) return Promise.reject(new Error('no authorization was started'));
    return redirect;
  }
}

/** Transport options for an auth scenario; none for the others. */
export function conformanceAuth(scenario: string, context: AuthContext): StreamableHttpClientOptions {
  if (!scenario.startsWith('auth/')) return {};
  if (scenario === 'auth/client-credentials-basic' && context.client_id && context.client_secret) {
    return {
      authProvider: new ClientCredentialsProvider({
        clientId: context.client_id,
        clientSecret: context.client_secret,
      }),
    };
  }
  if (scenario === 'auth/client-credentials-jwt' && context.client_id && context.private_key_pem) {
    return {
      authProvider: new PrivateKeyJwtProvider({
        clientId: context.client_id,
        privateKey: context.private_key_pem,
        algorithm: context.signing_algorithm ?? 'ES256',
      }),
    };
  }
  const preRegistered =
    context.client_id !== undefined
      ? {
          client_id: context.client_id,
          ...(context.client_secret !== undefined ? { client_secret: context.client_secret } : {}),
        }
      : undefined;
  const provider = new HeadlessProvider(preRegistered);
  return { authProvider: provider, waitForAuthorizationResponse: () => provider.authorizationResponse() };
}

/** MCP_CONFORMANCE_CONTEXT, or an empty context when absent or unreadable. */
export function readContext<T extends object>(): T {
  try {
    const parsed = JSON.parse(process.env['MCP_CONFORMANCE_CONTEXT'] ?? '{}') as unknown;
    return (parsed !== null && typeof parsed === 'object' ? parsed : {}) as T;
  } catch {
    return {} as T;
  }
}
