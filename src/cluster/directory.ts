/**
 * The session directory: for every session, which instance owns it and what any instance needs to
 * answer for it without asking the owner (route, 404 for another principal, version check). One
 * HASH per session, `sl:{S}`, written once by the owner when `initialize` succeeds (before the
 * session id is returned), refreshed with the owner's housekeeping, deleted when the session ends.
 *
 * Fields (short names: this is the bulk of Redis memory per idle session):
 *   o  owner incarnation     a  owner's advertised URL   e  epoch (fencing token)
 *   p  principal hash        t  event-id tag             v  negotiated protocol version
 *   i  the initialize params (JSON), kept only up to 4 KiB
 */
import { createHash } from 'node:crypto';
import { memoByHeader } from '../http/header-memo.js';
import { keys } from './keys.js';
import type { RedisLink, RedisReply } from './redis-link.js';
import { Script } from './scripts.js';

export interface DirectoryEntry {
  owner: string;
  address: string;
  epoch: number;
  /** principalHash(principal), '' for unauthenticated sessions. */
  principal: string;
  tag: string;
  version: string;
  /** JSON of the initialize params when small enough to keep, else ''. */
  init: string;
}

const MAX_INIT_BYTES = 4096;

/** HSET + PEXPIRE atomically: an entry never exists without a TTL. */
const REGISTER = new Script(`
redis.call('HSET', KEYS[1], 'o', ARGV[2], 'a', ARGV[3], 'e', ARGV[4], 'p', ARGV[5], 't', ARGV[6], 'v', ARGV[7], 'i', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`);

/** The principal as stored: a short hash, so Redis never holds a user's identity in clear. */
export function principalHash(principal: string | undefined): string {
  return principal === undefined ? '' : hashPrincipal(principal);
}

/** Memoized (bounded): a forwarded request compares its principal's hash on every hop. */
const hashPrincipal = memoByHeader(
  (principal: string) => createHash('sha256').update(principal).digest('base64url').slice(0, 22),
  1024,
);

/**
 * Commands a per-session sweep sends at once. Each command's reply must come within the link's
 * deadline counted from its send (command-deadlines.ts), and a burst of one command per session is
 * answered in order: 100,000 at once put the last replies near a second away on this host (encoding,
 * Redis, decoding), past the deadline, where a burst of this size takes milliseconds.
 */
export const BURST = 1_000;

/** Runs `each` over `items`, at most BURST at a time, a burst after the previous one settled. */
async function inBursts<T>(items: readonly T[], each: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += BURST) await Promise.all(items.slice(i, i + BURST).map(each));
}

export class Directory {
  readonly #link: RedisLink;
  readonly #ttlMs: number;

  constructor(link: RedisLink, ttlMs: number) {
    this.#link = link;
    this.#ttlMs = Math.max(1000, Math.ceil(ttlMs));
  }

  async register(sid: string, e: DirectoryEntry): Promise<void> {
    const init = Buffer.byteLength(e.init) <= MAX_INIT_BYTES ? e.init : '';
    await REGISTER.run(
      this.#link,
      [keys.session(sid)],
      [String(this.#ttlMs), e.owner, e.address, String(e.epoch), e.principal, e.tag, e.version, init],
    );
  }

  /** The entry, or undefined when the directory has none (ended, expired, never existed). Rejects on Redis errors. */
  async lookup(sid: string): Promise<DirectoryEntry | undefined> {
    const r = await this.#link.send(['HMGET', keys.session(sid), 'o', 'a', 'e', 'p', 't', 'v', 'i']);
    if (!Array.isArray(r) || typeof r[0] !== 'string') return undefined;
    const s = (v: RedisReply | undefined): string => (typeof v === 'string' ? v : '');
    return {
      owner: s(r[0]),
      address: s(r[1]),
      epoch: Number(s(r[2])) || 0,
      principal: s(r[3]),
      tag: s(r[4]),
      version: s(r[5]),
      init: s(r[6]),
    };
  }

  /**
   * Marks when this Redis's data began (SET NX, so the first writer wins). A lookup miss shortly
   * after that moment may be a Redis that lost its data and whose instances have not re-registered
   * yet: the caller answers 503 then, not 404. `restart` (a failover) overwrites the marker with `now`.
   */
  async markRun(now: number, restart = false): Promise<void> {
    // `restart` (after a failover, data partly lost): a new start for the miss window, whoever set it.
    await this.#link.send(restart ? ['SET', keys.run, String(now)] : ['SET', keys.run, String(now), 'NX']);
  }

  /** When the data of this Redis began (markRun), or undefined when it holds no marker (just restarted). */
  async runSince(): Promise<number | undefined> {
    const r = await this.#link.send(['GET', keys.run]);
    return typeof r === 'string' ? Number(r) : undefined;
  }

  /**
   * Extends the TTL of entries this instance owns, in pipelined bursts of BURST. Resolves to the
   * ones that were missing.
   */
  async touch(sids: Iterable<string>): Promise<string[]> {
    const ttl = String(this.#ttlMs);
    const missing: string[] = [];
    await inBursts([...sids], async (sid) => {
      if ((await this.#link.send(['PEXPIRE', keys.session(sid), ttl])) !== 1) missing.push(sid);
    });
    return missing;
  }

  /** Writes every entry again (after Redis lost them), in pipelined bursts of BURST. */
  async registerAll(entries: Iterable<[string, DirectoryEntry]>): Promise<void> {
    await inBursts([...entries], ([sid, e]) => this.register(sid, e));
  }

  async remove(sid: string): Promise<void> {
    await this.#link.send(['DEL', keys.session(sid)]);
  }
}
