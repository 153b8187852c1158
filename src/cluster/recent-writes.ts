/**
 * The writes one client sent to Redis in the last seconds, kept to be sent again after a failover.
 *
 * Redis replicates asynchronously: a master acknowledges a write before its replicas have it, so a
 * replica promoted after the master died lacks the tail of what the master acknowledged (Redis docs,
 * "Replication": "Redis uses by default asynchronous replication"; Sentinel: "acknowledged writes
 * can be lost"). `WAIT` would close that gap per write, but it blocks the connection it is sent on,
 * and every command of an instance shares one pipelined connection. So each writer keeps what it
 * wrote within `windowMs` and, when its link reports a failover, sends it again, in the order it was
 * first sent (a pass). Writes older than the window are taken to have reached the replicas.
 *
 * That is only sound for writes that can be sent twice over a later state and change nothing the
 * second time unless the state lacks them: guarded transitions (a Lua script that checks status and
 * lease before it changes anything, and names the version of the record it first applied to),
 * `SET NX`, `ZADD NX`, `ZREM`, `DEL`; and only writes that changed something are kept (`keep`), so a
 * step once refused cannot succeed in another order.
 *
 * Other instances send their own writes again at the same time, and a write of this one may need
 * another's first (a settle that followed another instance's answer). With a `generationKey`, every
 * pass that changed something counts itself there (`INCR`), and each instance watches that count
 * after a failover: whenever it moves, it passes again, so the instances' writes land in an order
 * their steps allow, whatever order the instances learnt of the failover in. Each instance stops
 * watching once the count has not moved for `quietMs`, and a pass in progress counts as a move: it
 * beats (`INCR` on `<generationKey>:beat`) as it starts and every third of `quietMs` on its way, so
 * a pass slower than `quietMs` (thousands of kept writes, a loaded machine) does not end the
 * others' watch before its changes land. Without a key (writes that need no other's, such as DPoP
 * proof ids), one pass that reaches Redis is enough.
 */
import { positiveInt } from '../core/option-checks.js';
import { InvalidOptionError } from '../errors.js';
import { boundedWait } from '../flow/bounded-wait.js';
import { isReplyError, type RedisLink, type RedisReply } from './redis-link.js';
import type { Script } from './scripts.js';

export interface RecentWritesOptions {
  /**
   * How long a write is kept: longer than a write can take to reach the replicas. A master that
   * dies loses what its replicas had not yet received (its replication lag, well under a second
   * when they are healthy); a master cut off from its replicas takes writes until
   * `min-replicas-max-lag` (10 s by default) if `min-replicas-to-write` is set, else until the
   * sentinels replace it — set it (docs/scale-out.md). @defaultValue 15000
   */
  windowMs?: number;
  /** Bytes of arguments kept at most; past it the oldest writes go first. @defaultValue 8 MiB */
  maxBytes?: number;
  /** How often the generation count is read while watching after a failover. @defaultValue 1000 */
  pollMs?: number;
  /** Watching stops once the count has not moved for this long. @defaultValue 10000 */
  quietMs?: number;
}

/** Where passes in progress beat, beside the generation count. */
const beatKey = (generationKey: string): string => `${generationKey}:beat`;

export const RECENT_WRITES_DEFAULTS = {
  windowMs: 15_000,
  maxBytes: 8 * 1024 * 1024,
  pollMs: 1_000,
  quietMs: 10_000,
} as const;

