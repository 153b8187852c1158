/**
 * The task store on Redis, over the cluster's `RedisLink` seam: every instance sharing the Redis
 * answers `tasks/get`, `tasks/update` and `tasks/cancel` for any task without forwarding, and a
 * finished task's result outlives the instance that ran it (until its TTL; Redis persistence is the
 * operator's choice). Each task is one HASH under its own hash tag (`sl:task:{id}`), changed only
 * by the atomic scripts of redis-scripts.ts; the unfinished tasks of a client are a ZSET scored by
 * when each stops counting (its lease's end while running, its TTL otherwise), so a client's
 * tasks left by a dead instance stop counting against its limit once their lease lapses.
 *
 * A cancel is published on `sl:task-cancel` so the instance running the task aborts its tool at
 * once; pub/sub is at most once, so the runner's next lease renewal (which fails on a cancelled
 * task) is the backstop.
 */
import { keys } from '../cluster/keys.js';
import {
  checkedRecentWrites,
  type RecentWrites,
  type RecentWritesOptions,
  type RecentWritesStats,
} from '../cluster/recent-writes.js';
import type { RedisLink, RedisReply } from '../cluster/redis-link.js';
import { InvalidOptionError } from '../errors.js';
import { clientHash } from './client-hash.js';
import { isTaskIdShape, type TaskError, type TaskRecord, type TaskStatus } from './model.js';
import { type AllFinishedBounds, FinishedRetention } from './redis-retain.js';
import { recentTaskWrites } from './redis-rewrite.js';
import { ANSWER, CANCEL, CREATE, GET, OWN, PAGE, PROGRESS, RENEW, RESERVE, SETTLE } from './redis-scripts.js';
import {
  type AnswerOutcome,
  type CreateOutcome,
  type FinishedBounds,
  recordBytes,
  type Settlement,
  type TaskPage,
  type TaskProgress,
  type TaskStore,
} from './store.js';

export interface RedisTaskStoreOptions extends FinishedBounds, AllFinishedBounds {
  /** Clock, for tests. @defaultValue Date.now */
  now?: () => number;
  /** Called when subscribing to the cancel channel fails (cancels then reach runners at their next renewal). */
  onError?: (error: unknown) => void;
  /** close() closes the link too (the store opened it). @defaultValue false */
  closeLink?: boolean;
  /**
   * On a link that can fail over (`RedisLink.onFailover`: Sentinel, a Redis Cluster), the store keeps
   * the writes of the last `windowMs` and sends them again after a failover, so that a task Redis
   * acknowledged is not lost with the master (cluster/recent-writes.ts). `false`: not kept.
   * @defaultValue RECENT_WRITES_DEFAULTS (15 s, 8 MiB at most)
   */
  recentWrites?: RecentWritesOptions | false;
}

const STATUSES = new Set<string>(['working', 'input_required', 'completed', 'failed', 'cancelled']);

function fieldsOf(reply: RedisReply): Map<string, string> {
  const m = new Map<string, string>();
  if (!Array.isArray(reply)) return m;
  for (let i = 0; i + 1 < reply.length; i += 2) {
    const k = reply[i];
    const v = reply[i + 1];
    if (typeof k === 'string' && typeof v === 'string') m.set(k, v);
  }
  return m;
}

