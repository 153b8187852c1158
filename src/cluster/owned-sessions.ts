/**
 * The owner's side of the directory: the entry of each session this instance owns is written when
 * the session starts, kept alive by housekeeping, removed when it ends, and written again whenever
 * Redis may have lost it (a restart between lease refreshes, a failover to a replica that missed
 * the last writes). See docs/scale-out.md, "Directory".
 */
import type { SessionStart } from '../core/cluster-hooks.js';
import type { Logger } from '../core/options.js';
import { type Directory, type DirectoryEntry, principalHash } from './directory.js';
import { keys } from './keys.js';
import type { Lease } from './lease.js';
import type { RedisLink } from './redis-link.js';
import type { EventReplica } from './replica.js';

/** What the owner side reads of its cluster (live values: the cluster fills them in as it joins). */
export interface OwnerContext {
  readonly incarnation: string;
  readonly leaseMs: number;
  /** This instance's advertised address, once it joined. */
  readonly address: string | undefined;
  /** The lease is held (or its refresh is failing but it has not lapsed). */
  readonly ready: boolean;
  readonly directory: Directory | undefined;
  readonly link: RedisLink | undefined;
  readonly replica: EventReplica | undefined;
  readonly lease: Lease | undefined;
  readonly logger: Logger | undefined;
  /** After Redis lost its data: offer this instance's hop key again and adopt the one Redis holds. */
  reOfferSecret(): Promise<void>;
}

export class OwnedSessions {
  readonly #c: OwnerContext;
  /** What this instance wrote for each session it owns (re-written after a Redis restart). */
  readonly #owned = new Map<string, DirectoryEntry>();

  constructor(c: OwnerContext) {
    this.#c = c;
  }

  get size(): number {
    return this.#owned.size;
  }

  /** Registers a new session's entry; rejects (the session is not created) when the cluster cannot. */
  async starting(s: SessionStart): Promise<void> {
    const c = this.#c;
    const dir = c.directory;
    if (dir === undefined || !c.ready || c.address === undefined) throw new Error('cluster not ready');
    const e: DirectoryEntry = {
      owner: c.incarnation,
      address: c.address,
      epoch: 1,
      principal: principalHash(s.principal),
      tag: s.tag,
      version: '',
      init: s.init,
    };
    await dir.register(s.id, e);
    this.#owned.set(s.id, e);
  }

  version(id: string, version: string): void {
    const e = this.#owned.get(id);
    if (e === undefined) return;
    e.version = version;
    this.#c.link?.send(['HSET', keys.session(id), 'v', version]).catch(() => undefined);
  }

  ended(id: string): void {
    this.#c.replica?.dropSession(id);
    if (!this.#owned.delete(id)) return;
    this.#c.directory?.remove(id).catch(() => undefined);
  }

  /** Keeps the entries alive; writes again those that vanished while their session lives here. */
  async housekeep(): Promise<void> {
    const dir = this.#c.directory;
    if (dir === undefined || this.#owned.size === 0) return;
    try {
      const missing = await dir.touch(this.#owned.keys());
      // Entries that vanished while their session lives here (a Redis restart between lease
      // refreshes): write them again.
      for (const sid of missing) {
        const e = this.#owned.get(sid);
        if (e !== undefined) await dir.register(sid, e);
      }
    } catch {
      // Redis unreachable: the entries' TTL outlasts a few missed refreshes; the lease refresh logs it.
    }
  }

  /** `failover`: the data may be missing some writes, not all: restart the run marker first. */
  async reRegister(failover = false): Promise<void> {
    const c = this.#c;
    const dir = c.directory;
    if (dir === undefined || c.link === undefined) return;
    c.logger?.warn('cluster.reregister', { sessions: this.#owned.size, failover });
    try {
      // A peer's miss for a session whose entry was lost answers 503 until its owner wrote it again.
      // Every instance learns of the new master within a lease (its refresh fails over to it), so
      // misses stay 503 for a lease from now rather than half of one as after a restart.
      if (failover) await dir.markRun(Date.now() + c.leaseMs / 2, true);
      // Re-offer our key, and adopt whatever Redis holds: an instance that started while Redis was
      // empty may have put its own there first, and every instance must use the one in Redis.
      await c.reOfferSecret();
      await dir.registerAll(this.#owned);
      await dir.markRun(Date.now());
    } catch (error) {
      c.logger?.warn('cluster.reregister_failed', { error: String(error) });
    }
  }
}
