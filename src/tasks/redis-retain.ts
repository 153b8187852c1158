/**
 * How long the Redis task store keeps finished tasks beyond their TTL's say: within the bounds of
 * each client (FinishedBounds, store.ts: `sl:tdone:{C}` and `sl:tbytes:{C}`) and within the store's
 * bounds over all clients (`maxFinished`, `maxFinishedBytes`: `sl:tfinished:{all}` and
 * `sl:tfbytes:{all}`), each a ZSET by expiry and a HASH of sizes changed by one RETAIN script; past
 * either, the first to expire go (2025-11-25 tasks §"Resource Management": no indefinite retention).
 * The two pairs live in different slots of a Redis Cluster, so they are two script calls, run at
 * once; a task one bound drops is forgotten by the other (FORGET), so neither counts a task that is
 * gone. A DEL or FORGET that fails leaves a task, or its count, until its TTL, as before there were
 * bounds: a bound is never made looser than asked, only briefly tighter.
 */
import { keys } from '../cluster/keys.js';
import type { RedisLink } from '../cluster/redis-link.js';
import { InvalidOptionError } from '../errors.js';
import { isTaskIdShape } from './model.js';
import { FORGET, RETAIN } from './redis-scripts.js';
import { type FinishedBounds, finishedBounds } from './store.js';

/** The store's bounds over all clients' finished tasks, beside each client's (FinishedBounds). */
export interface AllFinishedBounds {
  /** Finished tasks kept, all clients together. @defaultValue 100000 */
  maxFinished?: number;
  /** Bytes of finished tasks kept, all clients together. @defaultValue 512 MiB */
  maxFinishedBytes?: number;
}

export const ALL_FINISHED_DEFAULTS = { maxFinished: 100_000, maxFinishedBytes: 512 * 1024 * 1024 } as const;

/** `<task id>:<client>`: a member of the all-clients pair names the client whose pair counts it too. */
const member = (taskId: string, client: string): string => `${taskId}:${client}`;

export class FinishedRetention {
  readonly #link: RedisLink;
  readonly #now: () => number;
  readonly #client: Required<FinishedBounds>;
  readonly #all: Required<AllFinishedBounds>;

  constructor(link: RedisLink, now: () => number, o: FinishedBounds & AllFinishedBounds) {
    this.#link = link;
    this.#now = now;
    this.#client = finishedBounds('RedisTaskStore', o);
    const all = {
      maxFinished: o.maxFinished ?? ALL_FINISHED_DEFAULTS.maxFinished,
      maxFinishedBytes: o.maxFinishedBytes ?? ALL_FINISHED_DEFAULTS.maxFinishedBytes,
    };
    for (const [name, v] of Object.entries(all)) {
      if (!Number.isSafeInteger(v) || v <= 0)
        throw new InvalidOptionError(`RedisTaskStore: ${name} must be a positive integer`);
    }
    this.#all = all;
  }

  /**
   * Counts a finished task against its client's bounds and the store's, and deletes the tasks that
   * fall beyond them: the client's own oldest for its bounds, anyone's oldest for the store's.
   */
  async retain(client: string, taskId: string, expiresAt: number, bytes: number): Promise<void> {
    const now = String(this.#now());
    const [mine, all] = await Promise.all([
      RETAIN.run(
        this.#link,
        [keys.clientDone(client), keys.clientDoneBytes(client)],
        [
          now,
          taskId,
          String(expiresAt),
          String(bytes),
          String(this.#client.maxFinishedPerClient),
          String(this.#client.maxFinishedBytesPerClient),
        ],
      ),
      RETAIN.run(
        this.#link,
        [keys.allDone, keys.allDoneBytes],
        [
          now,
          member(taskId, client),
          String(expiresAt),
          String(bytes),
          String(this.#all.maxFinished),
          String(this.#all.maxFinishedBytes),
        ],
      ),
    ]);
    const gone = new Set<string>();
    const work: Promise<unknown>[] = [];
    // The client's own: no longer counted over all clients.
    const mineGone = (Array.isArray(mine) ? mine : []).filter(isTaskIdShape);
    for (const id of mineGone) gone.add(id);
    if (mineGone.length > 0) {
      const members = mineGone.map((id) => member(id, client));
      work.push(FORGET.run(this.#link, [keys.allDone, keys.allDoneBytes], members));
    }
    // Anyone's, over all clients: no longer counted by their client.
    const byClient = new Map<string, string[]>();
    for (const m of Array.isArray(all) ? all : []) {
      if (typeof m !== 'string') continue;
      // A task id has no colon (isTaskIdShape): the first one ends it.
      const at = m.indexOf(':');
      const id = m.slice(0, at);
      const owner = m.slice(at + 1);
      if (at < 0 || !isTaskIdShape(id) || owner === '') continue;
      gone.add(id);
      byClient.set(owner, [...(byClient.get(owner) ?? []), id]);
    }
    for (const [owner, ids] of byClient)
      work.push(FORGET.run(this.#link, [keys.clientDone(owner), keys.clientDoneBytes(owner)], ids));
    for (const id of gone) work.push(this.#link.send(['DEL', keys.task(id)]));
    await Promise.all(work);
  }
}
