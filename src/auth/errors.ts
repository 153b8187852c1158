/**
 * The two ways a token check fails, as errors a verifier throws (the built-in JWT and introspection
 * verifiers, or a custom `verify`). The resource server turns them into answers: an invalid token is
 * a 401 `invalid_token` challenge (RFC 6750 §3.1); an authorization server that cannot be reached is
 * a 503 with `Retry-After`, never a 401, because nothing was learnt about the token.
 */
import { SluiceError } from '../errors.js';

/** Why a token was refused; stable, sent as error.data.reason (`token-<reason>`). */
export type InvalidTokenReason =
  | 'malformed'
  | 'algorithm'
  | 'type'
  | 'signature'
  | 'unknown-key'
  | 'issuer'
  | 'audience'
  | 'expired'
  | 'not-yet-valid'
  | 'claims'
  | 'too-large'
  | 'inactive';

export class InvalidTokenError extends SluiceError {
  readonly reason: InvalidTokenReason;
  constructor(reason: InvalidTokenReason, message: string, options?: { cause?: unknown }) {
    super('SLUICE_INVALID_TOKEN', message, options);
    this.name = 'InvalidTokenError';
    this.reason = reason;
  }
  /** SluiceError's brand check alone would make every SluiceError an InvalidTokenError. */
  static override [Symbol.hasInstance](v: unknown): boolean {
    return v instanceof SluiceError && v.code === 'SLUICE_INVALID_TOKEN';
  }
}

/** The authorization server's metadata, JWKS or introspection endpoint did not answer usefully. */
export class AuthServerUnavailableError extends SluiceError {
  /** Seconds a client should wait before trying again. */
  readonly retryAfterS: number;
  constructor(message: string, retryAfterS: number, options?: { cause?: unknown }) {
    super('SLUICE_AUTH_SERVER_UNAVAILABLE', message, options);
    this.name = 'AuthServerUnavailableError';
    this.retryAfterS = retryAfterS;
  }
  static override [Symbol.hasInstance](v: unknown): boolean {
    return v instanceof SluiceError && v.code === 'SLUICE_AUTH_SERVER_UNAVAILABLE';
  }
}
