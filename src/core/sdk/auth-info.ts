/**
 * The one `extra.authInfo` both eras hand the SDK's handlers for an authenticated request: the
 * principal as `clientId` (and in `extra.principal`), the credential's expiry in seconds (the SDK's
 * AuthInfo unit). The token itself is not passed on (`token: ''`): handlers see who, not how.
 */
import type { AuthResult } from '../options.js';

export interface AuthInfo {
  token: string;
  clientId: string;
  scopes: string[];
  expiresAt?: number;
  extra: { principal: string };
}

export function authInfoOf(auth: AuthResult): AuthInfo {
  return {
    token: '',
    clientId: auth.principal,
    scopes: auth.scopes === undefined ? [] : [...auth.scopes],
    ...(auth.expiresAt === undefined ? {} : { expiresAt: Math.floor(auth.expiresAt / 1000) }),
    extra: { principal: auth.principal },
  };
}
