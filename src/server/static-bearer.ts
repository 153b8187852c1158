/**
 * A fixed bearer token, for demos and private deployments (`sluice serve --auth-token`). Compared in
 * constant time. Real deployments plug a verifier into `authenticate` (README: JWT with `jose`).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthResult } from '../core/options.js';
import type { RequestView } from '../core/pipeline/request-view.js';
import { InvalidOptionError } from '../errors.js';

export function staticBearer(
  token: string,
  principal = 'token',
): (req: Pick<RequestView, 'headers'>) => AuthResult | null {
  if (token.length < 8) throw new InvalidOptionError('the static bearer token must be at least 8 characters');
  // Hashing both sides gives equal-length inputs, so the comparison leaks neither content nor length.
  const expected = createHash('sha256').update(token).digest();
  return (req) => {
    const h = req.headers.authorization;
    if (h === undefined || !/^bearer /i.test(h)) return null;
    const got = createHash('sha256').update(h.slice(7).trim()).digest();
    return timingSafeEqual(got, expected) ? { principal } : null;
  };
}
