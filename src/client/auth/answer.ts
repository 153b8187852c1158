/**
 * What the transport does with a 401 or 403 when it has an OAuth client: authorize, then say whether (and how
 * often) the request goes again. A 401 means the request did not run, so it is re-sent once after the flow
 * (MCP basic/authorization §"Token Handling"); a 403 `insufficient_scope` re-authorizes with the challenged scopes
 * (§"Scope Challenge Handling"), a bounded number of times.
 */
import type { TransportContext } from '../context.js';
import { AuthorizationError, UnauthorizedError } from '../errors.js';
import { discard } from '../http.js';
import type { HttpResponse } from '../http-client.js';
import { parseChallenge } from './challenge.js';

/** The attempt counters this file reads and advances. */
export interface AuthAttempt {
  readonly afterAuth: boolean;
  readonly stepUps: number;
  /** Re-sent once with a resource server's new DPoP nonce (RFC 9449 §9). */
  readonly afterNonce: boolean;
}

/** The bearer token an `authorization` header value carried. */
export function sentToken(authorization: string | undefined): string | undefined {
  if (authorization?.startsWith('Bearer ') === true) return authorization.slice(7);
  if (authorization?.startsWith('DPoP ') === true) return authorization.slice(5);
  return undefined;
}

/**
 * Authorizes for `response` (401/403) and returns the counters of the next attempt, or undefined when this is not
 * an authorization problem the client can solve (a 403 for another reason: the caller reports it as it is).
 * Throws the typed error when the request must fail.
 */
export async function answerChallenge<A extends AuthAttempt>(
  t: TransportContext,
  method: string,
  response: HttpResponse,
  authorization: string | undefined,
  attempt: A,
): Promise<A | undefined> {
  const auth = t.auth;
  if (auth === undefined) return undefined;
  const header = response.header('www-authenticate');
  // The challenge of the scheme this request used (RFC 9449 §7.1): a DPoP-bound token's refusal is in `DPoP`.
  const challenge = parseChallenge(header, authorization?.startsWith('DPoP ') === true ? 'dpop' : 'bearer');
  if (
    response.status === 401 &&
    challenge?.error === 'use_dpop_nonce' &&
    !attempt.afterNonce &&
    auth.rememberNonce(t.url, response.header('dpop-nonce'))
  ) {
    await discard(response);
    return { ...attempt, afterNonce: true };
  }
  if (response.status === 401) {
    if (attempt.afterAuth) {
      const body = (await response.text(4096, t.options.idleTimeoutMs).catch(() => '')) ?? '';
      throw new UnauthorizedError(method, body, header ?? undefined, 'rejected-after-authorization');
    }
    await discard(response);
    await auth.challenged(method, 401, challenge, sentToken(authorization), header ?? undefined);
    return { ...attempt, afterAuth: true };
  }
  if (challenge?.error !== 'insufficient_scope') return undefined;
  await discard(response);
  if (attempt.stepUps >= t.options.maxStepUps) {
    throw new AuthorizationError(
      'step-up-exhausted',
      `${method} still answered 403 insufficient_scope after ${attempt.stepUps} re-authorizations (scope ${challenge.scope ?? 'unnamed'})`,
    );
  }
  await auth.challenged(method, 403, challenge, sentToken(authorization), header ?? undefined);
  return { ...attempt, stepUps: attempt.stepUps + 1 };
}
