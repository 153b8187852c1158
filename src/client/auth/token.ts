/**
 * Requests to the authorization server's back channel: dynamic client registration (RFC 7591, with the
 * `application_type` SEP-837 requires) and the token endpoint (OAuth 2.1 §3.2: authorization code with PKCE,
 * refresh, and the non-interactive grants an SDK provider prepares), authenticated with `client_secret_basic`,
 * `client_secret_post` or `none` (RFC 6749 §2.3.1), or the provider's own `addClientAuthentication`.
 * Token values are never put into an error message or a URL.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { AuthorizationError } from '../errors.js';
import type { DpopProver } from './dpop.js';
import type { ServerMetadata } from './metadata.js';
import type { OAuthAnswer, OAuthHttp } from './oauth-http.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** The largest token or registration response read. */
const MAX_RESPONSE_BYTES = 256 * 1024;

/**
 * The token endpoint authentication to use: the method the client was registered with, else what the server
 * supports (RFC 8414 §2: the default is `client_secret_basic`) among what the client can do.
 */
export function chooseAuthMethod(
  client: OAuthClientInformationMixed,
  server: ServerMetadata,
): ClientAuthMethod {
  const registered = (client as { token_endpoint_auth_method?: unknown }).token_endpoint_auth_method;
  if (registered === 'client_secret_basic' || registered === 'client_secret_post' || registered === 'none') {
    if (registered === 'none' || client.client_secret !== undefined) return registered;
  }
  if (client.client_secret === undefined) return 'none';
  const supported = server.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  if (supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('client_secret_post')) return 'client_secret_post';
  return 'none';
}

/** RFC 6749 §2.3.1: both parts form-urlencoded before Base64 (`btoa` needs Latin-1; the encoding makes it ASCII). */
function basicCredentials(id: string, secret: string): string {
  const enc = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${btoa(`${enc(id)}:${enc(secret)}`)}`;
}

/** The answer's JSON body; undefined when it is not JSON or was larger than the limit. */
function readJson(answer: OAuthAnswer): unknown {
  if (answer.text === undefined) return undefined;
  try {
    return JSON.parse(answer.text) as unknown;
  } catch {
    return undefined;
  }
}

/** The OAuth error code and description of a refusal body (RFC 6749 §5.2), for the message; never the request. */
function oauthError(body: unknown): string {
  if (body === null || typeof body !== 'object') return 'no OAuth error body';
  const { error, error_description: description } = body as { error?: unknown; error_description?: unknown };
  const code = typeof error === 'string' ? error.slice(0, 100) : 'unknown_error';
  return typeof description === 'string' ? `${code}: ${description.slice(0, 200)}` : code;
}

/** One token endpoint request with the client's authentication; the checked token response. */
export async function tokenRequest(
  http: OAuthHttp,
  provider: OAuthClientProvider,
  server: ServerMetadata,
  client: OAuthClientInformationMixed,
  params: URLSearchParams,
  dpop?: DpopProver,
): Promise<OAuthTokens> {
  // Before the provider or a DPoP proof sees it: the endpoint may come from storage (a restored flow).
  http.policy.check(server.token_endpoint, 'token endpoint');
  const headers = new Headers({
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  });
  if (provider.addClientAuthentication !== undefined) {
    await provider.addClientAuthentication(headers, params, server.token_endpoint, server as never);
  } else {
    const method = chooseAuthMethod(client, server);
    if (method === 'client_secret_basic' && client.client_secret !== undefined) {
      headers.set('authorization', basicCredentials(client.client_id, client.client_secret));
    } else {
      params.set('client_id', client.client_id);
      if (method === 'client_secret_post' && client.client_secret !== undefined) {
        params.set('client_secret', client.client_secret);
      }
    }
  }
  let response: OAuthAnswer | undefined;
  let body: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    if (dpop !== undefined) headers.set('dpop', await dpop.proof('POST', server.token_endpoint));
    response = await http.exchange(
      server.token_endpoint,
      'token endpoint',
      { method: 'POST', headers, body: params.toString() },
      'token-request-failed',
      MAX_RESPONSE_BYTES,
    );
    body = readJson(response);
    // RFC 9449 §8: the server wants a nonce in the proof: once more, with the nonce it sent.
    const wantsNonce =
      response.status === 400 && (body as { error?: unknown } | undefined)?.error === 'use_dpop_nonce';
    if (!wantsNonce || dpop === undefined) break;
    if (!dpop.rememberNonce(server.token_endpoint, response.header('dpop-nonce'))) break;
  }
  if (response === undefined)
    throw new AuthorizationError('token-request-failed', 'no token request was sent');
  if (!response.ok) {
    // The refusal's status and OAuth `error` code ride in `cause`: a refresh refused with `invalid_grant` is final
    // for that refresh token (RFC 6749 §5.2), a network failure or a 5xx is not (session.ts tells them apart).
    const code = (body as { error?: unknown } | null | undefined)?.error;
    throw new AuthorizationError(
      'token-request-failed',
      `the token endpoint answered HTTP ${response.status} (${oauthError(body)}) to grant ${params.get('grant_type') ?? '?'}`,
      { status: response.status, error: typeof code === 'string' ? code.slice(0, 100) : undefined },
    );
  }
  return checkedTokens(body, dpop !== undefined);
}

/** RFC 6749 §5.1: `access_token` and `token_type` required; Bearer tokens (RFC 6750), or DPoP ones after a proof. */
function checkedTokens(body: unknown, dpop: boolean): OAuthTokens {
  if (body === null || typeof body !== 'object') {
    throw new AuthorizationError('invalid-token-response', 'the token response is not a JSON object');
  }
  const b = body as Record<string, unknown>;
  if (typeof b['access_token'] !== 'string' || b['access_token'].length === 0) {
    throw new AuthorizationError('invalid-token-response', 'the token response has no access_token');
  }
  if (typeof b['token_type'] !== 'string') {
    throw new AuthorizationError('invalid-token-response', 'the token response has no token_type');
  }
  const type = b['token_type'].toLowerCase();
  if (type !== 'bearer' && !(dpop && type === 'dpop')) {
    throw new AuthorizationError(
      'unsupported-token-type',
      `the token response's token_type is ${b['token_type'].slice(0, 40)}; only Bearer (and DPoP after a proof) is supported`,
    );
  }
  const tokens: Record<string, unknown> = { access_token: b['access_token'], token_type: b['token_type'] };
  const expires = b['expires_in'];
  if (typeof expires === 'number' && Number.isFinite(expires) && expires >= 0) tokens['expires_in'] = expires;
  if (typeof b['refresh_token'] === 'string') tokens['refresh_token'] = b['refresh_token'];
  if (typeof b['scope'] === 'string') tokens['scope'] = b['scope'];
  if (typeof b['id_token'] === 'string') tokens['id_token'] = b['id_token'];
  return tokens as unknown as OAuthTokens;
}

