/**
 * Sluice's task store offered as the `TaskStore` of SDK v1's own (experimental, 2025-11-25,
 * SEP-1686) task support: `new McpServer(info, { taskStore: sdkTaskStore(store) })`. The SDK then
 * keeps its tasks in Sluice's store (memory, or Redis: any instance answers `tasks/get`,
 * `tasks/result`, `tasks/list` and `tasks/cancel` for any task, and a finished task's result
 * outlives the instance that ran it), bounded as every Sluice task is (per-session live tasks,
 * result bytes, TTL, the store's own count and bytes).
 *
 * How the SDK's model maps onto the store (store.ts):
 * - A task belongs to whoever created it: every method gets the caller's `sessionId`, and a task
 *   is found only by its owner (else null / not found, like an unknown or malformed id). With the
 *   session hooks wired (`onSessionStart: s.sessionStarted, onSessionEnd: s.sessionEnded`), the
 *   owner of an authenticated session's task is its principal (`bind: 'principal'`, the default):
 *   the same principal's later sessions, on any instance sharing the store, find it (a client
 *   that re-initialized after its instance died reads its result), another principal's never.
 *   Otherwise (`bind: 'session'`, an anonymous session, or hooks not wired) the owner is the session,
 *   which is what the SDK's own store does. Without a session (stateless), tasks share one owner.
 * - The instance whose tool created the task runs it: it holds the task's lease and renews it while
 *   the task is `working` or `input_required` (the tool waits for the client there, still running);
 *   if that instance dies the task reads `failed` with the owner-lost error (model.ts OWNER_LOST)
 *   once the lease lapses, never `working` or `input_required` forever. Its status changes and
 *   its result therefore come from that instance; a cancel (`tasks/cancel`) from any instance.
 * - `storeTaskResult('failed', result)` keeps the result too: `tasks/result` returns what the SDK
 *   stored, as for a completed task.
 * - `ttl` is the requested one within `maxTtlMs` (null, "unlimited", gets `maxTtlMs`): the record
 *   lives that long from its creation (the SDK's own store restarts it at completion; the answer
 *   carries the TTL that applies).
 */
import type {
  CreateTaskOptions,
  TaskStore as SdkTaskStoreInterface,
} from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { Request, RequestId, Result, Task } from '@modelcontextprotocol/sdk/types.js';
import { InvalidOptionError, SdkTaskStoreError } from '../errors.js';
import { BoundedMap } from '../flow/bounded-map.js';
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { randomToken } from '../security/random.js';
import { clientHash } from './client-hash.js';
import { isTaskIdShape, isTerminal, newWorkingTask, principalKey, type TaskRecord } from './model.js';
import { type Renewable, Renewals } from './renewals.js';
import {
  int,
  MAX_SESSIONS,
  notFound,
  SDK_TASK_STORE_DEFAULTS,
  type SdkTaskStoreOptions,
  sdkTask,
  terminal,
} from './sdk-store-options.js';
import type { Settlement, TaskStore } from './store.js';

export { SDK_TASK_STORE_DEFAULTS, type SdkTaskStoreOptions } from './sdk-store-options.js';

export class SluiceSdkTaskStore implements SdkTaskStoreInterface {
  readonly #store: TaskStore;
  readonly #o: Required<Omit<SdkTaskStoreOptions, 'now' | 'bind'>>;
  readonly #byPrincipal: boolean;
  /** Session id → principal, from the session hooks (authenticated sessions only). */
  readonly #principals = new BoundedMap<string, string>(MAX_SESSIONS);
  readonly #now: () => number;
  /** This instance, as the lease owner of the tasks its tools run. */
  readonly #runner = `sdk-${randomToken(12)}`;
  /** The tasks (working, or waiting for input) whose lease this instance renews, by id. */
  readonly #leased = new Map<string, Renewable>();
  /** Their renewal timer, and the catch-up a read waits for after a stall (renewals.ts). */
  readonly #renewals: Renewals;

