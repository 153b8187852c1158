/**
 * The 2025-11-25 revision's experimental tasks (basic/utilities/tasks, SEP-1686) served by Sluice
 * on 2025 sessions whose server does not manage tasks itself, from the same store and with the
 * same per-tool policy as the 2026 era's tasks (service.ts), through the hook of
 * core/era-2025/task-hook.ts:
 * - the `tasks` capability (`list`, `cancel`, `requests.tools.call`) is declared on the session's
 *   server before it answers `initialize`; `tools/list` carries each configured tool's
 *   `execution.taskSupport`;
 * - a `tools/call` with the `task` param, of a tool whose policy is optional or required, is stored
 *   and then answered with the `CreateTaskResult` (`{ task }`); the tool runs on the session's
 *   server detached from the request (run.ts); a forbidden tool with `task`, and a required one
 *   without, are -32601 (§"Tool-Level Negotiation");
 * - `tasks/get`, `tasks/result` (blocks until the task is final, then exactly what the call
 *   returned, with the related-task `_meta`), `tasks/list` (cursor pages), `tasks/cancel`
 *   (-32602 for a finished task). Unknown, malformed, expired and another owner's ids are the same
 *   -32602. A task belongs to the principal, else to the session (§"Security Considerations").
 * - A tool result with `isError` makes the task `failed` (§"Task Execution Errors"); its
 *   `tasks/result` is that result.
 * - The tool's requests to the client related to its call go to the client's GET stream with the
 *   related-task `_meta`, and the task reads `input_required` while they await replies
 *   (legacy-input.ts, §"Input Required Status").
 */

import type { LegacyTaskOffer, RelatedAsks } from '../core/era-2025/task-hook.js';
import type { ResponseSink } from '../core/pipeline/sink.js';
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { isPlainObject, type JsonRpcRequest } from '../jsonrpc/message.js';
import { CaptureSink } from './capture-sink.js';
import { clientHash } from './client-hash.js';
import { withRelatedTask } from './legacy-input.js';
import { isTaskIdShape, isTerminal, newWorkingTask, principalKey, type TaskRecord } from './model.js';
import type { ResolvedTaskOptions } from './options.js';
import type { SettlementMap } from './run.js';
import type { CreateOutcome, Settlement } from './store.js';

export const LEGACY_METHODS = new Set([
  'tools/list',
  'tools/call',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
]);

const PAGE = 50;

/** What the service gives this module: its options, and how it starts a run of a task here. */
export interface LegacyHost {
  readonly o: ResolvedTaskOptions;
  /** This instance, as the lease owner of the tasks it runs. */
  readonly runner: string;
  start(
    t: TaskRecord,
    serve: (req: JsonRpcRequest, sink: ResponseSink, asks: RelatedAsks | undefined) => void,
    map: SettlementMap,
  ): void;
  countCreated(): void;
  /** Before a read of tasks: this instance's leases renewed when its timer is overdue (renewals.ts). */
  caughtUp(): Promise<void> | undefined;
}

type Body = Record<string, unknown>;

/** The owner of a 2025 session's tasks: its principal, else the session (never a 2026 owner). */
function ownerOf(o: LegacyTaskOffer): string {
  return `2025:${o.principal === undefined ? `s:${o.sessionId}` : principalKey(o.principal)}`;
}

/** The 2025-11-25 `Task` of a record (ISO times, `ttl` and `pollInterval` in ms). */
export function legacyTask(t: TaskRecord): Body {
  const message = t.statusMessage ?? (t.status === 'failed' ? t.error?.message : undefined);
  return {
    taskId: t.taskId,
    status: t.status,
    ...(message === undefined ? {} : { statusMessage: message }),
    createdAt: new Date(t.createdAt).toISOString(),
    lastUpdatedAt: new Date(t.lastUpdatedAt).toISOString(),
    ttl: t.ttlMs,
    pollInterval: t.pollIntervalMs,
  };
}

/**
 * 2025 outcomes: a tool result with isError fails the task and is kept for tasks/result; a run
 * that ended without an answer although nobody cancelled it (its session ended, its stream was
 * closed) fails at once, rather than when its lease lapses.
 */
export function legacySettlement(s: Settlement | undefined, abortedHere: boolean): Settlement | undefined {
  if (s === undefined) {
    if (abortedHere) return undefined;
    const message =
      'Internal error: the task ended without an answer (its session ended, or its stream closed)';
    return {
      status: 'failed',
      error: { code: JsonRpcCode.InternalError, message, data: { reason: 'task-unanswered' } },
    };
  }
  if (s.status === 'input_required') {
    const message =
      'Internal error: the tool asked for input, which a task served by Sluice on a 2025-11-25 session cannot forward';
    return { status: 'failed', error: { code: JsonRpcCode.InternalError, message } };
  }
  if (s.status === 'failed') return { ...s, message: s.error.message };
  if (s.result === undefined || !(JSON.parse(s.result) as Body)['isError']) return s;
  const message = 'The tool returned an error (isError)';
  return { status: 'failed', error: { code: JsonRpcCode.InternalError, message }, result: s.result, message };
}

