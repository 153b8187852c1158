/**
 * The client side of the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) for a
 * 2026-07-28 server: a tool call that may outlive any one connection.
 *
 *   const task = await callToolAsTask(client, { name: 'reindex', arguments: {}, _meta: MODERN_META });
 *   console.log(task.taskId);
 *   const result = await task.result();   // polls tasks/get every pollIntervalMs
 *
 * `callToolAsTask` declares the extension in the request's clientCapabilities (SEP-2663: without
 * it a server never creates a task) and sends the call. The server decides: a `CreateTaskResult`
 * gives a handle on the task; a plain result (a tool that does not run as a task) gives a handle
 * already completed. The handle polls `tasks/get` at the server's `pollIntervalMs`; a failed poll
 * (connection lost, an instance restarting behind a balancer, 429/503) is retried at the same pace
 * until the task's TTL, since the task lives on the server, not in the connection. Then
 * {@link TaskExpiredError}. A task waiting for input is answered with the caller's handlers
 * (`tasks/update`), else {@link TaskInputRequiredError}.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ClientRequest, Progress, Result } from '@modelcontextprotocol/sdk/types.js';
import { InvalidOptionError } from '../errors.js';
import { isPlainObject as isObject } from '../jsonrpc/message.js';
import { META_CLIENT_CAPABILITIES, TASKS_EXTENSION } from '../jsonrpc/meta-keys.js';
import { type InputHandlers, type InputRequestMethod, paramsFault } from './call-with-input.js';
import { MalformedMessageError } from './errors.js';
import {
  TaskCancelledError,
  TaskExpiredError,
  TaskFailedError,
  TaskInputRequiredError,
  TaskNotFoundError,
  type TaskState,
  TaskUnreachableError,
} from './task-state.js';

export { TASKS_EXTENSION };

export interface CallToolAsTaskOptions {
  /** Answers the task's input requests (`tasks/update`); without one, `result()` rejects on input_required. */
  inputHandlers?: InputHandlers;
  /** Polling interval when the server suggests none. @defaultValue 1000 */
  pollIntervalMs?: number;
  /** How long to keep polling when the server gave no TTL. @defaultValue 3600000 */
  maxWaitMs?: number;
  /** Stops `result()` (the task keeps running; call `cancel()` to stop it). */
  signal?: AbortSignal;
  /**
   * How long `result()` polls through failures in a row (no answer from any instance) before it
   * gives up with {@link TaskUnreachableError}. @defaultValue the task's TTL (polls until then)
   */
  maxOutageMs?: number;
  /** Called with every status `result()` reads (progress display: `statusMessage`). */
  onStatus?: (state: TaskState) => void;
  /**
   * Progress on the call's own answer: the call carries a `progressToken`, and a server that holds
   * it before making it a task (Sluice's `taskAfterMs`, docs/tasks.md) sends the tool's progress
   * there, as for a plain call. Once the call is a task its progress comes as `statusMessage`
   * (`onStatus`).
   */
  onProgress?: (progress: Progress) => void;
}

export interface TaskHandle {
  readonly taskId: string;
  /** The server ran the call without a task: `result()` is this at once. */
  readonly immediate: boolean;
  status(): Promise<TaskState>;
  /** Polls until the task finishes: its result, or a typed error. */
  result(): Promise<Result>;
  cancel(): Promise<void>;
  update(inputResponses: Record<string, unknown>): Promise<void>;
}

/** Clock skew and transit tolerated between this client's deadline and the server's eviction. */
const EVICTION_SLACK_MS = 1000;

const ANY_RESULT = { safeParse: (data: unknown) => ({ success: true as const, data }) };
type Requester = Pick<Client, 'request'>;

function withExtension(meta: Record<string, unknown>): Record<string, unknown> {
  const caps = isObject(meta[META_CLIENT_CAPABILITIES]) ? meta[META_CLIENT_CAPABILITIES] : {};
  const ext = isObject(caps['extensions']) ? caps['extensions'] : {};
  return { ...meta, [META_CLIENT_CAPABILITIES]: { ...caps, extensions: { ...ext, [TASKS_EXTENSION]: {} } } };
}

function positive(name: string, v: number | undefined, d: number): number {
  const n = v ?? d;
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidOptionError(`${name} must be a positive integer`);
  return n;
}

/**
 * A server's suggested polling interval, if it is one: 0, a negative or a non-number is none (a
 * pace of 0 would poll in a tight loop), and the caller's own pace applies.
 */
function paceOf(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;
}

function codeOf(error: unknown): number | undefined {
  const c = (error as { code?: unknown } | null)?.code;
  return typeof c === 'number' ? c : undefined;
}

/** JSON-RPC refusals that sending the same request again cannot change. */
const FINAL_CODES = new Set([-32600, -32601, -32020, -32021]);

