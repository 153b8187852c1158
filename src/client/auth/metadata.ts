/**
 * Discovery (MCP 2025-11-25 and 2026-07-28 basic/authorization §"Authorization Server Discovery"): the protected
 * resource metadata (RFC 9728) from the challenge's `resource_metadata`, else the path-inserted well-known URI,
 * else the root one; then the authorization server metadata (RFC 8414 / OpenID Connect Discovery) in the order
 * the spec gives, each document checked against where it was fetched from. Servers of the 2025-03-26 revision
 * publish no resource metadata: their origin is the authorization server, and without its metadata the default
 * endpoints `/authorize`, `/token`, `/register` apply (2025-03-26 basic/authorization §2.3.3).
 */
import { AuthorizationError } from '../errors.js';
import type { OAuthHttp } from './oauth-http.js';
import type { OAuthUrlPolicy, OAuthUrlUse } from './url-policy.js';

/** RFC 9728 §2: the fields the client reads. */
export interface ResourceMetadata {
  readonly resource: string;
  readonly authorization_servers?: readonly string[];
  readonly scopes_supported?: readonly string[];
  /** The resource server checks DPoP proofs signed with these algorithms (RFC 9728 §2, RFC 9449). */
  readonly dpop_signing_alg_values_supported?: readonly string[];
  /** The resource server accepts DPoP-bound tokens only (RFC 9728 §2). */
  readonly dpop_bound_access_tokens_required?: boolean;
}

/** RFC 8414 §2 (and OIDC Discovery): the fields the client reads. */
export interface ServerMetadata {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly registration_endpoint?: string;
  readonly scopes_supported?: readonly string[];
  readonly response_types_supported?: readonly string[];
  readonly grant_types_supported?: readonly string[];
  readonly code_challenge_methods_supported?: readonly string[];
  readonly token_endpoint_auth_methods_supported?: readonly string[];
  /** RFC 9449 §5.1: the server issues DPoP-bound tokens for proofs with these algorithms. */
  readonly dpop_signing_alg_values_supported?: readonly string[];
  readonly authorization_response_iss_parameter_supported?: boolean;
  readonly client_id_metadata_document_supported?: boolean;
}

/** What discovery found for one protected resource. */
export interface Discovery {
  /** Where the resource metadata came from (undefined for a 2025-03-26 server without one). */
  readonly resourceMetadataUrl: string | undefined;
  readonly resourceMetadata: ResourceMetadata | undefined;
  /** The issuer identifier, exactly as listed in `authorization_servers` (or the server's origin, legacy). */
  readonly issuer: string;
  readonly server: ServerMetadata;
  /** True when the authorization server published no metadata and the 2025-03-26 default endpoints are used. */
  readonly defaultEndpoints: boolean;
}

/** The largest metadata document read. */
const MAX_METADATA_BYTES = 256 * 1024;

/** GETs a JSON document; undefined on 4xx (try the next location), an error on anything else. */
async function getJson(http: OAuthHttp, url: string, use: OAuthUrlUse): Promise<unknown> {
  const answer = await http.exchange(
    url,
    use,
    {
      method: 'GET',
      headers: { accept: 'application/json', 'mcp-protocol-version': '2025-11-25' },
    },
    'discovery-failed',
    MAX_METADATA_BYTES,
  );
  if (answer.status >= 400 && answer.status < 500) return undefined;
  if (!answer.ok) {
    throw new AuthorizationError('discovery-failed', `the ${use} at ${url} answered HTTP ${answer.status}`);
  }
  if (answer.text === undefined) {
    throw new AuthorizationError(
      'discovery-failed',
      `the ${use} at ${url} is larger than ${MAX_METADATA_BYTES} bytes`,
    );
  }
  try {
    return JSON.parse(answer.text) as unknown;
  } catch (error) {
    throw new AuthorizationError('discovery-failed', `the ${use} at ${url} is not JSON`, error);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A value of an untrusted document, for an error message: strings cut to 200 characters, anything else named by
 * its type. Never `String(value)`: a parsed `{"toString": 1}` makes that throw a TypeError instead of the typed
 * refusal, and a 256 KiB string would travel in every message.
 */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 200));
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

function stringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/** The resource metadata locations to try, in order (RFC 9728 §3.1; MCP §"Protected Resource Metadata Discovery"). */
export function resourceMetadataUrls(serverUrl: URL, fromChallenge: string | undefined): string[] {
  const out: string[] = [];
  if (fromChallenge !== undefined) {
    try {
      const u = new URL(fromChallenge, serverUrl);
      if (u.protocol === 'https:' || u.protocol === 'http:') out.push(u.href);
    } catch {
      // An unusable URL in the challenge: fall back to the well-known locations.
    }
  }
  const path = serverUrl.pathname.replace(/\/+$/, '');
  if (path.length > 0) out.push(`${serverUrl.origin}/.well-known/oauth-protected-resource${path}`);
  out.push(`${serverUrl.origin}/.well-known/oauth-protected-resource`);
  return [...new Set(out)];
}

/**
 * True when `resource` (the metadata's identifier) names the server at `serverUrl`: same origin, and the server's
 * path at or below the resource's path (RFC 9728 §3.3 and §7.3 forbid using metadata for another resource).
 */
export function resourceMatches(resource: string, serverUrl: URL): boolean {
  let r: URL;
  try {
    r = new URL(resource);
  } catch {
    return false;
  }
  if (r.origin !== serverUrl.origin || r.hash !== '' || r.search !== '') return false;
  const base = r.pathname.endsWith('/') ? r.pathname : `${r.pathname}/`;
  const path = serverUrl.pathname.endsWith('/') ? serverUrl.pathname : `${serverUrl.pathname}/`;
  return path.startsWith(base);
}

/** Fetches and checks the protected resource metadata; undefined when the server publishes none. */
export async function discoverResource(
  http: OAuthHttp,
  serverUrl: URL,
  fromChallenge: string | undefined,
): Promise<{ url: string; metadata: ResourceMetadata } | undefined> {
  for (const url of resourceMetadataUrls(serverUrl, fromChallenge)) {
    const doc = await getJson(http, url, 'protected resource metadata');
    if (doc === undefined) continue;
    if (!isObject(doc) || typeof doc['resource'] !== 'string') {
      throw new AuthorizationError(
        'discovery-failed',
        `the protected resource metadata at ${url} has no resource`,
      );
    }
    const servers = doc['authorization_servers'];
    if (servers !== undefined && !stringArray(servers)) {
      throw new AuthorizationError(
        'discovery-failed',
        `authorization_servers at ${url} is not a list of strings`,
      );
    }
    if (!resourceMatches(doc['resource'], serverUrl)) {
      throw new AuthorizationError(
        'resource-mismatch',
        `the protected resource metadata at ${url} is for ${shown(doc['resource'])}, not ${serverUrl.href}; refusing to authorize`,
      );
    }
    const scopes = doc['scopes_supported'];
    const dpopAlgs = doc['dpop_signing_alg_values_supported'];
    const dpopRequired = doc['dpop_bound_access_tokens_required'];
    return {
      url,
      metadata: {
        resource: doc['resource'],
        ...(servers !== undefined ? { authorization_servers: servers } : {}),
        ...(stringArray(scopes) ? { scopes_supported: scopes } : {}),
        ...(stringArray(dpopAlgs) ? { dpop_signing_alg_values_supported: dpopAlgs } : {}),
        ...(typeof dpopRequired === 'boolean' ? { dpop_bound_access_tokens_required: dpopRequired } : {}),
      },
    };
  }
  return undefined;
}

/**
 * The authorization server metadata locations for an issuer, in the order MCP 2025-11-25 gives: for an issuer
 * with a path, RFC 8414 path-inserted, OIDC path-inserted, OIDC path-appended; without a path, RFC 8414 then OIDC.
 */
export function serverMetadataUrls(issuer: URL): string[] {
  const path = issuer.pathname.replace(/\/+$/, '');
  if (path.length === 0) {
    return [
      `${issuer.origin}/.well-known/oauth-authorization-server`,
      `${issuer.origin}/.well-known/openid-configuration`,
    ];
  }
  return [
    `${issuer.origin}/.well-known/oauth-authorization-server${path}`,
    `${issuer.origin}/.well-known/openid-configuration${path}`,
    `${issuer.origin}${path}/.well-known/openid-configuration`,
  ];
}