/** What the owner of the writes tells it, beside the options. */
export interface RecentWritesParts {
  /** The scripts sent by SHA whose source a new master may not have (NOSCRIPT: sent by EVAL then). */
  scripts: readonly Script[];
  /**
   * Whether a write changed something, from Redis's reply: a pass counts those it sent that changed
   * something again. `script` is undefined for a plain command. @defaultValue every one counted
   */
  changed?: (script: Script | undefined, args: readonly string[], reply: RedisReply) => boolean;
  /**
   * What to keep of a write Redis answered: its arguments as they are to be sent again (a step may
   * name the version it applied to), or undefined when it changed nothing. @defaultValue kept as sent
   */
  keep?: (
    script: Script | undefined,
    args: readonly string[],
    reply: RedisReply,
  ) => readonly string[] | undefined;
  /** Kept writes that a pass does not send (kept for `afterPass` to read). @defaultValue all sent */
  resent?: (script: Script | undefined, args: readonly string[]) => boolean;
  /** Runs after each pass with every kept write; resolves with how many things it changed. */
  afterPass?: (writes: readonly (readonly string[])[], link: RedisLink) => Promise<number>;
  /** Where the instances count their passes that changed something (one key, any slot). */
  generationKey?: string;
  now?: () => number;
  /** A pass stopped at a connection error (the next starts again from the first write). */
  onError?: (error: unknown) => void;
}

/** Writes kept and their bytes; passes run; whether it still watches; writes sent again; dropped early. */
export interface RecentWritesStats {
  kept: number;
  bytes: number;
  passes: number;
  watching: boolean;
  replayed: number;
  dropped: number;
}

interface Write {
  readonly at: number;
  /** The arguments packed (`pack`) in UTF-8 outside V8's heap: see `pack`. */
  readonly packed: Buffer;
  readonly script: Script | undefined;
}

/**
 * The arguments as one string, each as `<length>:<text>`. Kept writes outlive several collections,
 * so what they hold reaches V8's old generation, and the collector's cost grew with it: a task echo
 * on Redis cost 1.41x the CPU with its writes kept as arrays of strings, 1.28x as one string each,
 * 1.02x with almost nothing kept (docs/benchmarks.md, section (j)). So a write is kept as these
 * bytes in a Buffer, whose contents the collector neither scans nor moves.
 */
export function pack(args: readonly string[]): string {
  const parts: string[] = [];
  for (const a of args) parts.push(String(a.length), ':', a);
  // join copies into one flat string: no rope of the pieces, no slice keeping a larger parent.
  return parts.join('');
}

export function unpack(packed: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < packed.length) {
    const colon = packed.indexOf(':', i);
    const n = Number(packed.slice(i, colon));
    out.push(packed.slice(colon + 1, colon + 1 + n));
    i = colon + 1 + n;
  }
  return out;
}

/** Commands that change no data: never kept (pub/sub is at most once, not state). */
const NOT_KEPT = new Set([
  'PUBLISH',
  'SPUBLISH',
  'GET',
  'HGET',
  'HMGET',
  'HGETALL',
  'EXISTS',
  'ZRANGE',
  'PTTL',
]);

/** The options with their defaults, checked (InvalidOptionError). */
export function checkedRecentWrites(o: RecentWritesOptions): Required<RecentWritesOptions> {
  if (typeof o !== 'object' || o === null)
    throw new InvalidOptionError('recentWrites: give an object of options, or false');
  const all = { ...RECENT_WRITES_DEFAULTS, ...o };
  for (const [name, v] of Object.entries(all)) positiveInt(`recentWrites: ${name}`, v);
  return all;
}

export class RecentWrites {
  readonly #o: Required<RecentWritesOptions>;
  readonly #p: RecentWritesParts;
  readonly #now: () => number;
  readonly #bySha = new Map<string, Script>();
  readonly #bySource = new Map<string, Script>();
  /** Oldest first; `#head` is the first still kept (a queue without shifting). */
  #writes: Write[] = [];
  #head = 0;
  #bytes = 0;
  /** While watching after a failover: writes from this time on are kept whatever their age. */
  #holdFrom: number | undefined;
  /** The failover being followed; a later one supersedes it. */
  #epoch = 0;
  #watching = false;
  /** Settles when the current watch must stop waiting (a later failover, close); then replaced. */
  #woken = Promise.resolve();
  #wake: () => void = () => undefined;
  #passes = 0;
  #replayed = 0;
  #dropped = 0;
  #closed = false;