function num(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** A record from its HASH; undefined when a field is missing or malformed (never trusted blindly). */
export function recordOf(taskId: string, reply: RedisReply): TaskRecord | undefined {
  const f = fieldsOf(reply);
  const s = f.get('s');
  const createdAt = num(f.get('ca'));
  const ttlMs = num(f.get('ttl'));
  const pollIntervalMs = num(f.get('pi'));
  const owner = f.get('o');
  const client = f.get('c');
  const call = f.get('call');
  if (
    s === undefined ||
    !STATUSES.has(s) ||
    owner === undefined ||
    client === undefined ||
    call === undefined
  )
    return undefined;
  if (createdAt === undefined || ttlMs === undefined || pollIntervalMs === undefined) return undefined;
  const t: TaskRecord = {
    taskId,
    owner,
    client,
    status: s as TaskStatus,
    createdAt,
    lastUpdatedAt: num(f.get('u')) ?? createdAt,
    ttlMs,
    pollIntervalMs,
    call,
    ...(f.get('ph') === undefined ? {} : { paramHeaders: f.get('ph') }),
  };
  const m = f.get('m');
  if (m !== undefined) t.statusMessage = m;
  const pt = f.get('pt');
  if (pt !== undefined) {
    t.partialText = pt;
    t.partialTruncated = f.get('ptx') === '1';
  }
  const r = f.get('r');
  if (r !== undefined) t.result = r;
  const e = f.get('e');
  if (e !== undefined) t.error = JSON.parse(e) as TaskError;
  const rs = f.get('rs');
  if (rs !== undefined) t.requestState = rs;
  const lo = f.get('lo');
  if (lo !== undefined) t.leaseOwner = lo;
  const lu = num(f.get('lu'));
  if (lu !== undefined) t.leaseUntil = lu;
  // Keys come from the tool and the client: no prototype for `__proto__` to reach.
  const inputs: Record<string, string> = Object.create(null);
  const answers: Record<string, string> = Object.create(null);
  for (const [k, v] of f) {
    if (k.startsWith('i:')) inputs[k.slice(2)] = v;
    else if (k.startsWith('a:')) answers[k.slice(2)] = v;
  }
  if (t.status === 'input_required' || Object.keys(inputs).length > 0) t.inputRequests = inputs;
  if (Object.keys(answers).length > 0) t.inputResponses = answers;
  return t;
}

export class RedisTaskStore implements TaskStore {
  /** The link as given: subscriptions, closing, and the writes sent again after a failover. */
  readonly #given: RedisLink;
  /** The link every command goes through: keeping the writes when `#recent` is on. */
  readonly #link: RedisLink;
  readonly #recent: RecentWrites | undefined;
  /** Stops the link's failover calls (close). */
  readonly #unhook: () => void;
  readonly #now: () => number;
  readonly #listeners = new Set<(taskId: string) => void>();
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #closeLink: boolean;
  /** Finished tasks within their client's bounds and the store's (redis-retain.ts). */
  readonly #retention: FinishedRetention;
  #subscribed: Promise<void> | undefined;

  constructor(link: RedisLink, options: RedisTaskStoreOptions = {}) {
    if (typeof link?.send !== 'function') throw new InvalidOptionError('RedisTaskStore needs a RedisLink');
    this.#given = link;
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError;
    this.#closeLink = options.closeLink ?? false;
    // Real time, not the `now` option: the window is about replication, not the tasks' clock.
    // Checked whether or not this link can fail over: a bad option is refused on every topology.
    const kept = options.recentWrites === false ? false : checkedRecentWrites(options.recentWrites ?? {});
    const recent =
      link.onFailover === undefined || kept === false
        ? undefined
        : recentTaskWrites(kept, (e) => this.#onError?.(e));
    this.#recent = recent;
    this.#link = recent === undefined ? link : recent.over(link);
    this.#unhook =
      recent === undefined
        ? () => undefined
        : (link.onFailover?.(() => recent.failedOver(link)) ?? (() => undefined));
    this.#retention = new FinishedRetention(this.#link, this.#now, options);
  }

  /**
   * Subscribes to the cancel channel (once; resolves when subscribed). Without `subscribe` on the
   * link, cancels reach a runner at its next lease renewal only.
   */
  start(): Promise<void> {
    const sub = this.#given.subscribe;
    if (sub === undefined) return Promise.resolve();
    this.#subscribed ??= sub
      .call(this.#given, keys.taskCancel, false, (raw) => {
        if (!isTaskIdShape(raw)) return;
        for (const l of this.#listeners) l(raw);
      })
      .catch((error: unknown) => {
        this.#subscribed = undefined;
        this.#onError?.(error);
      });
    return this.#subscribed;
  }

  async create(t: TaskRecord, maxLivePerClient: number): Promise<CreateOutcome> {
    const now = String(this.#now());
    const clientKey = keys.clientTasks(t.client);
    const reserved = await RESERVE.run(
      this.#link,
      [clientKey],
      [
        now,
        String(maxLivePerClient),
        t.taskId,
        // It stops counting when its lease lapses or its TTL evicts it, whichever comes first.
        String(Math.min(t.leaseUntil ?? Number.POSITIVE_INFINITY, t.createdAt + t.ttlMs)),
        String(t.ttlMs),
      ],
    );
    if (reserved !== 1) return 'client-limit';
    const fields = [
      ...['o', t.owner, 'c', t.client, 's', t.status, 'ca', String(t.createdAt)],
      ...['u', String(t.lastUpdatedAt), 'ttl', String(t.ttlMs), 'pi', String(t.pollIntervalMs)],
      ...['call', t.call],
      ...(t.paramHeaders === undefined ? [] : ['ph', t.paramHeaders]),
      ...(t.leaseOwner === undefined ? [] : ['lo', t.leaseOwner, 'lu', String(t.leaseUntil ?? 0)]),
    ];
    // The task and its place in the owner's list are written at once (two slots in a Redis
    // Cluster, so two scripts, but one round trip of waiting): a list entry whose task was not
    // created is removed again, and `list` skips an entry without its task in the meantime.
    const ownerKey = keys.ownerTasks(clientHash(t.owner));
    const [created, listed] = await Promise.all([
      CREATE.run(this.#link, [keys.task(t.taskId)], [now, String(t.ttlMs), ...fields]),
      OWN.run(this.#link, [ownerKey], [now, t.taskId, String(t.createdAt + t.ttlMs), String(t.ttlMs)]),
    ]);
    if (created !== 1) {
      // Only the entries this call added: an id already taken keeps its own.
      await Promise.all([
        this.#link.send(['ZREM', clientKey, t.taskId]),
        ...(listed === 1 ? [this.#link.send(['ZREM', ownerKey, t.taskId])] : []),
      ]);
      return 'store-full';
    }
    return 'created';
  }

  async get(taskId: string, owner: string): Promise<TaskRecord | undefined> {
    const r = await GET.run(this.#link, [keys.task(taskId)], [String(this.#now()), owner]);
    if (!Array.isArray(r)) return undefined;
    const t = recordOf(taskId, r[1] ?? null);
    // Failed by a lapsed lease (the runner died) rather than settled, and first read since: it stops
    // counting as live and counts as finished here, once (a settle or cancel did both itself).
    if (t !== undefined && r[0] === 1) {
      await this.#uncount(t);
      await this.#retention.retain(t.client, taskId, t.createdAt + t.ttlMs, recordBytes(t));
    }
    return t;
  }

  async renew(taskId: string, runner: string, leaseUntil: number): Promise<boolean> {
    const r = await RENEW.run(
      this.#link,
      [keys.task(taskId)],
      [String(this.#now()), runner, String(leaseUntil)],
    );
    if (!Array.isArray(r) || typeof r[0] !== 'string') return false;
    // 0: held, and already until later (a renewal sent twice): nothing to count anew.
    if (r[1] === 0) return true;
    // The task counts against its client until the new end of its lease; renewed after its end,
    // a creation of the same client may have let it go from the count meanwhile (RESERVE).
    await this.#count(r[0], taskId, leaseUntil, r[1] === 2);
    return true;
  }

  async #count(client: string, taskId: string, until: number, again = false): Promise<void> {
    const key = keys.clientTasks(client);
    await this.#link.send(
      again ? ['ZADD', key, String(until), taskId] : ['ZADD', key, 'XX', String(until), taskId],
    );
  }

  async progress(taskId: string, runner: string, p: TaskProgress): Promise<void> {
    const pairs: string[] = [];
    if (p.message !== undefined) pairs.push('m', p.message);
    if (p.partialText !== undefined) pairs.push('pt', p.partialText, 'ptx', p.partialTruncated ? '1' : '0');
    if (pairs.length === 0) return;
    await PROGRESS.run(this.#link, [keys.task(taskId)], [String(this.#now()), runner, ...pairs]);
  }

  async settle(taskId: string, runner: string, s: Settlement): Promise<boolean> {
    const pairs: string[] = [];
    if (s.message !== undefined) pairs.push('m', s.message);
    if (s.status === 'completed') {
      if (s.result !== undefined) pairs.push('r', s.result);
    } else if (s.status === 'failed') {
      pairs.push('e', JSON.stringify(s.error));
      if (s.result !== undefined) pairs.push('r', s.result);
    } else {
      for (const [k, v] of Object.entries(s.inputRequests)) pairs.push(`i:${k}`, v);
      if (s.requestState !== undefined) pairs.push('rs', s.requestState);
      // The runner keeps its lease (store.ts): set again after the script lets the old one go.
      if (s.leaseUntil !== undefined) pairs.push('lo', runner, 'lu', String(s.leaseUntil));
    }
    const r = await SETTLE.run(
      this.#link,
      [keys.task(taskId)],
      [String(this.#now()), runner, s.status, ...pairs],
    );
    if (!Array.isArray(r) || typeof r[0] !== 'string') return false;
    // Finished: it no longer counts against its client; waiting for input: until its TTL, or while
    // its runner keeps the lease, until the lease ends (renewals move it on): a runner that dies
    // before renewing must not hold the client's slot for the whole TTL (store.ts).
    if (s.status === 'input_required')
      await this.#count(r[0], taskId, Math.min(s.leaseUntil ?? Number.POSITIVE_INFINITY, Number(r[1])));
    else {
      await this.#link.send(['ZREM', keys.clientTasks(r[0]), taskId]);
      let bytes = 256;
      for (let i = 1; i < pairs.length; i += 2) bytes += (pairs[i] as string).length;
      await this.#retention.retain(r[0], taskId, Number(r[1]), bytes);
    }
    return true;
  }

  async cancel(taskId: string, owner: string, message?: string): Promise<TaskRecord | undefined> {
    const args = [String(this.#now()), owner, ...(message === undefined ? [] : [message])];
    const r = await CANCEL.run(this.#link, [keys.task(taskId)], args);
    if (!Array.isArray(r)) return undefined;
    const t = recordOf(taskId, r[1] ?? null);
    if (r[0] === 1) {
      // The local runner first (no round trip), then every other instance.
      for (const l of this.#listeners) l(taskId);
      await this.#link.send(['PUBLISH', keys.taskCancel, taskId]);
      if (t !== undefined) {
        await this.#uncount(t);
        await this.#retention.retain(t.client, taskId, t.createdAt + t.ttlMs, recordBytes(t));
      }
    }
    return t;
  }

  async answer(
    taskId: string,
    owner: string,
    responses: Record<string, string>,
    runner: string,
    leaseUntil: number,
  ): Promise<AnswerOutcome | undefined> {
    const pairs = Object.entries(responses).flat();
    const r = await ANSWER.run(
      this.#link,
      [keys.task(taskId)],
      [String(this.#now()), owner, runner, String(leaseUntil), ...pairs],
    );
    if (!Array.isArray(r)) return undefined;
    const t = recordOf(taskId, r[1] ?? null);
    if (t === undefined) return undefined;
    if (r[0] === 1) await this.#count(t.client, taskId, leaseUntil);
    return { task: t, resume: r[0] === 1 };
  }

  async list(owner: string, cursor: string | undefined, limit: number): Promise<TaskPage | undefined> {
    if (cursor !== undefined && !isTaskIdShape(cursor)) return undefined;
    const key = keys.ownerTasks(clientHash(owner));
    // One more than a page: whether a next page exists, without a second round trip.
    const ids = await PAGE.run(this.#link, [key], [String(this.#now()), cursor ?? '', String(limit)]);
    if (!Array.isArray(ids)) return undefined;
    const page = ids.filter((id): id is string => typeof id === 'string').slice(0, limit);
    const tasks: TaskRecord[] = [];
    for (const id of page) {
      // Gone (its HASH expired a moment before its score did): not listed; the member stays
      // until its score passes, so it still works as the next page's cursor.
      const t = await this.get(id, owner);
      if (t !== undefined) tasks.push(t);
    }
    const last = page.at(-1);
    return ids.length > limit && last !== undefined ? { tasks, nextCursor: last } : { tasks };
  }

  /** A finished task no longer counts against its client's live-task limit. */
  async #uncount(t: TaskRecord): Promise<void> {
    await this.#link.send(['ZREM', keys.clientTasks(t.client), t.taskId]);
  }

  onCancel(listener: (taskId: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The writes kept to be sent again after a failover (undefined when none are kept). */
  recentWrites(): RecentWritesStats | undefined {
    return this.#recent?.stats();
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    this.#unhook();
    this.#recent?.close();
    if (this.#closeLink) await this.#given.close();
  }
}
