/**
 * DPoP proof ids spent on the cluster's Redis, so a proof accepted by one instance is refused by every
 * other (RFC 9449 §11.1; auth/proof-replays.ts). One `SET NX PX` per DPoP-bound request on its own
 * key, expiring when the proof leaves the freshness window: no script, one slot per key in a Redis
 * Cluster. A handler given both `oauth` and `cluster` uses it without being asked.
 *
 * A request a peer forwarded here was checked by that peer, which verified its proof and spent it
 * before relaying it; the owner verifies its token again (for the principal) but not its proof, a
 * signature check (about 65 µs of CPU through node:crypto, 100–170 through Web Crypto:
 * docs/benchmarks.md, section (k)) done once per request instead of twice. That is safe because the
 * routing stage verifies the hop's signature before anything is served, and refuses a request whose
 * `x-sluice-forward` does not verify (403): a client that adds the header to skip the proof check
 * gets nothing.
 */
import { createHash } from 'node:crypto';
import type { ProofReplayStore } from '../auth/proof-replays.js';
import type { OAuthResourceServer } from '../auth/resource-server.js';
import type { RedisCluster } from './cluster.js';
import { FORWARD_HEADER } from './forward-auth.js';
import { keys } from './keys.js';
import { RecentWrites } from './recent-writes.js';
import { RedisUnavailableError } from './redis-link.js';

export function proofReplaysOf(cluster: RedisCluster): ProofReplayStore {
  // A promoted replica may lack the last proofs spent (asynchronous replication), and a proof it
  // lacks could be spent once more while fresh: the spends of the last 15 s are sent again then
  // (recent-writes.ts). A spend refused (not OK) changed nothing and is not kept.
  const recent = cluster.followsFailovers
    ? new RecentWrites({}, { scripts: [], keep: (_s, args, reply) => (reply === 'OK' ? args : undefined) })
    : undefined;
  if (recent !== undefined)
    // For the cluster's life: the store is made once per resource server that joins it.
    cluster.onFailover(() => {
      const link = cluster.link;
      if (link !== undefined) recent.failedOver(link);
    });
  return {
    checkedUpstream: (req) => req.header(FORWARD_HEADER) !== undefined,
    async spend(jkt, jti, ttlMs): Promise<boolean> {
      const link = cluster.link;
      if (link === undefined) throw new RedisUnavailableError('the cluster has not joined Redis yet');
      // Hashed: a jti is up to 256 characters of the client's choosing, and a key names its key too.
      const id = createHash('sha256').update(`${jkt}\n${jti}`).digest('base64url');
      const px = String(Math.max(1, Math.ceil(ttlMs)));
      const args = ['SET', keys.dpopProof(id), '1', 'NX', 'PX', px];
      const reply = await link.send(args);
      recent?.sent(args, reply);
      return reply === 'OK';
    },
    // Every member makes and checks the same DPoP nonces (auth/dpop-nonce.ts).
    nonceKey: () => cluster.derivedKey('dpop-nonce'),
  };
}

/**
 * `oauth` as a member of `cluster` serves it: spending its DPoP proofs on the cluster's Redis, unless
 * it was given a store of its own. What `createMcpHandler` and `serve` do with `oauth` and `cluster`.
 */
export function clusterResourceServer(
  oauth: OAuthResourceServer,
  cluster: RedisCluster | undefined,
): OAuthResourceServer {
  return cluster === undefined || oauth.sharesProofs
    ? oauth
    : oauth.withProofReplays(proofReplaysOf(cluster));
}
