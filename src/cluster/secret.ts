/**
 * The key that authenticates the hop between instances. `SLUICE_CLUSTER_SECRET` (or the `secret`
 * option) wins; otherwise the first instance to start puts a random key in Redis with SET NX and
 * every instance reads that one, so `--redis` alone is enough to join. An instance re-offers its key
 * with SET NX when it re-registers after a Redis restart and adopts whatever key Redis then holds
 * (another instance may have put its own there first), so a restart cannot split the cluster in
 * two keys.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { keys } from './keys.js';
import type { RedisLink } from './redis-link.js';

/** At least 16 bytes of key material; shorter given secrets are refused. */
export const MIN_SECRET_BYTES = 16;

export class ClusterSecretError extends Error {
  readonly code = 'cluster-secret';
  constructor(message: string) {
    super(message);
    this.name = 'ClusterSecretError';
  }
}

export function checkGivenSecret(secret: string): string {
  if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
    throw new ClusterSecretError(`the cluster secret must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  return secret;
}

/** The secret from Redis (created if none). Rejects when Redis cannot be reached. */
export async function provisionSecret(link: RedisLink, offer?: string): Promise<string> {
  const mine = offer ?? randomBytes(32).toString('base64url');
  await link.send(['SET', keys.secret, mine, 'NX']);
  const r = await link.send(['GET', keys.secret]);
  if (typeof r !== 'string' || r.length === 0)
    throw new ClusterSecretError('Redis returned no cluster secret');
  return r;
}

/** Keys drawn from the cluster secret (RedisCluster.derivedKey), each kept for the secret it came from. */
export class DerivedKeys {
  readonly #known = new Map<string, { secret: string; key: string }>();

  of(secret: string, purpose: string): string {
    const known = this.#known.get(purpose);
    if (known?.secret === secret) return known.key;
    const key = createHmac('sha256', secret).update(`sluice derived key\n${purpose}`).digest('base64url');
    this.#known.set(purpose, { secret, key });
    return key;
  }
}