export class LegacyTasks {
  readonly #h: LegacyHost;

  constructor(host: LegacyHost) {
    this.#h = host;
  }

  /** Declares the `tasks` capability on an SDK v1 server that has no task store of its own. */
  prepare(server: unknown): boolean {
    const outer = server as { server?: unknown } | null;
    const inner = (outer?.server ?? server) as {
      _taskStore?: unknown;
      registerCapabilities?: unknown;
    } | null;
    if (inner === null || typeof inner !== 'object' || typeof inner.registerCapabilities !== 'function')
      return false;
    // The SDK manages its own tasks (its taskStore, e.g. sdkTaskStore()): Sluice stays out of the way.
    if (inner._taskStore !== undefined) return false;
    (inner.registerCapabilities as (c: Body) => void).call(inner, {
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
    return true;
  }

  async offer(o: LegacyTaskOffer): Promise<boolean> {
    const m = o.req.method;
    if (m === 'tools/list') return this.#list(o);
    if (m === 'tools/call') return this.#call(o);
    const id = o.req.params?.['taskId'];
    try {
      await this.#h.caughtUp();
      if (m === 'tasks/list') return this.#send(o, await this.#tasks(o));
      if (!isTaskIdShape(id)) return this.#send(o, unknownTask(o));
      if (m === 'tasks/get') {
        const t = await this.#h.o.store.get(id, ownerOf(o));
        return this.#send(o, t === undefined ? unknownTask(o) : ok(o, legacyTask(t)));
      }
      if (m === 'tasks/cancel') return this.#send(o, await this.#cancel(o, id));
      return this.#send(o, await this.#result(o, id));
    } catch (error) {
      this.#h.o.logger?.error('tasks.store_failed', { method: m, error: String(error) });
      return this.#send(
        o,
        err(o, JsonRpcCode.InternalError, 'Internal error: the task store is unreachable'),
      );
    }
  }

  /** The server's tools/list, each configured tool with its `execution.taskSupport`. */
  async #list(o: LegacyTaskOffer): Promise<boolean> {
    const sink = new CaptureSink(16 * 1024 * 1024, () => undefined);
    o.serve(o.req, sink);
    const c = await sink.done;
    if (c.kind !== 'response')
      return this.#send(o, err(o, JsonRpcCode.InternalError, 'Internal error: tools/list failed'));
    const result = c.message['result'];
    if (isPlainObject(result) && Array.isArray(result['tools'])) {
      for (const tool of result['tools']) {
        if (!isPlainObject(tool) || typeof tool['name'] !== 'string') continue;
        const policy = this.#h.o.policy(tool['name']);
        const execution = isPlainObject(tool['execution']) ? tool['execution'] : {};
        if (policy !== undefined) tool['execution'] = { ...execution, taskSupport: policy };
      }
    }
    return this.#send(o, { status: 200, body: c.message });
  }