/** RFC 8252 §7.3 and SEP-837: loopback or custom-scheme redirects make a native client, https ones a web client. */
function applicationType(metadata: OAuthClientMetadata): 'native' | 'web' {
  const uris = metadata.redirect_uris ?? [];
  for (const raw of uris) {
    try {
      const u = new URL(raw);
      if (u.protocol === 'https:' && !['localhost', '127.0.0.1', '[::1]'].includes(u.hostname)) return 'web';
    } catch {
      // A malformed URI is the server's to refuse.
    }
  }
  return 'native';
}

/** Dynamic client registration (RFC 7591 §3), the metadata the provider gives plus what MCP requires. */
export async function registerClient(
  http: OAuthHttp,
  endpoint: string,
  metadata: OAuthClientMetadata,
  wantsRefresh: boolean,
): Promise<OAuthClientInformationMixed> {
  const body: Record<string, unknown> = { ...metadata };
  if (body['application_type'] === undefined) body['application_type'] = applicationType(metadata);
  if (body['grant_types'] === undefined) {
    // SEP-2207: a client that wants refresh tokens says so in its metadata.
    body['grant_types'] = wantsRefresh ? ['authorization_code', 'refresh_token'] : ['authorization_code'];
  }
  const response = await http.exchange(
    endpoint,
    'registration endpoint',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    },
    'registration-failed',
    MAX_RESPONSE_BYTES,
  );
  const answer = readJson(response);
  if (!response.ok) {
    throw new AuthorizationError(
      'registration-failed',
      `registration answered HTTP ${response.status} (${oauthError(answer)})`,
    );
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) {
    throw new AuthorizationError('registration-failed', 'the registration response is not a JSON object');
  }
  const info = { ...(answer as Record<string, unknown>) };
  const id = info['client_id'];
  if (typeof id !== 'string' || id.length === 0) {
    throw new AuthorizationError('registration-failed', 'the registration response has no client_id');
  }
  // RFC 7591 §3.2.1: both are strings. The secret goes into a Basic header or a form field (String() on a parsed
  // `{"toString": 1}` throws a TypeError there) and into the provider's storage: anything else is refused here.
  if (info['client_secret'] === null) delete info['client_secret'];
  if (info['client_secret'] !== undefined && typeof info['client_secret'] !== 'string') {
    throw new AuthorizationError(
      'registration-failed',
      'the registration response has a client_secret that is not a string',
    );
  }
  return info as unknown as OAuthClientInformationMixed;
}