function checkedServerMetadata(
  doc: unknown,
  issuer: string,
  url: string,
  policy: OAuthUrlPolicy,
): ServerMetadata {
  if (!isObject(doc))
    throw new AuthorizationError('discovery-failed', `the metadata at ${url} is not an object`);
  // RFC 8414 §3.3: the issuer in the document MUST be identical to the one the URL was built from — simple string
  // comparison, no normalization (a mismatch is a mix-up or a poisoned document).
  if (doc['issuer'] !== issuer) {
    throw new AuthorizationError(
      'metadata-issuer-mismatch',
      `the authorization server metadata at ${url} names issuer ${shown(doc['issuer'])}, not ${issuer}`,
    );
  }
  const authorizationEndpoint = doc['authorization_endpoint'];
  const tokenEndpoint = doc['token_endpoint'];
  if (typeof authorizationEndpoint !== 'string') {
    throw new AuthorizationError('discovery-failed', `the metadata at ${url} has no authorization_endpoint`);
  }
  if (typeof tokenEndpoint !== 'string') {
    throw new AuthorizationError('discovery-failed', `the metadata at ${url} has no token_endpoint`);
  }
  // Checked here, before anything is sent to them or the user is sent to one (url-policy.ts).
  policy.check(authorizationEndpoint, 'authorization endpoint');
  policy.check(tokenEndpoint, 'token endpoint');
  if (typeof doc['registration_endpoint'] === 'string') {
    policy.check(doc['registration_endpoint'], 'registration endpoint');
  }
  const lists = [
    'scopes_supported',
    'response_types_supported',
    'grant_types_supported',
    'code_challenge_methods_supported',
    'token_endpoint_auth_methods_supported',
    'dpop_signing_alg_values_supported',
  ] as const;
  const out: Record<string, unknown> = {
    issuer,
    authorization_endpoint: authorizationEndpoint,
    token_endpoint: tokenEndpoint,
  };
  if (typeof doc['registration_endpoint'] === 'string')
    out['registration_endpoint'] = doc['registration_endpoint'];
  for (const field of lists) if (stringArray(doc[field])) out[field] = doc[field];
  for (const flag of [
    'authorization_response_iss_parameter_supported',
    'client_id_metadata_document_supported',
  ]) {
    if (typeof doc[flag] === 'boolean') out[flag] = doc[flag];
  }
  return out as unknown as ServerMetadata;
}

/** Fetches and checks an authorization server's metadata; undefined when it publishes none. */
export async function discoverServer(http: OAuthHttp, issuer: string): Promise<ServerMetadata | undefined> {
  const parsed = http.policy.check(issuer, 'authorization server');
  for (const url of serverMetadataUrls(parsed)) {
    const doc = await getJson(http, url, 'authorization server metadata');
    if (doc !== undefined) return checkedServerMetadata(doc, issuer, url, http.policy);
  }
  return undefined;
}

/** The resource metadata, then the authorization server's metadata (or the 2025-03-26 defaults). */
export async function discover(
  http: OAuthHttp,
  serverUrl: URL,
  fromChallenge: string | undefined,
): Promise<Discovery> {
  const resource = await discoverResource(http, serverUrl, fromChallenge);
  const listed = resource?.metadata.authorization_servers?.[0];
  if (resource !== undefined && listed === undefined) {
    throw new AuthorizationError(
      'discovery-failed',
      `the protected resource metadata at ${resource.url} lists no authorization server`,
    );
  }
  // 2025-03-26: no resource metadata; the MCP server's origin is the authorization server.
  const issuer = listed ?? serverUrl.origin;
  const server = await discoverServer(http, issuer);
  if (server !== undefined) {
    return {
      resourceMetadataUrl: resource?.url,
      resourceMetadata: resource?.metadata,
      issuer,
      server,
      defaultEndpoints: false,
    };
  }
  if (resource !== undefined) {
    throw new AuthorizationError(
      'discovery-failed',
      `the authorization server ${issuer} publishes no metadata`,
    );
  }
  const origin = serverUrl.origin;
  return {
    resourceMetadataUrl: undefined,
    resourceMetadata: undefined,
    issuer,
    server: {
      issuer,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      registration_endpoint: `${origin}/register`,
    },
    defaultEndpoints: true,
  };
}
