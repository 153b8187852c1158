/**
 * Authorization requests sent and not yet answered, and the check of the answer (RFC 6749 §4.1.2, RFC 9207 §2.4).
 * Without `waitForAuthorizationResponse` a flow ends once the user is sent to the authorization server, so a
 * request refused after that starts another: the user may then hold several authorization URLs, and completes
 * whichever they see first. Each redirect is matched to its own request by `state` (RFC 6749 §10.12), with that
 * request's PKCE verifier (RFC 7636 §4.5); keeping only the newest would refuse the first URL as a forgery.
 */
import type { OAuthClientInformationMixed } from '@modelcontextprotocol/sdk/shared/auth.js';
import { AuthorizationError } from '../errors.js';
import type { Discovery } from './metadata.js';

/** An authorization request sent and not yet answered. */
export interface Pending {
  readonly discovery: Discovery;
  readonly client: OAuthClientInformationMixed;
  readonly verifier: string;
  /** Undefined when rebuilt from the provider's stored state (the caller checked `state` then). */
  readonly state: string | undefined;
  readonly redirectUri: string;
  readonly resource: string | undefined;
}

/** The most authorizations kept pending at once; the oldest is forgotten past it. */
const MAX_PENDING = 4;

export class PendingAuthorizations {
  readonly #all: Pending[] = [];

  add(pending: Pending): void {
    this.#all.push(pending);
    if (this.#all.length > MAX_PENDING) this.#all.shift();
  }

  /**
   * The request `response` answers: the one its `state` names (else the newest, whose check then reports the
   * mismatch); the newest for a bare code, whose verifier is the one the provider stored. Undefined when none.
   */
  find(response: URL | string): Pending | undefined {
    const state = typeof response === 'string' ? undefined : response.searchParams.get('state');
    return this.#all.find((p) => state !== undefined && p.state === state) ?? this.#all.at(-1);
  }

  delete(pending: Pending): void {
    const i = this.#all.indexOf(pending);
    if (i >= 0) this.#all.splice(i, 1);
  }
}

/**
 * The redirect's `code`, after its `state`, `error` and `iss` are checked. `forget` is called when the answer
 * ends the request (an error, a mix-up); a wrong `state` or a missing code leaves it pending for the real answer.
 */
export function authorizationCode(response: URL, pending: Pending, forget: () => void): string {
  const q = response.searchParams;
  // The state first, an error response's too (RFC 6749 §4.1.2.1 returns it there as well): a forged redirect
  // (CSRF, §10.12) is refused and leaves the authorization pending, rather than ending it with its `error`.
  if (pending.state !== undefined && q.get('state') !== pending.state) {
    throw new AuthorizationError(
      'state-mismatch',
      'the authorization response does not carry the state that was sent',
    );
  }
  const error = q.get('error');
  if (error !== null) {
    forget();
    const description = q.get('error_description');
    throw new AuthorizationError(
      'authorization-denied',
      `the authorization server answered ${error.slice(0, 100)}${description !== null ? `: ${description.slice(0, 200)}` : ''}`,
    );
  }
  const iss = q.get('iss');
  const issuer = pending.discovery.server.issuer;
  // Simple string comparison, no normalization (RFC 9207 §2.4); a present `iss` is compared even when the
  // server never advertised it.
  if (iss !== null && iss !== issuer) {
    forget();
    throw new AuthorizationError(
      'iss-mismatch',
      `the authorization response names issuer ${iss.slice(0, 200)}, not ${issuer}`,
    );
  }
  if (iss === null && pending.discovery.server.authorization_response_iss_parameter_supported === true) {
    forget();
    throw new AuthorizationError(
      'iss-missing',
      `${issuer} advertises the iss parameter but the authorization response has none`,
    );
  }
  const code = q.get('code');
  if (code === null || code.length === 0) {
    throw new AuthorizationError('authorization-denied', 'the authorization response carries no code');
  }
  return code;
}
