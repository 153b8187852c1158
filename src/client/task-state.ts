/**
 * What `tasks/get` says of a task (SEP-2663 DetailedTask) and the typed ways a task handle ends
 * badly (tasks.ts): kept apart so the handle's polling reads on its own.
 */
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import { SluiceClientError } from './errors.js';

export type TaskStatusName = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** What `tasks/get` says of a task (SEP-2663 DetailedTask). */
export interface TaskState {
  taskId: string;
  status: TaskStatusName;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  ttlMs?: number | null;
  pollIntervalMs?: number;
  result?: Result;
  error?: { code: number; message: string; data?: unknown };
  inputRequests?: Record<string, { method: string; params?: Record<string, unknown> }>;
}

export class TaskFailedError extends SluiceClientError {
  readonly taskId: string;
  readonly error: { code: number; message: string; data?: unknown };
  constructor(taskId: string, error: { code: number; message: string; data?: unknown }) {
    super('SLUICE_CLIENT_TASK_FAILED', `task ${taskId} failed: ${error.message}`);
    this.taskId = taskId;
    this.error = error;
  }
}

export class TaskCancelledError extends SluiceClientError {
  readonly taskId: string;
  constructor(taskId: string) {
    super('SLUICE_CLIENT_TASK_CANCELLED', `task ${taskId} was cancelled`);
    this.taskId = taskId;
  }
}

/** The task's TTL passed before it finished (or before the server could be reached again). */
export class TaskExpiredError extends SluiceClientError {
  readonly taskId: string;
  constructor(taskId: string, cause?: unknown) {
    super('SLUICE_CLIENT_TASK_EXPIRED', `task ${taskId} did not finish within its TTL`, { cause });
    this.taskId = taskId;
  }
}

/**
 * Polling went `maxOutageMs` without reaching the server (every `tasks/get` failed: connection
 * refused, 5xx, 429). The task may still be running; its id still reads it once the server is back.
 */
export class TaskUnreachableError extends SluiceClientError {
  readonly taskId: string;
  constructor(taskId: string, outageMs: number, cause: unknown) {
    super(
      'SLUICE_CLIENT_TASK_UNREACHABLE',
      `task ${taskId}: the server could not be reached for ${outageMs} ms (the task may still be running)`,
      { cause },
    );
    this.taskId = taskId;
  }
}

/** The server does not know the task (never, or no more: evicted, or another principal's). */
export class TaskNotFoundError extends SluiceClientError {
  readonly taskId: string;
  constructor(taskId: string) {
    super('SLUICE_CLIENT_TASK_NOT_FOUND', `the server does not know task ${taskId}`);
    this.taskId = taskId;
  }
}

/** The task waits for input the caller gave no handler for. */
export class TaskInputRequiredError extends SluiceClientError {
  readonly taskId: string;
  readonly inputRequests: TaskState['inputRequests'];
  constructor(taskId: string, inputRequests: TaskState['inputRequests']) {
    super(
      'SLUICE_CLIENT_TASK_INPUT_REQUIRED',
      `task ${taskId} requires input this client has no handler for`,
    );
    this.taskId = taskId;
    this.inputRequests = inputRequests;
  }
}
