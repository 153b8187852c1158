/**
 * The default task store: one process's memory, bounded by count, by bytes and by each task's TTL.
 * A finished task (the one finished longest ago) is evicted first when room is needed; a store
 * full of live tasks refuses a new one (`store-full`) rather than dropping a task someone still
 * polls. Each client's finished tasks are bounded too (FinishedBounds, store.ts), so one client
 * cannot push the others' results out. Tasks die with the process:
 * for tasks that outlive it, or that any instance of a cluster answers, use the Redis store.
 */
import { InvalidOptionError } from '../errors.js';
import { BoundedMap } from '../flow/bounded-map.js';
import { copyRecord, isTerminal, OWNER_LOST, type TaskRecord } from './model.js';
import {
  type AnswerOutcome,
  type CreateOutcome,
  type FinishedBounds,
  finishedBounds,
  recordBytes,
  type Settlement,
  type TaskPage,
  type TaskProgress,
  type TaskStore,
} from './store.js';

export interface MemoryTaskStoreOptions extends FinishedBounds {
  /** Tasks kept at once, finished ones included. @defaultValue 10000 */
  maxTasks?: number;
  /** Bytes of calls, results, errors and inputs kept at once. @defaultValue 64 MiB */
  maxBytes?: number;
  /** Clock, for tests. @defaultValue Date.now */
  now?: () => number;
}

/** The store's own records are written in place (TaskRecord's readonly fields are the callers'). */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export const MEMORY_STORE_DEFAULTS = { maxTasks: 10_000, maxBytes: 64 * 1024 * 1024 } as const;

function positiveInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v <= 0) throw new InvalidOptionError(`${name} must be a positive integer`);
  return v;
}

