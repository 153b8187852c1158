/**
 * The owner's memory of the hop signatures it accepted, so that a captured `x-sluice-forward`
 * header is good once: a second request with the same signature within its window is refused (a
 * replayed POST would run the call again; a replayed GET would open the session's GET stream).
 *
 * **Per owner, in memory, not in Redis.** A signature names the incarnation it is meant for (`to`),
 * and an owner accepts only its own incarnation (another gets 421): after a restart, even at the same
 * address and within the 30 s window, every signature made for the previous process is refused
 * before it gets here. So nothing an owner must remember outlives the owner, and a memory cache is
 * complete; a Redis `SET NX PX` per forwarded request would add a round trip to every hop (0 today
 * on a directory-cache hit) and make forwarding fail while Redis does.
 *
 * **Bounded.** Only signatures that verified are remembered (an attacker without the key cannot add
 * any), each until its window ends (`ts` + the window: after that `verifyForward` refuses it as
 * expired). When `capacity` entries are held the oldest is dropped and its peer's *floor* is raised
 * to its time: a signature from that peer at or before the floor can no longer be told from a
 * replay, and is answered 'crowded' (503 + Retry-After: the relay's client sends the request again,
 * freshly signed). The floor is per peer because peers' clocks differ; a request reaches 'crowded'
 * only when it was in flight longer than `capacity` forwards from its peer take to arrive.
 */
import { FORWARD_WINDOW_MS } from './forward-auth.js';

export type ReplayVerdict = 'fresh' | 'replayed' | 'crowded';

export class ReplayGuard {
  /** Nonces held, for the membership test. */
  readonly #seen = new Set<string>();
  /**
   * The same nonces in arrival order with their time and peer: a queue (arrays read from `#head`,
   * compacted now and then). A Map used as a queue is not one: V8 leaves a hole per deleted entry at
   * its front and every walk from the front skips them all (50-95 µs an admit, measured, at 50,000).
   */
  #nonces: string[] = [];
  #times: number[] = [];
  #froms: string[] = [];
  #head = 0;
  /** peer → the newest `ts` of an entry dropped before its window ended. */
  readonly #floor = new Map<string, number>();
  /** One string per peer id for all its entries (a cluster has a handful of peers). */
  readonly #peers = new Map<string, string>();
  readonly #capacity: number;
  readonly #windowMs: number;
  #replayed = 0;
  get replayed(): number {
    return this.#replayed;
  }
  #crowded = 0;
  get crowded(): number {
    return this.#crowded;
  }

  constructor(capacity = 50_000, windowMs = FORWARD_WINDOW_MS) {
    this.#capacity = capacity;
    this.#windowMs = windowMs;
  }

  get size(): number {
    return this.#seen.size;
  }

  /** Records a verified signature; 'fresh' the first time, 'replayed' after. */
  admit(from: string, ts: number, nonceText: string, now = Date.now()): ReplayVerdict {
    this.#sweep(now);
    // The nonce's 12 bytes as a 12-character string: a flat copy. The base64url text is a slice of
    // the whole header, and held in the set it would keep the header alive.
    const nonce = Buffer.from(nonceText, 'base64url').toString('latin1');
    if (this.#seen.has(nonce)) {
      this.#replayed++;
      return 'replayed';
    }
    const floor = this.#floor.get(from);
    if (floor !== undefined && ts <= floor) {
      this.#crowded++;
      return 'crowded';
    }
    if (this.#seen.size >= this.#capacity) {
      const at = this.#head;
      const t = this.#times[at] as number;
      const f = this.#froms[at] as string;
      this.#drop();
      if (t + this.#windowMs >= now) this.#floor.set(f, Math.max(this.#floor.get(f) ?? 0, t));
    }
    let peer = this.#peers.get(from);
    if (peer === undefined) {
      if (this.#peers.size >= 1_024) this.#peers.clear();
      peer = Buffer.from(from, 'latin1').toString('latin1');
      this.#peers.set(peer, peer);
    }
    this.#seen.add(nonce);
    this.#nonces.push(nonce);
    this.#times.push(ts);
    this.#froms.push(peer);
    return 'fresh';
  }

  /** Drops the oldest entry; compacts the queue once half of it is consumed. */
  #drop(): void {
    const at = this.#head++;
    this.#seen.delete(this.#nonces[at] as string);
    if (this.#head >= 1_024 && this.#head * 2 >= this.#nonces.length) {
      this.#nonces = this.#nonces.slice(this.#head);
      this.#times = this.#times.slice(this.#head);
      this.#froms = this.#froms.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Drops entries (and floors) whose window has ended, oldest first, stopping at the first live one. */
  #sweep(now: number): void {
    while (this.#head < this.#nonces.length && (this.#times[this.#head] as number) + this.#windowMs < now) {
      this.#drop();
    }
    if (this.#floor.size > 0) {
      for (const [peer, ts] of this.#floor) if (ts + this.#windowMs < now) this.#floor.delete(peer);
    }
  }
}
