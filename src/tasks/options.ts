/**
 * The options of `createTasks()`, validated once, with their defaults.
 */
import type { Logger } from '../core/options.js';
import { InvalidOptionError } from '../errors.js';
import { MemoryTaskStore } from './memory-store.js';
import type { TaskStore } from './store.js';

/**
 * Whether a tool runs as a task (SEP-2663 leaves the choice to the server): `forbidden` never,
 * `optional` when the client declared the extension, `required` always (a client that did not
 * declare it gets -32021).
 */
export type TaskPolicy = 'forbidden' | 'optional' | 'required';

export interface TaskOptions {
  /** Where tasks are kept. @defaultValue a MemoryTaskStore (one process, bounded) */
  store?: TaskStore;
  /**
   * Which tools run as tasks: a map of tool name → policy (see `taskTools`), or a function
   * (undefined: not named). A tool not named gets the policy its `tools/list` entry declares
   * (`execution.taskSupport`, see `toolsFromList`), else `forbidden`. @defaultValue {}
   */
  tools?: Readonly<Record<string, TaskPolicy>> | ((tool: string) => TaskPolicy | undefined);
  /**
   * Whether a tool `tools` does not name gets the policy its own definition declares
   * (`execution.taskSupport` in `tools/list`, read through the served server per principal and
   * kept 30 s); false: not named is `forbidden`. @defaultValue true
   */
  toolsFromList?: boolean;
  /**
   * Tools whose MRTR rounds run as plain calls until the client sends answers: a first call's
   * `input_required` goes straight back (SEP-2663 "MRTR → Tasks composition"), and the task is
   * created with the call that carries `inputResponses`. @defaultValue []
   */
  inputFirst?: readonly string[];
  /** How long a task's record is kept after its creation (`ttlMs` on the wire). @defaultValue 3600000 (1 h) */
  ttlMs?: number;
  /** The polling interval suggested to clients (`pollIntervalMs`). @defaultValue 1000 */
  pollIntervalMs?: number;
  /**
   * How long an `optional` tool's call may run before it becomes a task. A call that ends sooner
   * with a result or an error is answered with it directly, as a plain call, and nothing is stored
   * (SEP-2663 "Task Creation": the server decides per request; a polling client would otherwise
   * wait `pollIntervalMs` for a call that took milliseconds). One that is still running, or asks
   * for input, becomes a task then. `required` tools are tasks at once. 0: every call of an
   * `optional` tool is a task at once. At most 60 000. @defaultValue 250
   */
  taskAfterMs?: number;
  /**
   * The lease of the instance running a task, renewed every third of it; once it lapses (the
   * instance died) the task reads as `failed` with the owner-lost error. @defaultValue 15000
   */
  leaseMs?: number;
  /** Unfinished tasks per client (principal, else address); one more gets 429 + Retry-After. @defaultValue 64 */
  maxLivePerClient?: number;
  /** Bytes of the `inputResponses` of one `tasks/update` (JSON); more gets -32602. @defaultValue 262144 */
  maxUpdateBytes?: number;
  /** Bytes of a task's result; a larger one fails the task. @defaultValue 4194304 */
  maxResultBytes?: number;
  /**
   * Characters of partial output (partialResults) a running task keeps for `tasks/get`: the first
   * ones; past that the rest is dropped and the text is marked `truncated` (the result still has
   * all of it). 0 keeps none. @defaultValue 65536
   */
  maxPartialBytes?: number;
  logger?: Logger;
  /** Clock, for tests. @defaultValue Date.now */
  now?: () => number;
}

export interface ResolvedTaskOptions {
  store: TaskStore;
  /** The configured policy; undefined when `tools` does not name the tool. */
  policy: (tool: string) => TaskPolicy | undefined;
  toolsFromList: boolean;
  inputFirst: ReadonlySet<string>;
  ttlMs: number;
  pollIntervalMs: number;
  taskAfterMs: number;
  leaseMs: number;
  maxLivePerClient: number;
  maxUpdateBytes: number;
  maxResultBytes: number;
  maxPartialBytes: number;
  logger: Logger | undefined;
  now: () => number;
}

export const TASK_DEFAULTS = {
  ttlMs: 3_600_000,
  pollIntervalMs: 1000,
  taskAfterMs: 250,
  leaseMs: 15_000,
  maxLivePerClient: 64,
  maxUpdateBytes: 256 * 1024,
  maxResultBytes: 4 * 1024 * 1024,
  maxPartialBytes: 64 * 1024,
} as const;

const POLICIES = new Set<string>(['forbidden', 'optional', 'required']);

function int(name: string, v: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(v) || v < min || v > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new InvalidOptionError(`tasks.${name} must be an integer ${range}`);
  }
  return v;
}

/** A policy map checked once: `createTasks({ tools: taskTools({ reindex: 'required' }) })`. */
export function taskTools(
  tools: Readonly<Record<string, TaskPolicy>>,
): (tool: string) => TaskPolicy | undefined {
  if (typeof tools !== 'object' || tools === null)
    throw new InvalidOptionError('tasks.tools must be an object');
  const map = new Map<string, TaskPolicy>();
  for (const [name, p] of Object.entries(tools)) {
    if (!POLICIES.has(p)) {
      throw new InvalidOptionError(`tasks.tools.${name} must be 'forbidden', 'optional' or 'required'`);
    }
    map.set(name, p);
  }
  return (tool) => map.get(tool);
}

export function resolveTaskOptions(o: TaskOptions = {}): ResolvedTaskOptions {
  const store = o.store ?? new MemoryTaskStore(o.now === undefined ? {} : { now: o.now });
  if (typeof store.get !== 'function' || typeof store.create !== 'function') {
    throw new InvalidOptionError('tasks.store must implement TaskStore');
  }
  const tools = o.tools ?? {};
  const ttlMs = int('ttlMs', o.ttlMs ?? TASK_DEFAULTS.ttlMs, 1000);
  const leaseMs = int('leaseMs', o.leaseMs ?? TASK_DEFAULTS.leaseMs, 300);
  return {
    store,
    policy: typeof tools === 'function' ? tools : taskTools(tools),
    toolsFromList: bool('toolsFromList', o.toolsFromList ?? true),
    inputFirst: new Set(inputFirstOf(o.inputFirst)),
    ttlMs,
    pollIntervalMs: int('pollIntervalMs', o.pollIntervalMs ?? TASK_DEFAULTS.pollIntervalMs, 1),
    taskAfterMs: int('taskAfterMs', o.taskAfterMs ?? TASK_DEFAULTS.taskAfterMs, 0, 60_000),
    leaseMs,
    maxLivePerClient: int('maxLivePerClient', o.maxLivePerClient ?? TASK_DEFAULTS.maxLivePerClient, 1),
    maxUpdateBytes: int('maxUpdateBytes', o.maxUpdateBytes ?? TASK_DEFAULTS.maxUpdateBytes, 1),
    maxResultBytes: int('maxResultBytes', o.maxResultBytes ?? TASK_DEFAULTS.maxResultBytes, 1),
    maxPartialBytes: int('maxPartialBytes', o.maxPartialBytes ?? TASK_DEFAULTS.maxPartialBytes, 0),
    logger: o.logger,
    now: o.now ?? Date.now,
  };
}

function bool(name: string, v: boolean): boolean {
  if (typeof v !== 'boolean') throw new InvalidOptionError(`tasks.${name} must be a boolean`);
  return v;
}

function inputFirstOf(v: readonly string[] | undefined): readonly string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((n) => typeof n === 'string')) {
    throw new InvalidOptionError('tasks.inputFirst must be an array of tool names');
  }
  return v;
}
