/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) for the 2026-07-28 era, as the
 * hook `handleModernPost` offers requests to (core/era-2026/task-hook.ts):
 * - `server/discover`: served as usual, then `capabilities.extensions` names the extension.
 * - `tools/call` of a task tool (options.tools): with the client's declaration (the extension in
 *   `_meta` clientCapabilities.extensions) the task is created in the store and only then answered
 *   with the flat CreateTaskResult; the tool runs detached from the request (run.ts). An `optional`
 *   tool's call becomes a task only once it outlasts `taskAfterMs` (task-after.ts). Without the
 *   declaration an `optional` tool runs as a plain call and a `required` one is refused -32021.
 * - `tasks/get`, `tasks/update`, `tasks/cancel`: -32021 without the declaration; an unknown id, a
 *   malformed one and another principal's are the same -32602; answers carry
 *   `resultType: "complete"`. `tasks/result` and `tasks/list` (SEP-1686) are left to the server,
 *   which does not know them (-32601), as SEP-2663 requires.
 */
import type { LegacyTaskHook, LegacyTaskOffer } from '../core/era-2025/task-hook.js';
import type { TaskHook, TaskOffer } from '../core/era-2026/task-hook.js';
import { shortHash } from '../core/observe/probe.js';
import type { TaskHookStats } from '../core/observe/stats.js';
import type { RequestHead } from '../core/pipeline/sink.js';
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { isPlainObject } from '../jsonrpc/message.js';
import { TASKS_EXTENSION } from '../jsonrpc/meta-keys.js';
import { randomToken } from '../security/random.js';
import {
  type Answer,
  clientLimit,
  discoverAnswer,
  missingExtension,
  ok,
  okJson,
  rpcError,
  storeFull,
  storeUnreachable,
  unknownTask,
} from './answers.js';
import { CaptureSink } from './capture-sink.js';
import { clientHash } from './client-hash.js';
import { LEGACY_METHODS, LegacyTasks } from './legacy.js';
import { LegacyInput } from './legacy-input.js';
import { ListedPolicies } from './listed-policy.js';
import {
  createTaskResultJson,
  detailedTaskJson,
  isTaskIdShape,
  newWorkingTask,
  principalKey,
  type TaskRecord,
} from './model.js';
import {
  type ResolvedTaskOptions,
  resolveTaskOptions,
  type TaskOptions,
  type TaskPolicy,
} from './options.js';
import { Renewals } from './renewals.js';
import {
  paramHead,
  paramHeadersOf,
  type RoundServe,
  type SettlementMap,
  settlementOf,
  TaskRun,
} from './run.js';
import { type SdkTaskStoreOptions, type SluiceSdkTaskStore, sdkTaskStore } from './sdk-store.js';
import type { CreateOutcome, Settlement } from './store.js';
import { callThenTask, type TaskAfterHost } from './task-after.js';

export { TASKS_EXTENSION };

const METHODS = new Set(['server/discover', 'tools/call', 'tasks/get', 'tasks/update', 'tasks/cancel']);

/** What differs between the rounds a service starts (see #startWith). */
interface Round {
  head?: RequestHead;
  call?: Readonly<Record<string, unknown>> | undefined;
  /**
   * A 2025 session's task: how its outcome is stored; its tool's requests to the client are also
   * followed (legacy-input.ts).
   */
  map?: SettlementMap;
}

/** `stats()`: what core/era-2026/task-hook.ts documents for every task service. */
export type TaskServiceStats = TaskHookStats;