/**
 * Whether a failed `tasks/update` is final: the server refused that request (a JSON-RPC error
 * above, an HTTP 4xx other than 408, 425 or 429), rather than not being reached.
 */
function refused(error: unknown): boolean {
  const c = codeOf(error);
  if (c === undefined) return false;
  return FINAL_CODES.has(c) || (c >= 400 && c < 500 && c !== 408 && c !== 425 && c !== 429);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Calls a tool as a task on a 2026-07-28 server. `params._meta` must carry the request's revision
 * (`io.modelcontextprotocol/protocolVersion`); the extension is added to its clientCapabilities,
 * and the same `_meta` goes with every `tasks/*` request of the handle.
 */
export async function callToolAsTask(
  client: Requester,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
  options: CallToolAsTaskOptions = {},
): Promise<TaskHandle> {
  const poll = positive('pollIntervalMs', options.pollIntervalMs, 1000);
  const maxWait = positive('maxWaitMs', options.maxWaitMs, 3_600_000);
  if (options.maxOutageMs !== undefined) positive('maxOutageMs', options.maxOutageMs, 1);
  const meta = withExtension(params._meta ?? {});
  // The TTL runs from the server's creation, which follows this moment: a deadline counted from
  // here ends no later than the server's eviction (on one clock).
  const sentAt = Date.now();
  const created: unknown = await client.request(
    { method: 'tools/call', params: { ...params, _meta: meta } } as ClientRequest,
    ANY_RESULT as unknown as Parameters<Client['request']>[1],
    {
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      // The SDK adds the request's progressToken to its `_meta` and routes the notifications here.
      ...(options.onProgress === undefined ? {} : { onprogress: options.onProgress }),
    },
  );
  if (!isObject(created)) throw new MalformedMessageError('tools/call: the result is not an object');
  if (created['resultType'] !== 'task') return immediateHandle(created as Result);
  const taskId = created['taskId'];
  if (typeof taskId !== 'string') throw new MalformedMessageError('CreateTaskResult without a taskId');
  const ttl = typeof created['ttlMs'] === 'number' ? created['ttlMs'] : undefined;
  return new PolledTask(client, taskId, meta, options, {
    pollMs: paceOf(created['pollIntervalMs']) ?? poll,
    deadline: sentAt + (ttl ?? maxWait),
  });
}

/**
 * The transparent mode: calls a tool and resolves with its result, as `client.callTool` would, but
 * asks for a task. Where the server runs the tool as a task the call survives lost connections
 * and instance switches (polled to the end, or a typed error); where it does not (no tasks
 * extension, or the tool is not a task there) the plain result comes back at once.
 */
export async function callToolDurably(
  client: Requester,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
  options: CallToolAsTaskOptions = {},
): Promise<Result> {
  return (await callToolAsTask(client, params, options)).result();
}

function immediateHandle(result: Result): TaskHandle {
  const state: TaskState = { taskId: '', status: 'completed', result };
  return {
    taskId: '',
    immediate: true,
    status: async () => state,
    result: async () => result,
    cancel: async () => undefined,
    update: async () => undefined,
  };
}

class PolledTask implements TaskHandle {
  readonly taskId: string;
  readonly immediate = false;
  readonly #client: Requester;
  readonly #meta: Record<string, unknown>;
  readonly #options: CallToolAsTaskOptions;
  #pollMs: number;
  readonly #deadline: number;
  /**
   * Each input request's response, by key, from its handler until a `tasks/update` delivered it
   * (a failed update is sent again without asking again), and each delivered key with the
   * `lastUpdatedAt` of the state it answered: the ack is eventually consistent (SEP-2663
   * "tasks/update"), so `tasks/get` may show that state again; its keys are neither asked again
   * nor sent again ("Clients SHOULD track inputRequests keys to avoid responding to requests more
   * than once"). A later state asking under a used key (a server reusing keys) is answered.
   */
  readonly #responses = new Map<string, unknown>();
  readonly #delivered = new Map<string, string | undefined>();

  constructor(
    client: Requester,
    taskId: string,
    meta: Record<string, unknown>,
    options: CallToolAsTaskOptions,
    timing: { pollMs: number; deadline: number },
  ) {
    this.taskId = taskId;
    this.#client = client;
    this.#meta = meta;
    this.#options = options;
    this.#pollMs = timing.pollMs;
    this.#deadline = timing.deadline;
  }

  async #ask(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const signal = this.#options.signal;
    try {
      const r: unknown = await this.#client.request(
        { method, params: { ...params, taskId: this.taskId, _meta: this.#meta } } as ClientRequest,
        ANY_RESULT as unknown as Parameters<Client['request']>[1],
        signal === undefined ? undefined : { signal },
      );
      if (!isObject(r)) throw new MalformedMessageError(`${method}: the result is not an object`);
      return r;
    } catch (error) {
      if (codeOf(error) === -32602) throw new TaskNotFoundError(this.taskId);
      throw error;
    }
  }

  async status(): Promise<TaskState> {
    const r = await this.#ask('tasks/get', {});
    if (typeof r['status'] !== 'string') throw new MalformedMessageError('tasks/get: no status');
    this.#pollMs = paceOf(r['pollIntervalMs']) ?? this.#pollMs;
    return r as unknown as TaskState;
  }

  async cancel(): Promise<void> {
    await this.#ask('tasks/cancel', {});
  }

  async update(inputResponses: Record<string, unknown>): Promise<void> {
    await this.#ask('tasks/update', { inputResponses });
  }

  async result(): Promise<Result> {
    let lastError: unknown;
    /** When the current run of failed polls began (undefined while the server answers). */
    let failingSince: number | undefined;
    const outage = this.#options.maxOutageMs;
    for (;;) {
      if (Date.now() >= this.#deadline) throw new TaskExpiredError(this.taskId, lastError);
      let s: TaskState | undefined;
      try {
        s = await this.status();
        lastError = undefined;
        failingSince = undefined;
        this.#options.onStatus?.(s);
      } catch (error) {
        // The task lives on the server: a lost connection, an instance restarting, a 503 or a 429
        // is waited out at the polling pace until the TTL. Only "unknown task" is final; near the
        // end of the TTL it means the server evicted the task: expired.
        if (
          error instanceof TaskNotFoundError &&
          Date.now() >= this.#deadline - this.#pollMs - EVICTION_SLACK_MS
        ) {
          throw new TaskExpiredError(this.taskId, error);
        }
        if (error instanceof TaskNotFoundError || this.#options.signal?.aborted) throw error;
        lastError = error;
        failingSince ??= Date.now();
        if (outage !== undefined && Date.now() - failingSince >= outage) {
          throw new TaskUnreachableError(this.taskId, outage, error);
        }
      }
      if (s !== undefined) {
        if (s.status === 'completed') return s.result ?? ({} as Result);
        if (s.status === 'failed') {
          throw new TaskFailedError(this.taskId, s.error ?? { code: -32603, message: 'no error given' });
        }
        if (s.status === 'cancelled') throw new TaskCancelledError(this.taskId);
        // Answers sent: read the task again at once. Nothing new to answer (the update is not
        // reflected yet): wait the polling interval, as for a working task. An update that did
        // not reach the server is a failed poll: sent again at the next one.
        if (s.status === 'input_required') {
          const a = await this.#answer(s);
          if (a === 'sent') continue;
          if (a !== 'none') {
            lastError = a.failed;
            failingSince ??= Date.now();
            if (outage !== undefined && Date.now() - failingSince >= outage) {
              throw new TaskUnreachableError(this.taskId, outage, a.failed);
            }
          }
        }
      }
      await sleep(Math.min(this.#pollMs, Math.max(0, this.#deadline - Date.now())), this.#options.signal);
    }
  }

  /** Answers the input requests not answered yet: 'none' when there were none. */
  async #answer(s: TaskState): Promise<'sent' | 'none' | { failed: unknown }> {
    const stamp = s.lastUpdatedAt;
    const asked = Object.entries(s.inputRequests ?? {}).filter(
      ([key]) => !this.#delivered.has(key) || this.#delivered.get(key) !== stamp,
    );
    if (asked.length === 0) return 'none';
    const handlers = this.#options.inputHandlers ?? {};
    for (const [key, req] of asked) {
      if (!this.#responses.has(key) && handlers[req.method as InputRequestMethod] === undefined) {
        throw new TaskInputRequiredError(this.taskId, s.inputRequests);
      }
      const fault = paramsFault(req.method, req.params ?? {});
      if (fault !== undefined)
        throw new MalformedMessageError(`task ${this.taskId}: input request "${key}" is ${fault}`);
    }
    const responses: Record<string, unknown> = {};
    const signal = this.#options.signal;
    for (const [key, req] of asked) {
      if (!this.#responses.has(key)) {
        // Checked above: params with what this method's type promises (paramsFault).
        const handler = handlers[req.method as InputRequestMethod] as (
          params: Record<string, unknown>,
          context: { signal?: AbortSignal },
        ) => Promise<unknown>;
        this.#responses.set(key, await handler(req.params ?? {}, signal === undefined ? {} : { signal }));
      }
      responses[key] = this.#responses.get(key);
    }
    try {
      await this.update(responses);
    } catch (error) {
      if (error instanceof TaskNotFoundError || signal?.aborted || refused(error)) throw error;
      return { failed: error };
    }
    for (const key of Object.keys(responses)) {
      this.#delivered.set(key, stamp);
      this.#responses.delete(key);
    }
    return 'sent';
  }
}
