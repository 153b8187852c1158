/**
 * `WWW-Authenticate` parsing (RFC 9110 §11.6.1, RFC 6750 §3): the challenges a resource server sends with 401
 * and 403. MCP reads three parameters of the `Bearer` (or `DPoP`) challenge: `resource_metadata` (RFC 9728 §5.1,
 * where the protected resource metadata lives), `scope` (the scopes the request needs; MCP 2025-11-25
 * basic/authorization §"Scope Selection Strategy") and `error` (`invalid_token`, `insufficient_scope`).
 */

/** What a challenge tells the client. Every field is untrusted input. */
export interface Challenge {
  readonly scheme: string;
  readonly resourceMetadata: string | undefined;
  /** Space-separated scopes, as sent. */
  readonly scope: string | undefined;
  readonly error: string | undefined;
  /** One of the challenges is `DPoP` (RFC 9449 §7.1): the resource server takes DPoP-bound tokens. */
  readonly offersDpop: boolean;
}

/** The longest header value parsed; a longer one is treated as carrying no challenge. */
const MAX_HEADER_CHARS = 8192;

const TOKEN_CHAR = /[!#$%&'*+.^_`|~0-9A-Za-z-]/;

/**
 * The challenge of the scheme the refused request used (`prefer`: `Bearer` unless it presented a DPoP-bound
 * token), else the other of the two, else the first one; undefined when there is none. A resource server that
 * takes both schemes sends both challenges, and the `error` (`use_dpop_nonce`, `invalid_token`,
 * `insufficient_scope`) sits in the one of the scheme the request used (RFC 9449 §7.1 and §9; RFC 6750 §3), so
 * reading the Bearer one for a DPoP request would miss a nonce or a step-up. A malformed header yields what
 * could be read before the fault.
 */
export function parseChallenge(
  header: string | null | undefined,
  prefer: 'bearer' | 'dpop' = 'bearer',
): Challenge | undefined {
  if (header === null || header === undefined || header.length > MAX_HEADER_CHARS) return undefined;
  const all = parseChallenges(header);
  const other = prefer === 'bearer' ? 'dpop' : 'bearer';
  const pick = all.find((c) => c.scheme === prefer) ?? all.find((c) => c.scheme === other) ?? all[0];
  if (pick === undefined) return undefined;
  return {
    scheme: pick.scheme,
    // Where the metadata lives does not depend on the scheme: a server may name it in one challenge only.
    resourceMetadata:
      pick.params.get('resource_metadata') ??
      all
        .find((c) => (c.scheme === 'bearer' || c.scheme === 'dpop') && c.params.has('resource_metadata'))
        ?.params.get('resource_metadata'),
    scope: pick.params.get('scope'),
    error: pick.params.get('error'),
    offersDpop: all.some((c) => c.scheme === 'dpop'),
  };
}

interface RawChallenge {
  scheme: string;
  params: Map<string, string>;
}

/** The grammar of RFC 9110 §11.6.1: `scheme [ token68 / #auth-param ]`, challenges separated by commas. */
function parseChallenges(s: string): RawChallenge[] {
  const out: RawChallenge[] = [];
  let i = 0;
  const skipSpace = (): void => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i++;
  };
  const token = (): string => {
    const start = i;
    while (i < s.length && TOKEN_CHAR.test(s[i] ?? '')) i++;
    return s.slice(start, i);
  };
  let current: RawChallenge | undefined;
  while (i < s.length) {
    skipSpace();
    if (s[i] === ',') {
      i++;
      continue;
    }
    const start = i;
    const word = token();
    if (word.length === 0) return out;
    skipSpace();
    if (s[i] === '=' && current !== undefined && s[i + 1] !== '=') {
      // An auth-param of the current challenge.
      i++;
      skipSpace();
      let value: string;
      if (s[i] === '"') {
        i++;
        value = '';
        while (i < s.length && s[i] !== '"') {
          if (s[i] === '\\') i++;
          value += s[i] ?? '';
          i++;
        }
        if (s[i] !== '"') return out;
        i++;
      } else {
        value = token();
      }
      const name = word.toLowerCase();
      if (!current.params.has(name)) current.params.set(name, value);
      continue;
    }
    if (start !== i && (s[i] === undefined || s[i] === ',' || TOKEN_CHAR.test(s[i] ?? ''))) {
      // A new challenge: `scheme` then its params (or a token68, skipped).
      current = { scheme: word.toLowerCase(), params: new Map() };
      out.push(current);
      continue;
    }
    // token68 (`abc==`) or garbage: skip to the next comma.
    while (i < s.length && s[i] !== ',') i++;
  }
  return out;
}
