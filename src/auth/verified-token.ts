/**
 * What a verifier learns from a valid token. The resource server checks the audience and issuer of
 * every verifier's answer again (RFC 8707 §2, MCP 2025-11-25 basic/authorization §"Token Handling":
 * a token not issued for this resource MUST be refused), so a custom `verify` cannot skip them.
 */
export interface VerifiedToken {
  /** The token's `iss`. */
  issuer: string;
  /** The token's `aud`, as a list. */
  audience: readonly string[];
  /** `sub`, else `client_id` (a client-credentials token has no user). */
  subject: string;
  /** `scope` (space-separated), else `scp` (string or list, as some providers spell it). */
  scopes: readonly string[];
  /** Epoch ms of `exp`, when the token has one. */
  expiresAt: number | undefined;
  /** Every claim as received. */
  claims: Readonly<Record<string, unknown>>;
}

/** Checks one token; throws InvalidTokenError or AuthServerUnavailableError (src/auth/errors.ts). */
export type TokenVerifier = (token: string) => Promise<VerifiedToken>;

export function scopesOf(claims: Record<string, unknown>): string[] {
  const s = claims['scope'] ?? claims['scp'];
  if (typeof s === 'string') return s.split(' ').filter((x) => x !== '');
  if (Array.isArray(s)) return s.filter((x): x is string => typeof x === 'string');
  return [];
}

export function audienceOf(claims: Record<string, unknown>): string[] {
  const a = claims['aud'];
  if (typeof a === 'string') return [a];
  if (Array.isArray(a)) return a.filter((x): x is string => typeof x === 'string');
  return [];
}

/** `sub`, else `client_id`; undefined when the token names nobody. */
export function subjectOf(claims: Record<string, unknown>): string | undefined {
  const sub = claims['sub'];
  if (typeof sub === 'string' && sub !== '') return sub;
  const client = claims['client_id'];
  if (typeof client === 'string' && client !== '') return client;
  return undefined;
}