  constructor(store: TaskStore, options: SdkTaskStoreOptions = {}) {
    if (typeof store?.create !== 'function' || typeof store.list !== 'function') {
      throw new InvalidOptionError('sdkTaskStore needs a Sluice TaskStore (MemoryTaskStore, RedisTaskStore)');
    }
    const d = SDK_TASK_STORE_DEFAULTS;
    this.#store = store;
    this.#o = {
      maxTtlMs: int('maxTtlMs', options.maxTtlMs ?? d.maxTtlMs, 1000),
      pollIntervalMs: int('pollIntervalMs', options.pollIntervalMs ?? d.pollIntervalMs, 1),
      minPollIntervalMs: int('minPollIntervalMs', options.minPollIntervalMs ?? d.minPollIntervalMs, 1),
      leaseMs: int('leaseMs', options.leaseMs ?? d.leaseMs, 300),
      maxLivePerOwner: int('maxLivePerOwner', options.maxLivePerOwner ?? d.maxLivePerOwner, 1),
      maxResultBytes: int('maxResultBytes', options.maxResultBytes ?? d.maxResultBytes, 1),
      pageSize: int('pageSize', options.pageSize ?? d.pageSize, 1),
    };
    const bind = options.bind ?? 'principal';
    if (bind !== 'principal' && bind !== 'session') {
      throw new InvalidOptionError("sdkTaskStore.bind must be 'principal' or 'session'");
    }
    this.#byPrincipal = bind === 'principal';
    this.#now = options.now ?? Date.now;
    this.#renewals = new Renewals(this.#leased, this.#o.leaseMs, this.#now);
  }

  /** For `onSessionStart`: remembers an authenticated session's principal. */
  readonly sessionStarted = (info: { sessionId: string; principal: string | undefined }): void => {
    if (info.principal === undefined) return;
    // Beyond MAX_SESSIONS the session that started first is forgotten (flow/bounded-map.ts: O(1)).
    this.#principals.set(info.sessionId, info.principal);
  };

  /** For `onSessionEnd`. */
  readonly sessionEnded = (info: { sessionId: string }): void => {
    this.#principals.delete(info.sessionId);
  };

  /** The owner key of a caller's tasks (never equal to a 2026-era owner, model.ts principalKey). */
  #ownerOf(sessionId: string | undefined): string {
    if (sessionId === undefined) return 'sdk';
    const principal = this.#byPrincipal ? this.#principals.get(sessionId) : undefined;
    return principal === undefined ? `sdk-s:${sessionId}` : `sdk-${principalKey(principal)}`;
  }

  createTask(
    taskParams: CreateTaskOptions,
    requestId: RequestId,
    request: Request,
    sessionId?: string,
  ): Promise<Task> {
    return this.#createTask(taskParams, requestId, request, this.#ownerOf(sessionId));
  }

  getTask(taskId: string, sessionId?: string): Promise<Task | null> {
    return this.#getTask(taskId, this.#ownerOf(sessionId));
  }

  storeTaskResult(
    taskId: string,
    status: 'completed' | 'failed',
    result: Result,
    sessionId?: string,
  ): Promise<void> {
    return this.#storeTaskResult(taskId, status, result, this.#ownerOf(sessionId));
  }

  getTaskResult(taskId: string, sessionId?: string): Promise<Result> {
    return this.#getTaskResult(taskId, this.#ownerOf(sessionId));
  }

  updateTaskStatus(
    taskId: string,
    status: Task['status'],
    statusMessage?: string,
    sessionId?: string,
  ): Promise<void> {
    return this.#updateTaskStatus(taskId, status, statusMessage, this.#ownerOf(sessionId));
  }

  /**
   * Without a session (stateless mode) every caller shares one owner, so a listing would show
   * anyone every caller's tasks: refused (2025-11-25 tasks §"Security Considerations": receivers
   * that cannot identify requestors should not offer tasks/list). `forServer` binds one.
   */
  listTasks(cursor?: string, sessionId?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    if (sessionId === undefined) {
      return Promise.reject(
        new SdkTaskStoreError('unbound', 'tasks/list needs a session, or a store bound with forServer()'),
      );
    }
    return this.#listTasks(cursor, this.#ownerOf(sessionId));
  }

  /**
   * This store as the `taskStore` of one server `createServer` builds: its tasks belong to that
   * server's principal (else its session), whatever session id the SDK passes. Needed in stateless
   * mode, where the SDK passes none and the principal is known only to `createServer`:
   * `createServer: (ctx) => new McpServer(info, { taskStore: store.forServer(ctx) })`
   * (2025-11-25 tasks §"Security Considerations": bound to the authorization context).
   */
  forServer(ctx: { sessionId?: string | undefined; principal?: string | undefined }): SdkTaskStoreInterface {
    const owner =
      this.#byPrincipal && ctx.principal !== undefined
        ? `sdk-${principalKey(ctx.principal)}`
        : ctx.sessionId !== undefined
          ? `sdk-s:${ctx.sessionId}`
          : 'sdk';
    return {
      createTask: (p, id, req) => this.#createTask(p, id, req, owner),
      getTask: (taskId) => this.#getTask(taskId, owner),
      storeTaskResult: (taskId, status, result) => this.#storeTaskResult(taskId, status, result, owner),
      getTaskResult: (taskId) => this.#getTaskResult(taskId, owner),
      updateTaskStatus: (taskId, status, message) => this.#updateTaskStatus(taskId, status, message, owner),
      listTasks: (cursor) =>
        owner === 'sdk'
          ? Promise.reject(new SdkTaskStoreError('unbound', 'tasks/list needs a principal or a session'))
          : this.#listTasks(cursor, owner),
    };
  }

  async #createTask(
    taskParams: CreateTaskOptions,
    requestId: RequestId,
    request: Request,
    owner: string,
  ): Promise<Task> {
    const now = this.#now();
    const askedTtl = typeof taskParams.ttl === 'number' && taskParams.ttl > 0 ? taskParams.ttl : undefined;
    const askedPoll = taskParams.pollInterval;
    const t = newWorkingTask({
      owner,
      client: clientHash(owner),
      ttlMs: Math.max(1000, Math.min(Math.floor(askedTtl ?? Infinity), this.#o.maxTtlMs)),
      pollIntervalMs:
        typeof askedPoll === 'number' && Number.isFinite(askedPoll)
          ? Math.max(this.#o.minPollIntervalMs, Math.floor(askedPoll))
          : this.#o.pollIntervalMs,
      // The SDK runs the request itself and never asks for it back: only what names it is kept.
      call: JSON.stringify({ method: request.method, requestId }),
      runner: this.#runner,
      leaseMs: this.#o.leaseMs,
      now,
    });
    const outcome = await this.#store.create(t, this.#o.maxLivePerOwner);
    if (outcome === 'client-limit') {
      throw new SdkTaskStoreError(
        'limit',
        `this owner already has ${this.#o.maxLivePerOwner} unfinished tasks (sdkTaskStore.maxLivePerOwner)`,
      );
    }
    if (outcome === 'store-full') throw new SdkTaskStoreError('full', 'the task store is full');
    this.#lease(t.taskId);
    return sdkTask(t);
  }

  async #getTask(taskId: string, owner: string): Promise<Task | null> {
    const t = await this.#get(taskId, owner);
    if (t === undefined) return null;
    if (isTerminal(t.status)) this.#unlease(taskId);
    return sdkTask(t);
  }

  async #storeTaskResult(
    taskId: string,
    status: 'completed' | 'failed',
    result: Result,
    owner: string,
  ): Promise<void> {
    const json = JSON.stringify(result);
    if (json.length > this.#o.maxResultBytes) {
      const message = `Internal error: the task's result exceeds ${this.#o.maxResultBytes} bytes`;
      await this.#settle(taskId, owner, {
        status: 'failed',
        error: { code: JsonRpcCode.InternalError, message },
      });
      throw new SdkTaskStoreError('too-large', message);
    }
    await this.#settle(
      taskId,
      owner,
      status === 'completed'
        ? { status, result: json }
        : { status, error: { code: JsonRpcCode.InternalError, message: 'Task failed' }, result: json },
    );
  }

  async #getTaskResult(taskId: string, owner: string): Promise<Result> {
    const t = await this.#owned(taskId, owner);
    if (t.result !== undefined) return JSON.parse(t.result) as Result;
    // Failed without a stored result (its instance died, or a status update said so): the
    // task's error, as the error of `tasks/result`.
    if (t.status === 'failed' && t.error !== undefined) {
      throw new SdkTaskStoreError('failed', t.error.message, t.error.data);
    }
    throw new SdkTaskStoreError('no-result', `task ${taskId} has no result stored`);
  }

  async #updateTaskStatus(
    taskId: string,
    status: Task['status'],
    statusMessage: string | undefined,
    owner: string,
  ): Promise<void> {
    const msg = statusMessage === undefined ? {} : { message: statusMessage };
    if (status === 'cancelled') {
      if (!isTaskIdShape(taskId)) throw notFound(taskId);
      const t = await this.#store.cancel(taskId, owner, statusMessage);
      if (t === undefined) throw notFound(taskId);
      this.#unlease(taskId);
      if (t.status !== 'cancelled') throw terminal(taskId, t.status, status);
      return;
    }
    if (status === 'input_required') {
      const t = await this.#owned(taskId, owner);
      if (t.status === 'input_required') return;
      // The tool goes on running here while it waits: this instance keeps and renews the lease,
      // so the task fails (owner lost) if it dies meanwhile (store.ts, Settlement leaseUntil).
      return this.#settle(taskId, owner, {
        status,
        inputRequests: {},
        requestState: undefined,
        leaseUntil: this.#now() + this.#o.leaseMs,
        ...msg,
      });
    }
    if (status === 'completed') return this.#settle(taskId, owner, { status, ...msg });
    if (status === 'failed') {
      const error = { code: JsonRpcCode.InternalError, message: statusMessage ?? 'Task failed' };
      return this.#settle(taskId, owner, { status, error, ...msg });
    }
    // working: back from input_required (this instance leases it again), and/or a new message.
    const t = await this.#working(taskId, owner);
    if (statusMessage !== undefined) {
      await this.#store.progress(t.taskId, this.#runner, { message: statusMessage });
    }
  }

  async #listTasks(
    cursor: string | undefined,
    owner: string,
  ): Promise<{ tasks: Task[]; nextCursor?: string }> {
    await this.#renewals.caughtUp();
    const page = await this.#store.list(owner, cursor, this.#o.pageSize);
    if (page === undefined) throw new SdkTaskStoreError('cursor', 'Invalid cursor');
    const tasks = page.tasks.map(sdkTask);
    return page.nextCursor === undefined ? { tasks } : { tasks, nextCursor: page.nextCursor };
  }

  /** Stops renewing leases (the tasks still working read as failed once their leases lapse). */
  close(): void {
    this.#leased.clear();
    this.#renewals.stop();
  }

  async #get(taskId: string, owner: string): Promise<TaskRecord | undefined> {
    if (!isTaskIdShape(taskId)) return undefined;
    await this.#renewals.caughtUp();
    return this.#store.get(taskId, owner);
  }

  async #owned(taskId: string, owner: string): Promise<TaskRecord> {
    const t = await this.#get(taskId, owner);
    if (t === undefined) throw notFound(taskId);
    return t;
  }

  /** The task, `working` and leased here: a task waiting for input is taken back first. */
  async #working(taskId: string, owner: string): Promise<TaskRecord> {
    let t = await this.#owned(taskId, owner);
    if (t.status === 'input_required') {
      const until = this.#now() + this.#o.leaseMs;
      const r = await this.#store.answer(taskId, owner, {}, this.#runner, until);
      if (r === undefined) throw notFound(taskId);
      t = r.task;
      if (r.resume) this.#lease(taskId);
    }
    if (t.status !== 'working') throw terminal(taskId, t.status, 'working');
    return t;
  }

  async #settle(taskId: string, owner: string, s: Settlement): Promise<void> {
    const t = await this.#working(taskId, owner);
    const settled = await this.#store.settle(taskId, this.#runner, s);
    if (!settled || s.status !== 'input_required') this.#unlease(taskId);
    if (!settled) {
      throw new SdkTaskStoreError(
        'not-runner',
        `task ${t.taskId} is not run by this instance (or its lease lapsed); only a cancel reaches it from elsewhere`,
      );
    }
  }

  #lease(taskId: string): void {
    this.#leased.set(taskId, { renew: () => this.#renew(taskId) });
    this.#renewals.start();
  }

  #unlease(taskId: string): void {
    this.#leased.delete(taskId);
  }

  #renew(taskId: string): Promise<void> {
    return this.#store.renew(taskId, this.#runner, this.#now() + this.#o.leaseMs).then(
      (ours) => {
        // Finished, cancelled, lapsed or gone: nothing left to renew here.
        if (!ours) this.#unlease(taskId);
      },
      // The store is unreachable: try again at the next tick; past the lease the task fails.
      () => undefined,
    );
  }
}

/**
 * Sluice's task store as SDK v1's `TaskStore`:
 * `new McpServer(info, { taskStore: sdkTaskStore(new MemoryTaskStore()) })`; share one per store.
 */
export function sdkTaskStore(store: TaskStore, options: SdkTaskStoreOptions = {}): SluiceSdkTaskStore {
  return new SluiceSdkTaskStore(store, options);
}