  async #call(o: LegacyTaskOffer): Promise<boolean> {
    const params = o.req.params ?? {};
    const name = params['name'];
    const policy = (typeof name === 'string' ? this.#h.o.policy(name) : undefined) ?? 'forbidden';
    const task = params['task'];
    if (task === undefined) {
      if (policy !== 'required') return false;
      return this.#send(
        o,
        err(
          o,
          JsonRpcCode.MethodNotFound,
          `Method not found: tool ${String(name)} must be called as a task (taskSupport: required)`,
        ),
      );
    }
    if (policy === 'forbidden') {
      return this.#send(
        o,
        err(
          o,
          JsonRpcCode.MethodNotFound,
          `Method not found: tool ${String(name)} cannot be called as a task (taskSupport: forbidden)`,
        ),
      );
    }
    if (!isPlainObject(task))
      return this.#send(o, err(o, JsonRpcCode.InvalidParams, 'Invalid params: task must be an object'));
    const asked = task['ttl'];
    // TaskMetadata.ttl is a number (2025-11-25 schema): anything else is a malformed request,
    // refused as the SDK's own validation would, before anything is stored. A number out of range
    // is overridden below (§"Task Lifecycle": receivers MAY override the requested ttl).
    if (asked !== undefined && typeof asked !== 'number')
      return this.#send(o, err(o, JsonRpcCode.InvalidParams, 'Invalid params: task.ttl must be a number'));
    const o2 = this.#h.o;
    const ttlMs =
      typeof asked === 'number' && Number.isFinite(asked) && asked > 0
        ? Math.max(1000, Math.min(Math.floor(asked), o2.ttlMs))
        : o2.ttlMs;
    const now = o2.now();
    const owner = ownerOf(o);
    const t = newWorkingTask({
      owner,
      client: clientHash(o.clientKey),
      ttlMs,
      pollIntervalMs: o2.pollIntervalMs,
      call: JSON.stringify(params),
      runner: this.#h.runner,
      leaseMs: o2.leaseMs,
      now,
    });
    return this.#create(o, t);
  }

  async #create(o: LegacyTaskOffer, t: TaskRecord): Promise<boolean> {
    const o2 = this.#h.o;
    let outcome: CreateOutcome;
    try {
      outcome = await o2.store.create(t, o2.maxLivePerClient);
    } catch (error) {
      o2.logger?.error('tasks.create_failed', { error: String(error) });
      return this.#send(
        o,
        err(o, JsonRpcCode.InternalError, 'Internal error: the task store is unreachable'),
      );
    }
    if (outcome === 'client-limit') {
      return this.#send(o, {
        ...err(
          o,
          JsonRpcCode.InternalError,
          `Too many tasks: this client already has ${o2.maxLivePerClient} unfinished tasks (tasks.maxLivePerClient)`,
        ),
        status: 429,
        retryAfter: Math.max(1, Math.ceil(o2.pollIntervalMs / 1000)),
      });
    }
    if (outcome === 'store-full') {
      return this.#send(o, {
        ...err(o, JsonRpcCode.InternalError, 'Internal error: the task store is full'),
        status: 503,
        retryAfter: 5,
      });
    }
    this.#h.countCreated();
    // Stored first (durable): a tasks/get right after this answer finds it.
    this.#send(o, ok(o, { task: legacyTask(t) }));
    this.#h.start(t, (req, sink, asks) => o.serve(req, sink, asks), legacySettlement);
    return true;
  }

  async #tasks(o: LegacyTaskOffer): Promise<Answer> {
    const cursor = o.req.params?.['cursor'];
    if (cursor !== undefined && typeof cursor !== 'string')
      return err(o, JsonRpcCode.InvalidParams, 'Invalid params: cursor must be a string');
    const page = await this.#h.o.store.list(ownerOf(o), cursor, PAGE);
    if (page === undefined) return err(o, JsonRpcCode.InvalidParams, 'Invalid params: unknown cursor');
    const tasks = page.tasks.map(legacyTask);
    return ok(o, page.nextCursor === undefined ? { tasks } : { tasks, nextCursor: page.nextCursor });
  }

  async #cancel(o: LegacyTaskOffer, id: string): Promise<Answer> {
    const store = this.#h.o.store;
    const before = await store.get(id, ownerOf(o));
    if (before === undefined) return unknownTask(o);
    if (isTerminal(before.status)) {
      return err(o, JsonRpcCode.InvalidParams, `Invalid params: the task is already ${before.status}`);
    }
    const t = await store.cancel(id, ownerOf(o), 'Cancelled by the client');
    if (t === undefined) return unknownTask(o);
    // Finished meanwhile (a race with its completion): a finished task cannot be cancelled.
    if (t.status !== 'cancelled')
      return err(o, JsonRpcCode.InvalidParams, `Invalid params: the task is already ${t.status}`);
    return ok(o, legacyTask(t));
  }

  /** Blocks until the task is final (or gone, or the client left), then what the call returned. */
  async #result(o: LegacyTaskOffer, id: string): Promise<Answer> {
    const store = this.#h.o.store;
    let wait = 20;
    for (;;) {
      await this.#h.caughtUp();
      const t = await store.get(id, ownerOf(o));
      if (t === undefined) return unknownTask(o);
      if (isTerminal(t.status)) return finalAnswer(o, t);
      if (o.sink.closed) return unknownTask(o);
      // Polling the store, quickly at first: any instance may be the one running the task.
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, t.pollIntervalMs);
    }
  }

  #send(o: LegacyTaskOffer, a: Answer): true {
    if (o.sink.closed) return true;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...o.headers };
    if (a.retryAfter !== undefined) headers['retry-after'] = String(a.retryAfter);
    o.sink.respond(a.status, headers, JSON.stringify(a.body));
    return true;
  }
}

interface Answer {
  status: number;
  body: Body;
  retryAfter?: number;
}

function ok(o: LegacyTaskOffer, result: Body): Answer {
  return { status: 200, body: { jsonrpc: '2.0', id: o.req.id, result } };
}

function err(o: LegacyTaskOffer, code: number, message: string, data?: unknown): Answer {
  const error = data === undefined ? { code, message } : { code, message, data };
  return { status: 200, body: { jsonrpc: '2.0', id: o.req.id, error } };
}

function unknownTask(o: LegacyTaskOffer): Answer {
  return err(o, JsonRpcCode.InvalidParams, 'Invalid params: unknown taskId');
}

/** What the task's call returned (§"Result Retrieval"), with the related-task `_meta`. */
function finalAnswer(o: LegacyTaskOffer, t: TaskRecord): Answer {
  if (t.result !== undefined) {
    return ok(o, withRelatedTask(JSON.parse(t.result) as Body, t.taskId));
  }
  if (t.status === 'failed' && t.error !== undefined)
    return { status: 200, body: { jsonrpc: '2.0', id: o.req.id, error: t.error } };
  return err(o, JsonRpcCode.InternalError, 'Internal error: the task was cancelled; it has no result', {
    reason: 'task-cancelled',
  });
}