export class MemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, { t: TaskRecord; bytes: number }>();
  /**
   * Finished task ids in the order they finished: eviction takes the oldest. Not the Map's own
   * order, read from its front, which walks every deleted slot V8 has not compacted yet (5 µs a
   * creation at 10,000 tasks, measured; flow/bounded-map.ts). A task leaves it when it is dropped.
   */
  readonly #finishOrder = new BoundedMap<string, true>(Number.POSITIVE_INFINITY);
  readonly #listeners = new Set<(taskId: string) => void>();
  /** Each client's unfinished tasks: the per-client limit costs O(that client's tasks), not O(all). */
  readonly #unfinished = new Map<string, Set<string>>();
  /** Each owner's tasks in creation order, for `list`. */
  readonly #byOwner = new Map<string, Set<string>>();
  /** Each client's finished tasks, the one finished longest ago first, with their bytes (FinishedBounds). */
  readonly #finishedBy = new Map<string, { ids: BoundedMap<string, number>; bytes: number }>();
  readonly #bounds: Required<FinishedBounds>;
  /** A full TTL sweep runs at most once a second (reads drop expired tasks on their own). */
  #nextSweep = 0;
  readonly #maxTasks: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  #bytes = 0;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.#maxTasks = positiveInt('maxTasks', options.maxTasks ?? MEMORY_STORE_DEFAULTS.maxTasks);
    this.#maxBytes = positiveInt('maxBytes', options.maxBytes ?? MEMORY_STORE_DEFAULTS.maxBytes);
    this.#now = options.now ?? Date.now;
    this.#bounds = finishedBounds('MemoryTaskStore', options);
  }

  /** Tasks and bytes held (stats, tests). */
  get size(): { tasks: number; bytes: number } {
    return { tasks: this.#tasks.size, bytes: this.#bytes };
  }

  async create(t: TaskRecord, maxLivePerClient: number): Promise<CreateOutcome> {
    this.#expire();
    const mine = this.#unfinished.get(t.client);
    // At the limit, reading each applies TTL and lease lapse first: a task whose runner died frees
    // its slot. Below it nothing needs freeing, so the common creation reads none of them.
    // (A Set may lose entries while it is iterated: #live drops expired and lapsed ones.)
    if (mine !== undefined && mine.size >= maxLivePerClient) for (const id of mine) this.#live(id);
    if ((mine?.size ?? 0) >= maxLivePerClient) return 'client-limit';
    const bytes = recordBytes(t);
    if (!this.#makeRoom(bytes)) return 'store-full';
    this.#tasks.set(t.taskId, { t: copyRecord(t), bytes });
    this.#bytes += bytes;
    // The per-owner and per-client sets are stored once, when made (not written back per task).
    // Both are read again here, not taken from above: the limit's reads and #makeRoom's evictions
    // may have emptied a set and let it go from its map.
    const owned = this.#byOwner.get(t.owner);
    if (owned === undefined) this.#byOwner.set(t.owner, new Set([t.taskId]));
    else owned.add(t.taskId);
    if (isTerminal(t.status)) {
      this.#finishOrder.set(t.taskId, true);
      this.#retain(t, bytes);
    } else {
      const live = this.#unfinished.get(t.client);
      if (live === undefined) this.#unfinished.set(t.client, new Set([t.taskId]));
      else live.add(t.taskId);
    }
    return 'created';
  }

  async get(taskId: string, owner: string): Promise<TaskRecord | undefined> {
    const t = this.#live(taskId);
    return t === undefined || t.owner !== owner ? undefined : copyRecord(t);
  }

  async renew(taskId: string, runner: string, leaseUntil: number): Promise<boolean> {
    // The runner's own steps do not lapse its lease (store.ts TaskStore.renew).
    const t = this.#live(taskId, false);
    if (t === undefined || !leased(t) || t.leaseOwner !== runner) return false;
    t.leaseUntil = leaseUntil;
    return true;
  }

  async progress(taskId: string, runner: string, p: TaskProgress): Promise<void> {
    const t = this.#live(taskId, false);
    if (t === undefined || t.status !== 'working' || t.leaseOwner !== runner) return;
    this.#replace(t, {
      lastUpdatedAt: this.#now(),
      ...(p.message === undefined ? {} : { statusMessage: p.message }),
      ...(p.partialText === undefined
        ? {}
        : { partialText: p.partialText, partialTruncated: p.partialTruncated === true }),
    });
  }

  async settle(taskId: string, runner: string, s: Settlement): Promise<boolean> {
    // The runner's own steps do not lapse its lease (store.ts TaskStore.renew).
    const t = this.#live(taskId, false);
    if (t === undefined || t.status !== 'working' || t.leaseOwner !== runner) return false;
    // Written field by field on the store's own record (every field exists: copyRecord), then one
    // byte count: the status, its payload, the lease and partial text let go.
    const w = t as Mutable<TaskRecord>;
    w.status = s.status;
    w.lastUpdatedAt = this.#now();
    // Kept only by a runner that goes on running while the task waits for input (store.ts).
    const kept = s.status === 'input_required' ? s.leaseUntil : undefined;
    w.leaseOwner = kept === undefined ? undefined : runner;
    w.leaseUntil = kept;
    w.partialText = undefined;
    w.partialTruncated = undefined;
    if (s.message !== undefined) w.statusMessage = s.message;
    if (s.status === 'completed' || s.status === 'failed') {
      // A finished task has no later round: its call text (read only by roundRequest) is let go
      // while it is young, instead of being kept, copied and counted until the task expires.
      w.call = '';
      w.result = s.result;
      if (s.status === 'failed') w.error = s.error;
    } else {
      w.inputRequests = s.inputRequests;
      w.requestState = s.requestState;
      w.inputResponses = {};
    }
    this.#recount(t);
    return true;
  }

  async cancel(taskId: string, owner: string, message?: string): Promise<TaskRecord | undefined> {
    const t = this.#live(taskId);
    if (t === undefined || t.owner !== owner) return undefined;
    if (!isTerminal(t.status)) {
      // What only a running task has goes (the last progress message, the partial text, the next
      // round's state): a cancel does not depend on what the runner wrote just before it, so the
      // writes sent again after a failover (redis-rewrite.ts) end alike in either order.
      this.#replace(t, {
        statusMessage: message,
        status: 'cancelled',
        lastUpdatedAt: this.#now(),
        leaseOwner: undefined,
        leaseUntil: undefined,
        inputRequests: undefined,
        inputResponses: undefined,
        requestState: undefined,
        partialText: undefined,
        partialTruncated: undefined,
      });
      for (const l of this.#listeners) l(taskId);
    }
    return copyRecord(t);
  }

  async answer(
    taskId: string,
    owner: string,
    responses: Record<string, string>,
    runner: string,
    leaseUntil: number,
  ): Promise<AnswerOutcome | undefined> {
    const t = this.#live(taskId);
    if (t === undefined || t.owner !== owner) return undefined;
    if (t.status !== 'input_required' || t.inputRequests === undefined)
      return { task: copyRecord(t), resume: false };
    const pending = { ...t.inputRequests };
    const answered = { ...(t.inputResponses ?? {}) };
    let stored = false;
    for (const [k, v] of Object.entries(responses)) {
      if (!Object.hasOwn(pending, k)) continue;
      delete pending[k];
      answered[k] = v;
      stored = true;
    }
    const resume = Object.keys(pending).length === 0;
    // An answer to no open question changes nothing while others are open (as redis-scripts.ts ANSWER).
    if (!resume && !stored) return { task: copyRecord(t), resume: false };
    this.#replace(
      t,
      resume
        ? {
            status: 'working',
            inputRequests: undefined,
            inputResponses: answered,
            leaseOwner: runner,
            leaseUntil,
            lastUpdatedAt: this.#now(),
          }
        : { inputRequests: pending, inputResponses: answered, lastUpdatedAt: this.#now() },
    );
    return { task: copyRecord(t), resume };
  }

  async list(owner: string, cursor: string | undefined, limit: number): Promise<TaskPage | undefined> {
    this.#expire();
    const ids = [...(this.#byOwner.get(owner) ?? [])];
    // The cursor is the id of the last task of the page before: a task of this owner's, still kept.
    let start = 0;
    if (cursor !== undefined) {
      const at = ids.indexOf(cursor);
      if (at < 0) return undefined;
      start = at + 1;
    }
    const tasks: TaskRecord[] = [];
    let i = start;
    for (; i < ids.length && tasks.length < limit; i++) {
      const t = this.#live(ids[i] as string);
      if (t !== undefined) tasks.push(copyRecord(t));
    }
    const last = tasks.at(-1);
    return i < ids.length && last !== undefined ? { tasks, nextCursor: last.taskId } : { tasks };
  }

  onCancel(listener: (taskId: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }

  /**
   * The stored record (mutable, internal), after TTL expiry and (unless `lapse` is false: a step
   * of the runner's own) lease lapse were applied.
   */
  #live(taskId: string, lapse = true): TaskRecord | undefined {
    const e = this.#tasks.get(taskId);
    if (e === undefined) return undefined;
    const now = this.#now();
    if (now >= e.t.createdAt + e.t.ttlMs) {
      this.#drop(taskId);
      return undefined;
    }
    const t = e.t;
    if (leased(t) && t.leaseUntil !== undefined && t.leaseUntil < now && lapse) {
      this.#replace(t, {
        status: 'failed',
        error: OWNER_LOST,
        lastUpdatedAt: now,
        leaseOwner: undefined,
        leaseUntil: undefined,
      });
    }
    return t;
  }

  /** Applies a change to a stored record and keeps the byte count right. */
  #replace(t: TaskRecord, patch: Partial<TaskRecord>): void {
    // Fields let go stay as undefined rather than deleted: a deleted property turns the record
    // into a dictionary-mode object, and every later read of it slows down.
    Object.assign(t, patch);
    this.#recount(t);
  }

  /** After a change to a stored record: its byte count, and whether it still counts as live. */
  #recount(t: TaskRecord): void {
    const e = this.#tasks.get(t.taskId);
    if (e === undefined) return;
    const bytes = recordBytes(t);
    this.#bytes += bytes - e.bytes;
    e.bytes = bytes;
    if (isTerminal(t.status)) {
      this.#finished(t);
      this.#finishOrder.set(t.taskId, true);
      this.#retain(t, bytes);
    }
  }

  /** Counts a finished task against its client's bounds; beyond them, that client's oldest go. */
  #retain(t: TaskRecord, bytes: number): void {
    let mine = this.#finishedBy.get(t.client);
    if (mine === undefined) {
      mine = { ids: new BoundedMap<string, number>(Number.POSITIVE_INFINITY), bytes: 0 };
      this.#finishedBy.set(t.client, mine);
    }
    mine.bytes += bytes - (mine.ids.get(t.taskId) ?? 0);
    mine.ids.set(t.taskId, bytes);
    const { maxFinishedPerClient, maxFinishedBytesPerClient } = this.#bounds;
    while (
      mine.ids.size > 1 &&
      (mine.ids.size > maxFinishedPerClient || mine.bytes > maxFinishedBytesPerClient)
    ) {
      const oldest = mine.ids.oldestKey();
      if (oldest === undefined) break;
      this.#drop(oldest);
    }
  }

  #finished(t: TaskRecord): void {
    const set = this.#unfinished.get(t.client);
    if (set === undefined) return;
    set.delete(t.taskId);
    if (set.size === 0) this.#unfinished.delete(t.client);
  }

  #drop(taskId: string): void {
    const e = this.#tasks.get(taskId);
    if (e === undefined) return;
    this.#tasks.delete(taskId);
    this.#finishOrder.delete(taskId);
    this.#bytes -= e.bytes;
    const mine = this.#finishedBy.get(e.t.client);
    const kept = mine?.ids.get(taskId);
    if (mine !== undefined && kept !== undefined) {
      mine.ids.delete(taskId);
      mine.bytes -= kept;
      if (mine.ids.size === 0) this.#finishedBy.delete(e.t.client);
    }
    this.#finished(e.t);
    const owned = this.#byOwner.get(e.t.owner);
    owned?.delete(taskId);
    if (owned?.size === 0) this.#byOwner.delete(e.t.owner);
  }

  #expire(): void {
    const now = this.#now();
    if (now < this.#nextSweep) return;
    this.#nextSweep = now + 1000;
    // Values, not entries: no [key, value] pair allocated per task kept.
    for (const e of this.#tasks.values()) if (now >= e.t.createdAt + e.t.ttlMs) this.#drop(e.t.taskId);
  }

  /** Evicts finished tasks, the one finished longest ago first, until `bytes` more fit; false when live tasks fill it. */
  #makeRoom(bytes: number): boolean {
    while (!this.#fits(bytes)) {
      const id = this.#finishOrder.oldestKey();
      if (id === undefined) return false;
      this.#drop(id);
    }
    return true;
  }

  #fits(bytes: number): boolean {
    return this.#tasks.size < this.#maxTasks && this.#bytes + bytes <= this.#maxBytes;
  }
}

/** A task whose runner holds a lease: working, or waiting for input with its lease kept (store.ts). */
function leased(t: TaskRecord): boolean {
  return t.status === 'working' || (t.status === 'input_required' && t.leaseUntil !== undefined);
}
