/**
 * The answers a resource server gives when it refuses a request, and reading the one credential it
 * accepts. RFC 6750 §3 (the Bearer challenge and its error codes), RFC 9728 §5.1
 * (`resource_metadata` in the challenge), RFC 9449 §7.1 (the `DPoP` challenge), MCP 2025-11-25 basic/authorization §"Protected Resource
 * Metadata Discovery Requirements" and §"Scope Challenge Handling" (`scope` on 401 and 403).
 */

/** The shape the core's `authenticate` accepts as a refusal (core/options.ts `AuthDenial`). */
export interface Denial {
  status: 400 | 401 | 403 | 503;
  reason: string;
  message: string;
  headers?: Readonly<Record<string, string>> | undefined;
}

/** RFC 6750 §3: quoted values exclude `"` and `\` (and anything outside printable ASCII). */
function quoted(v: string): string {
  return `"${v.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '')}"`;
}

export interface ChallengeParams {
  resourceMetadata: string;
  scopes: readonly string[];
  error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope';
  description?: string;
}

export function bearerChallenge(p: ChallengeParams): string {
  const parts = [`resource_metadata=${quoted(p.resourceMetadata)}`];
  if (p.scopes.length > 0) parts.push(`scope=${quoted(p.scopes.join(' '))}`);
  if (p.error !== undefined) parts.push(`error=${quoted(p.error)}`);
  if (p.description !== undefined) parts.push(`error_description=${quoted(p.description.slice(0, 200))}`);
  return `Bearer ${parts.join(', ')}`;
}

/**
 * RFC 9449 §7.1: a refusal of a DPoP presentation (a bound token presented as Bearer, §7.2; an
 * unbound one presented as DPoP; a missing or bad proof) is told in a `DPoP` challenge, with the
 * algorithms proofs may use. It follows the Bearer challenge without an error, which keeps
 * `resource_metadata` where clients that read only the first challenge find it (the SDK's do).
 */
export function dpopChallenge(
  p: Omit<ChallengeParams, 'error'> & {
    error: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce';
    algorithms: readonly string[];
  },
): string {
  const dpop = [
    `error=${quoted(p.error)}`,
    ...(p.description === undefined ? [] : [`error_description=${quoted(p.description.slice(0, 200))}`]),
    `algs=${quoted(p.algorithms.join(' '))}`,
  ];
  return `${bearerChallenge({ resourceMetadata: p.resourceMetadata, scopes: p.scopes })}, DPoP ${dpop.join(', ')}`;
}

/** RFC 6750 §2.1: `Bearer` (or RFC 9449 §7.1 `DPoP`) then one token68 (RFC 9110 §11.2), nothing after it. */
const BEARER = /^(bearer|dpop) +([A-Za-z0-9\-._~+/]+=*) *$/i;
const SCHEME = /^([A-Za-z0-9!#$%&'*+\-.^_`|~]+)(?: |$)/;

export type Credential =
  | { kind: 'token'; token: string; scheme: 'bearer' | 'dpop' }
  | { kind: 'missing' }
  | { kind: 'other-scheme' }
  | { kind: 'malformed'; why: string };

/** Reads the access token of an `Authorization` header value (repeated headers arrive joined). */
export function readBearer(header: string | undefined): Credential {
  if (header === undefined || header.trim() === '') return { kind: 'missing' };
  const m = BEARER.exec(header);
  if (m?.[1] !== undefined && m[2] !== undefined) {
    return { kind: 'token', token: m[2], scheme: m[1].toLowerCase() === 'dpop' ? 'dpop' : 'bearer' };
  }
  const scheme = SCHEME.exec(header)?.[1]?.toLowerCase();
  if (scheme === undefined) return { kind: 'malformed', why: 'the Authorization header is not a credential' };
  if (scheme !== 'bearer' && scheme !== 'dpop') return { kind: 'other-scheme' };
  return {
    kind: 'malformed',
    why: `the Authorization header must be "${scheme === 'dpop' ? 'DPoP' : 'Bearer'}" and one token`,
  };
}

/**
 * RFC 6750 §2.3 allows `access_token` in the query; OAuth 2.1 §5.1.2 and MCP 2025-11-25
 * basic/authorization §"Token Requirements" forbid it (URLs end up in logs), so its presence is
 * refused rather than ignored.
 */
export function tokenInQuery(url: string): boolean {
  const q = url.indexOf('?');
  if (q < 0) return false;
  return new URLSearchParams(url.slice(q + 1)).has('access_token');
}
