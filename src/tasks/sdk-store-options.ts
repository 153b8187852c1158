/**
 * The options of `sdkTaskStore` (sdk-store.ts), validated once, and the small pure pieces it
 * shares: the SDK's `Task` of a record and the store's two refusals.
 */
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { InvalidOptionError, SdkTaskStoreError } from '../errors.js';
import { isTaskIdShape, type TaskRecord } from './model.js';
import { TASK_DEFAULTS } from './options.js';

export interface SdkTaskStoreOptions {
  /** The longest TTL a task gets; a longer or unlimited (null) request gets this. @defaultValue 3600000 (1 h) */
  maxTtlMs?: number;
  /** The polling interval when the request names none. @defaultValue 1000 */
  pollIntervalMs?: number;
  /** The shortest polling interval a request may ask for. @defaultValue 100 */
  minPollIntervalMs?: number;
  /** The lease of the instance running a task, renewed every third of it. @defaultValue 15000 */
  leaseMs?: number;
  /** Unfinished tasks per session; one more makes the SDK's `createTask` fail. @defaultValue 64 */
  maxLivePerOwner?: number;
  /** Bytes of a stored result (JSON); a larger one fails the task. @defaultValue 4194304 */
  maxResultBytes?: number;
  /** Tasks per `tasks/list` page. @defaultValue 50 */
  pageSize?: number;
  /**
   * Who owns a task an authenticated session creates: its principal (found by the principal's other
   * sessions too; needs the session hooks) or only that session. @defaultValue 'principal'
   */
  bind?: 'principal' | 'session';
  /** Clock, for tests. @defaultValue Date.now */
  now?: () => number;
}

/** Sessions whose principal is remembered at once (the session hooks; oldest dropped first). */
export const MAX_SESSIONS = 100_000;

export const SDK_TASK_STORE_DEFAULTS = {
  maxTtlMs: TASK_DEFAULTS.ttlMs,
  pollIntervalMs: TASK_DEFAULTS.pollIntervalMs,
  minPollIntervalMs: 100,
  leaseMs: TASK_DEFAULTS.leaseMs,
  maxLivePerOwner: TASK_DEFAULTS.maxLivePerClient,
  maxResultBytes: TASK_DEFAULTS.maxResultBytes,
  pageSize: 50,
} as const;

export function int(name: string, v: number, min: number): number {
  if (!Number.isInteger(v) || v < min)
    throw new InvalidOptionError(`sdkTaskStore.${name} must be an integer >= ${min}`);
  return v;
}

/** The SDK's `Task` of a record. */
export function sdkTask(t: TaskRecord): Task {
  const message = t.statusMessage ?? (t.status === 'failed' ? t.error?.message : undefined);
  return {
    taskId: t.taskId,
    status: t.status,
    ttl: t.ttlMs,
    createdAt: new Date(t.createdAt).toISOString(),
    lastUpdatedAt: new Date(t.lastUpdatedAt).toISOString(),
    pollInterval: t.pollIntervalMs,
    ...(message === undefined ? {} : { statusMessage: message }),
  };
}

export function notFound(taskId: string): SdkTaskStoreError {
  return new SdkTaskStoreError(
    'not-found',
    `Task not found: ${isTaskIdShape(taskId) ? taskId : '(malformed id)'}`,
  );
}

export function terminal(taskId: string, from: string, to: string): SdkTaskStoreError {
  return new SdkTaskStoreError(
    'terminal',
    `Cannot move task ${taskId} from terminal status '${from}' to '${to}'`,
  );
}
