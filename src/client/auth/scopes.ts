/**
 * Scope selection (MCP 2025-11-25 basic/authorization §"Scope Selection Strategy"; SEP-2350, SEP-2207): the
 * challenge's `scope`, else the resource's `scopes_supported`, else none; a step-up asks for the union of what
 * was asked before and what the 403 names; `offline_access` only when the authorization server lists it.
 */

function split(scope: string | undefined): string[] {
  return scope === undefined ? [] : scope.split(' ').filter((s) => s.length > 0);
}

/** The scopes of a first authorization, or after a 401. */
export function initialScope(
  challengeScope: string | undefined,
  resourceScopes: readonly string[] | undefined,
): string[] {
  const fromChallenge = split(challengeScope);
  if (fromChallenge.length > 0) return fromChallenge;
  return [...(resourceScopes ?? [])];
}

/** A step-up after 403 `insufficient_scope`: the union, previous ones first (SEP-2350). */
export function stepUpScope(previous: string | undefined, challengeScope: string | undefined): string[] {
  return [...new Set([...split(previous), ...split(challengeScope)])];
}

/**
 * Adds `offline_access` when the authorization server advertises it and the client wants refresh tokens;
 * removes it when the server does not advertise it (SEP-2207). Undefined for an empty set: the parameter is
 * then omitted.
 */
export function finalScope(
  scopes: readonly string[],
  serverScopes: readonly string[] | undefined,
  wantsRefresh: boolean,
): string | undefined {
  const advertised = serverScopes?.includes('offline_access') === true;
  let out = scopes.filter((s) => s !== 'offline_access' || advertised);
  if (advertised && wantsRefresh && out.length > 0 && !out.includes('offline_access')) {
    out = [...out, 'offline_access'];
  }
  return out.length > 0 ? out.join(' ') : undefined;
}