  constructor(options: RecentWritesOptions, parts: RecentWritesParts) {
    this.#o = checkedRecentWrites(options);
    this.#p = parts;
    this.#now = parts.now ?? Date.now;
    for (const s of parts.scripts) {
      this.#bySha.set(s.sha, s);
      this.#bySource.set(s.source, s);
    }
  }

  stats(): RecentWritesStats {
    return {
      kept: this.#writes.length - this.#head,
      bytes: this.#bytes,
      passes: this.#passes,
      watching: this.#watching,
      replayed: this.#replayed,
      dropped: this.#dropped,
    };
  }

  /** `link`, keeping every write sent through it that changed something. */
  over(link: RedisLink): RedisLink {
    return {
      send: async (args) => {
        const reply = await link.send(args);
        this.sent(args, reply);
        return reply;
      },
      close: () => link.close(),
    };
  }

  #scriptOf(args: readonly string[]): Script | undefined {
    const command = args[0];
    if (command === 'EVALSHA') return this.#bySha.get(args[1] ?? '');
    return command === 'EVAL' ? this.#bySource.get(args[1] ?? '') : undefined;
  }

  /** A write sent on the owner's own path and answered `reply`: kept if it changed something. */
  sent(sent: readonly string[], reply: RedisReply): void {
    // Upper case as the owners send them (no case folding per write).
    if (this.#closed || NOT_KEPT.has(sent[0] ?? '')) return;
    const script = this.#scriptOf(sent);
    // Kept by SHA (the source once, in the script), sent again by EVAL only on NOSCRIPT.
    const bySha =
      sent[0] === 'EVAL' && script !== undefined ? ['EVALSHA', script.sha, ...sent.slice(2)] : sent;
    const args = this.#p.keep === undefined ? bySha : this.#p.keep(script, bySha, reply);
    if (args === undefined) return;
    const packed = Buffer.from(pack(args), 'utf8');
    const now = this.#now();
    this.#writes.push({ at: now, packed, script });
    this.#bytes += 16 + packed.length;
    this.#prune(now);
  }

  #prune(now: number): void {
    const cutoff = Math.min(now - this.#o.windowMs, this.#holdFrom ?? Number.POSITIVE_INFINITY);
    for (;;) {
      const w = this.#writes[this.#head];
      if (w === undefined) break;
      const old = w.at < cutoff;
      if (!old && this.#bytes <= this.#o.maxBytes) break;
      if (!old) this.#dropped++;
      this.#bytes -= 16 + w.packed.length;
      this.#head++;
    }
    // Compact once the dead head is half the array: amortised O(1) per write.
    if (this.#head > 64 && this.#head * 2 > this.#writes.length) {
      this.#writes = this.#writes.slice(this.#head);
      this.#head = 0;
    }
  }

  /**
   * The link reached a promoted replica: pass at once, then watch (module comment). The writes of
   * the window before now stay kept while it watches; a later failover starts over.
   */
  failedOver(link: RedisLink): void {
    if (this.#closed) return;
    const epoch = ++this.#epoch;
    this.#interrupt();
    this.#holdFrom = this.#now() - this.#o.windowMs;
    this.#watching = true;
    void this.#watch(link, epoch).finally(() => {
      if (epoch !== this.#epoch) return;
      this.#watching = false;
      this.#holdFrom = undefined;
    });
  }

  async #watch(link: RedisLink, epoch: number): Promise<void> {
    const key = this.#p.generationKey;
    const live = () => !this.#closed && epoch === this.#epoch;
    // The count as a number (nil: 0); NaN while the link fails, which differs from every count.
    const look = async (k: string): Promise<number> =>
      Number((await link.send(['GET', k]).catch(() => 'x')) ?? 0);
    let [seen, beats] = key === undefined ? [0, 0] : await Promise.all([look(key), look(beatKey(key))]);
    let moved = this.#now();
    while (live()) {
      // A pass the link failed (undefined) is tried again while not quiet; it moves nothing.
      const changed = await this.#pass(link);
      if (changed !== undefined && key === undefined) return;
      if (changed !== undefined && changed > 0 && key !== undefined) {
        moved = this.#now();
        const g = await link.send(['INCR', key]).catch(() => undefined);
        await link.send(['PEXPIRE', key, String(this.#o.quietMs * 10)]).catch(() => undefined);
        // Ours alone since the last look: nothing new to pass for. Another's too: pass again below.
        if (g === seen + 1) seen = g;
      }
      for (;;) {
        const asleep = this.#now();
        await boundedWait(this.#woken, this.#o.pollMs);
        if (!live()) return;
        // Woken over twice as late as asked: our own stall, not a quiet peer's (docs/design.md).
        const late = this.#now() - asleep - this.#o.pollMs;
        if (late > this.#o.pollMs) moved += late;
        if (key === undefined || changed === undefined) {
          if (this.#now() - moved >= this.#o.quietMs) return;
          break;
        }
        const [g, b] = await Promise.all([look(key), look(beatKey(key))]);
        // Another instance is still passing: not quiet, though nothing to pass for yet.
        if (b !== beats && !Number.isNaN(b)) {
          beats = b;
          moved = this.#now();
        }
        if (g !== seen && !Number.isNaN(g)) {
          seen = g;
          moved = this.#now();
          break;
        }
        if (this.#now() - moved >= this.#o.quietMs) return;
      }
    }
  }

  /** Ends the current watch's wait, and makes the next one's. */
  #interrupt(): void {
    this.#wake();
    this.#woken = new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  /** One pass: every kept write, in order, one at a time (order across Cluster shards too). How many changed something; undefined when the link failed. */
  async #pass(link: RedisLink): Promise<number | undefined> {
    this.#passes++;
    const writes = this.#writes
      .slice(this.#head)
      .map((w) => ({ script: w.script, args: unpack(w.packed.toString('utf8')) }));
    let changed = 0;
    const key = this.#p.generationKey;
    let beat = Number.NEGATIVE_INFINITY;
    for (const w of writes) {
      if (this.#closed) return 0;
      if (key !== undefined && this.#now() - beat >= this.#o.quietMs / 3) {
        beat = this.#now();
        await this.#beat(link, key);
      }
      if (this.#p.resent !== undefined && !this.#p.resent(w.script, w.args)) continue;
      try {
        const reply = await this.#resend(link, w.args);
        this.#replayed++;
        if (this.#p.changed?.(w.script, w.args, reply) ?? true) changed++;
      } catch (error) {
        // An error reply is this write's alone (skipped); anything else is the link: stop the pass.
        if (isReplyError(error)) continue;
        this.#p.onError?.(error);
        return undefined;
      }
    }
    if (this.#p.afterPass === undefined) return changed;
    try {
      return (
        changed +
        (await this.#p.afterPass(
          writes.map((w) => w.args),
          link,
        ))
      );
    } catch (error) {
      this.#p.onError?.(error);
      return undefined;
    }
  }

  /** Tells the watching instances this one is passing (module comment); a failed beat is skipped. */
  async #beat(link: RedisLink, key: string): Promise<void> {
    const beats = beatKey(key);
    await Promise.all([
      link.send(['INCR', beats]).catch(() => undefined),
      link.send(['PEXPIRE', beats, String(this.#o.quietMs * 10)]).catch(() => undefined),
    ]);
  }

  async #resend(link: RedisLink, args: readonly string[]): Promise<RedisReply> {
    try {
      return await link.send(args);
    } catch (error) {
      const source = args[0] === 'EVALSHA' ? this.#bySha.get(args[1] ?? '')?.source : undefined;
      if (
        source === undefined ||
        !isReplyError(error) ||
        !String((error as Error).message).includes('NOSCRIPT')
      )
        throw error;
      return link.send(['EVAL', source, ...args.slice(2)]);
    }
  }

  /** Stops watching and keeps nothing more. */
  close(): void {
    this.#closed = true;
    this.#interrupt();
    this.#writes = [];
    this.#head = 0;
    this.#bytes = 0;
  }
}