export class TaskService implements TaskHook, LegacyTaskHook {
  readonly #o: ResolvedTaskOptions;
  /** This instance, as the lease owner of the tasks it runs. */
  readonly #runner = randomToken(12);
  readonly #runs = new Map<string, TaskRun>();
  /** The leases of those runs: one timer, and the catch-up a read waits for after a stall. */
  readonly #renewals: Renewals;
  readonly #unlisten: () => void;
  readonly #listed: ListedPolicies;
  readonly #legacy: LegacyTasks;
  readonly #counts = { created: 0, refusedLimit: 0, answeredDirectly: 0, keptPlain: 0 };
  /** What a call of an `optional` tool needs while it may still be answered plainly (task-after.ts). */
  readonly #after: TaskAfterHost = {
    options: () => this.#o,
    newRun: (t) => new TaskRun(this.#o, this.#runner, t.taskId),
    store: (o, t) => this.#store(o, t),
    track: (t, run, running) => this.#track(t, run, running, false),
    send: (o, a) => this.#send(o, a),
    count: (outcome) => {
      this.#counts[outcome]++;
    },
  };

  constructor(options: TaskOptions = {}) {
    this.#o = resolveTaskOptions(options);
    this.#renewals = new Renewals(this.#runs, this.#o.leaseMs, this.#o.now);
    this.#listed = new ListedPolicies(this.#o.now);
    this.#unlisten = this.#o.store.onCancel((id) => this.#runs.get(id)?.abort());
    this.#legacy = new LegacyTasks({
      o: this.#o,
      runner: this.#runner,
      start: (t, serve, map) =>
        this.#startWith(t, (req, sink, _head, asks) => Promise.resolve(serve(req, sink, asks)), { map }),
      countCreated: () => {
        this.#counts.created++;
      },
      caughtUp: () => this.#renewals.caughtUp(),
    });
  }

  /** Core/era-2025/task-hook.ts: whether Sluice serves this session server's tasks (SEP-1686). */
  prepareLegacy(server: unknown): boolean {
    return this.#legacy.prepare(server);
  }

  wantsLegacy(method: string): boolean {
    return LEGACY_METHODS.has(method);
  }

  offerLegacy(o: LegacyTaskOffer): Promise<boolean> {
    return this.#legacy.offer(o);
  }

  /**
   * This service's store as SDK v1's own `TaskStore` (sdk-store.ts), with this service's TTL,
   * polling interval, lease and bounds unless `options` says otherwise: an SDK server given it
   * keeps its tasks beside Sluice's (and Sluice leaves that server's 2025 tasks to the SDK).
   */
  sdkTaskStore(options: SdkTaskStoreOptions = {}): SluiceSdkTaskStore {
    const o = this.#o;
    return sdkTaskStore(o.store, {
      maxTtlMs: o.ttlMs,
      pollIntervalMs: o.pollIntervalMs,
      leaseMs: o.leaseMs,
      maxLivePerOwner: o.maxLivePerClient,
      maxResultBytes: o.maxResultBytes,
      now: o.now,
      ...options,
    });
  }

  get options(): ResolvedTaskOptions {
    return this.#o;
  }

  stats(): TaskServiceStats {
    return { ...this.#counts, running: this.#runs.size };
  }

  wants(method: string): boolean {
    return METHODS.has(method);
  }

  async offer(o: TaskOffer): Promise<boolean> {
    const declared = isPlainObject(o.meta.clientCapabilities['extensions'])
      ? isPlainObject(o.meta.clientCapabilities['extensions'][TASKS_EXTENSION])
      : false;
    switch (o.req.method) {
      case 'server/discover':
        this.#send(o, await discoverAnswer(o));
        return true;
      case 'tools/call':
        return this.#call(o, declared);
      default:
        if (!declared) this.#send(o, missingExtension(o));
        else this.#send(o, await this.#taskMethod(o));
        return true;
    }
  }

  /** Aborts the runs of this instance (their tasks read as failed once their leases lapse). */
  async close(): Promise<void> {
    this.#unlisten();
    this.#renewals.stop();
    for (const run of this.#runs.values()) run.abort();
    await this.#o.store.close();
  }

  async #call(o: TaskOffer, declared: boolean): Promise<boolean> {
    const name = o.req.params?.['name'];
    const policy =
      typeof name !== 'string' ? 'forbidden' : (this.#o.policy(name) ?? (await this.#listedPolicy(name, o)));
    if (policy === 'forbidden' || (!declared && policy === 'optional')) {
      // SEP-2663: a SEP-1686 `task` hint is tolerated and ignored (an SDK v1 server would refuse
      // the call without a task store of its own), so the call is served without it.
      const params = o.req.params;
      if (params === undefined || !('task' in params)) return false;
      const { task: _ignored, ...rest } = params;
      await o.serve({ ...o.req, params: rest }, o.sink);
      return true;
    }
    if (!declared) {
      this.#send(o, missingExtension(o));
      return true;
    }
    // MRTR before the task (SEP-2663 "MRTR → Tasks composition"): a first call of an inputFirst
    // tool runs as a plain call; its input_required goes back as is, any other answer becomes a
    // task that is already finished (the tool never runs twice).
    let first: Settlement | undefined;
    if (
      typeof name === 'string' &&
      this.#o.inputFirst.has(name) &&
      !('inputResponses' in (o.req.params ?? {}))
    ) {
      const sink = new CaptureSink(this.#o.maxResultBytes + 64 * 1024, () => undefined);
      await o.serve(o.req, sink);
      const c = await sink.done;
      if (c.kind === 'response' && isPlainObject(c.message['result'])) {
        if (c.message['result']['resultType'] === 'input_required') {
          this.#send(o, { status: 200, body: c.message });
          return true;
        }
      }
      first = settlementOf(c, this.#o.maxResultBytes);
      if (first === undefined) return true;
    }
    const t = this.#newTask(o);
    if (first === undefined && policy === 'optional' && this.#o.taskAfterMs > 0) {
      await callThenTask(this.#after, o, t);
      return true;
    }
    const refused = await this.#store(o, t);
    if (refused !== undefined) {
      this.#send(o, refused);
      return true;
    }
    if (first !== undefined && (await this.#o.store.settle(t.taskId, this.#runner, first)))
      t.status = first.status;
    // Durable now (SEP-2663: a tasks/get right after this answer resolves).
    this.#send(o, okJson(o, createTaskResultJson(t)));
    if (first === undefined) this.#startWith(t, o.serve, { call: o.req.params });
    return true;
  }

  /** The record of a task for this call (not stored yet). */
  #newTask(o: TaskOffer): TaskRecord {
    return newWorkingTask({
      owner: principalKey(o.principal),
      client: clientHash(o.clientKey),
      ttlMs: this.#o.ttlMs,
      pollIntervalMs: this.#o.pollIntervalMs,
      call: JSON.stringify(o.req.params ?? {}),
      paramHeaders: paramHeadersOf(o.rawHeaders),
      runner: this.#runner,
      leaseMs: this.#o.leaseMs,
      now: this.#o.now(),
    });
  }

  /** Stores a new task: undefined once it is durable, else the answer its refusal gets. */
  async #store(o: TaskOffer, t: TaskRecord): Promise<Answer | undefined> {
    let outcome: CreateOutcome;
    try {
      outcome = await this.#o.store.create(t, this.#o.maxLivePerClient);
    } catch (error) {
      this.#o.logger?.error('tasks.create_failed', { error: String(error) });
      return storeUnreachable(o);
    }
    if (outcome === 'client-limit') {
      this.#counts.refusedLimit++;
      return clientLimit(o, this.#o.maxLivePerClient, this.#o.pollIntervalMs);
    }
    if (outcome === 'store-full') return storeFull(o);
    this.#counts.created++;
    return undefined;
  }

  /** A tool the configuration does not name gets what its tools/list entry declares. */
  async #listedPolicy(name: string, o: TaskOffer): Promise<TaskPolicy> {
    if (!this.#o.toolsFromList) return 'forbidden';
    return this.#listed.policy(name, principalKey(o.principal), o);
  }

  /** Runs a resumed round here, with the headers of the call that created the task. */
  #resume(t: TaskRecord, o: TaskOffer): void {
    this.#startWith(t, o.serve, { head: paramHead(t) });
  }

  /**
   * Runs a round here. `head`: a resumed round's (the headers of the call that created the task);
   * `call`: a first round's params, as received; `map`: how its outcome is stored (2025 era).
   */
  #startWith(t: TaskRecord, serve: RoundServe, round: Round): void {
    const input = round.map === undefined ? undefined : new LegacyInput(this.#o, this.#runner, t);
    const run = new TaskRun(this.#o, this.#runner, t.taskId, round.map, input);
    this.#track(t, run, run.run(t, serve, round.head, round.call), round.head !== undefined);
  }

  /** A stored task's round running here: its lease is renewed until the run is over. */
  #track(t: TaskRecord, run: TaskRun, running: Promise<void>, resumed: boolean): void {
    // One line per round started here (the id as a short hash, as session ids are logged): an
    // operator (and the fault test) can see where a task ran, and that it ran once.
    this.#o.logger?.info('tasks.run', { task: shortHash(t.taskId), resumed });
    this.#runs.set(t.taskId, run);
    this.#renewals.start();
    running
      .catch((error: unknown) =>
        this.#o.logger?.error('tasks.settle_failed', { taskId: t.taskId, error: String(error) }),
      )
      .finally(() => {
        if (this.#runs.get(t.taskId) === run) this.#runs.delete(t.taskId);
      });
  }

  async #taskMethod(o: TaskOffer): Promise<Answer> {
    const id = o.req.params?.['taskId'];
    if (!isTaskIdShape(id)) return unknownTask(o);
    const owner = principalKey(o.principal);
    const store = this.#o.store;
    try {
      await this.#renewals.caughtUp();
      if (o.req.method === 'tasks/get') {
        const t = await store.get(id, owner);
        return t === undefined ? unknownTask(o) : okJson(o, detailedTaskJson(t));
      }
      if (o.req.method === 'tasks/cancel') {
        const t = await store.cancel(id, owner);
        return t === undefined ? unknownTask(o) : ok(o, { resultType: 'complete' });
      }
      return await this.#update(o, id, owner);
    } catch (error) {
      this.#o.logger?.error('tasks.store_failed', { method: o.req.method, error: String(error) });
      return storeUnreachable(o);
    }
  }

  /** tasks/update: answers to pending input requests; the last one resumes the tool here. */
  async #update(o: TaskOffer, id: string, owner: string): Promise<Answer> {
    const responses = o.req.params?.['inputResponses'];
    if (!isPlainObject(responses)) {
      return rpcError(o, 400, JsonRpcCode.InvalidParams, 'Invalid params: inputResponses must be an object');
    }
    const encoded: Record<string, string> = {};
    let bytes = 0;
    for (const [k, v] of Object.entries(responses)) {
      const json = JSON.stringify(v) ?? 'null';
      bytes += k.length + json.length;
      encoded[k] = json;
    }
    if (bytes > this.#o.maxUpdateBytes) {
      return rpcError(
        o,
        413,
        JsonRpcCode.InvalidParams,
        `Invalid params: inputResponses exceed ${this.#o.maxUpdateBytes} bytes (tasks.maxUpdateBytes)`,
      );
    }
    const r = await this.#o.store.answer(id, owner, encoded, this.#runner, this.#o.now() + this.#o.leaseMs);
    if (r === undefined) return unknownTask(o);
    if (r.resume) this.#resume(r.task, o);
    return ok(o, { resultType: 'complete' });
  }

  #send(o: TaskOffer, a: Answer): void {
    if (o.sink.closed) return;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...o.headers };
    if (a.retryAfter !== undefined) headers['retry-after'] = String(a.retryAfter);
    o.sink.respond(a.status, headers, typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
  }
}

/** The tasks extension for `createMcpHandler({ tasks: createTasks({ tools: { reindex: 'optional' } }) })`. */
export function createTasks(options: TaskOptions = {}): TaskService {
  return new TaskService(options);
}
