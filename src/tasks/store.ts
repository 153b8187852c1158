/**
 * The one interface a task store implements (memory-store.ts: one process; redis-store.ts: every
 * instance of a cluster). Every operation is one atomic step on one task, so two instances racing
 * (a cancel against a completion, two `tasks/update`s) leave one consistent record:
 * - statuses only move forward: working ⇄ input_required, then one terminal status, sticky;
 * - only the instance holding the lease settles a working task (`runner`), and a lease that lapsed
 *   turns the task `failed` with OWNER_LOST on the next read, never `working` forever (nor
 *   `input_required`, when the runner kept its lease there: Settlement `leaseUntil`);
 * - reads are scoped by owner: another principal's task is undefined, like an unknown one.
 */
import { InvalidOptionError } from '../errors.js';
import type { TaskError, TaskRecord } from './model.js';

export type CreateOutcome = 'created' | 'client-limit' | 'store-full';

/** How a run of the tool ended, as the runner reports it. */
export type Settlement =
  /** `result` is the result as JSON text; only SDK v1's own task support completes a task without one. */
  (
    | { status: 'completed'; result?: string }
    /** `result`: what SDK v1's own task support stores for a failed task (its `tasks/result`). */
    | { status: 'failed'; error: TaskError; result?: string }
    | {
        status: 'input_required';
        inputRequests: Record<string, string>;
        requestState: string | undefined;
        /**
         * The runner goes on running (a 2025 task whose tool waits for the client's reply,
         * legacy-input.ts): it keeps its lease, renews it, and the task fails (owner lost) when the
         * lease lapses, as a working one does. Without it the task holds no lease (a 2026 task
         * waits for `tasks/update`, and no instance runs it meanwhile).
         */
        leaseUntil?: number;
      }
  ) & {
    /** Replaces the stored `statusMessage` (SDK v1's own task support sets one with a status). */
    message?: string;
  };

/** A page of an owner's tasks, oldest first (`tasks/list`, SEP-1686). */
export interface TaskPage {
  tasks: TaskRecord[];
  /** Where the next page starts; absent on the last page. */
  nextCursor?: string;
}

/** What a runner reports while the tool runs; each field given replaces the stored one. */
export interface TaskProgress {
  /** The latest progress message (`statusMessage`). */
  message?: string;
  /** The partial text so far (bounded by the runner), and whether the bound cut it. */
  partialText?: string;
  partialTruncated?: boolean;
}

export interface AnswerOutcome {
  task: TaskRecord;
  /** Every input request is answered now: the caller holds the lease and must run the next round. */
  resume: boolean;
}

export interface TaskStore {
  /**
   * Stores a new task (status working, leased by `t.leaseOwner`) once it is durable, unless its
   * client already has `maxLivePerClient` tasks that are not finished, or the store is full.
   */
  create(t: TaskRecord, maxLivePerClient: number): Promise<CreateOutcome>;
  /** The task, if it exists and `owner` created it (a lapsed lease is failed first). */
  get(taskId: string, owner: string): Promise<TaskRecord | undefined>;
  /**
   * Extends the runner's lease (of a working task, or an input_required one it kept the lease of);
   * false when the task is no longer its to run (cancelled, gone, lapsed).
   *
   * A lease lapses when something other than its runner reads it: a renewal, progress or
   * settlement that comes late (its process stalled past the lease: a long GC, a starved CPU, an
   * event loop held) still holds the task when nothing read it meanwhile — no one was told it
   * failed, and its runner is plainly alive. Once anything read it past its end, the task is
   * failed (owner lost) and the runner's steps are refused.
   */
  renew(taskId: string, runner: string, leaseUntil: number): Promise<boolean>;
  /** The runner's progress and partial text; ignored unless it still holds the lease. */
  progress(taskId: string, runner: string, p: TaskProgress): Promise<void>;
  /** The runner's outcome; false (and nothing changed) unless it still holds the lease. */
  settle(taskId: string, runner: string, s: Settlement): Promise<boolean>;
  /**
   * Cancels a task that is not finished (sticky) and tells its runner, wherever it is, through
   * `onCancel`. A finished task is left as it is. Undefined when unknown to `owner`.
   */
  cancel(taskId: string, owner: string, message?: string): Promise<TaskRecord | undefined>;
  /**
   * Up to `limit` of `owner`'s tasks that have not expired, after `cursor` (the `nextCursor` of the
   * page before; an opaque string). Undefined when the cursor is not one this store gave `owner`.
   */
  list(owner: string, cursor: string | undefined, limit: number): Promise<TaskPage | undefined>;
  /**
   * Records answers to pending input requests (unknown keys are ignored); once none is pending the
   * task is working again, leased to `runner` until `leaseUntil`, and `resume` is true.
   */
  answer(
    taskId: string,
    owner: string,
    responses: Record<string, string>,
    runner: string,
    leaseUntil: number,
  ): Promise<AnswerOutcome | undefined>;
  /** Called with the id of every task cancelled through any instance sharing this store. */
  onCancel(listener: (taskId: string) => void): () => void;
  close(): Promise<void>;
}

/** Bytes a record holds beyond its fixed fields (what the stores bound). */
/**
 * How much of one client's finished work a store keeps. Live tasks are bounded per client
 * (`maxLivePerClient`) but finished ones were kept until their TTL, so one client that ran short
 * tasks in a loop could fill the store (or the Redis) with results for an hour (2025-11-25
 * basic/utilities/tasks §"Resource Management": limits per requestor, no indefinite retention). Beyond either
 * bound, that client's own oldest finished tasks are dropped; other clients' are never touched, and
 * an unfinished task is never dropped. The newest finished task is always kept.
 */
export interface FinishedBounds {
  /** Finished tasks kept per client (principal, else address). @defaultValue 1000 */
  maxFinishedPerClient?: number;
  /** Bytes of finished tasks (results, errors, messages) kept per client. @defaultValue 16 MiB */
  maxFinishedBytesPerClient?: number;
}

export const FINISHED_DEFAULTS = {
  maxFinishedPerClient: 1000,
  maxFinishedBytesPerClient: 16 * 1024 * 1024,
} as const;

/** The bounds, validated (InvalidOptionError names the store and the option). */
export function finishedBounds(store: string, o: FinishedBounds): Required<FinishedBounds> {
  const count = o.maxFinishedPerClient ?? FINISHED_DEFAULTS.maxFinishedPerClient;
  const bytes = o.maxFinishedBytesPerClient ?? FINISHED_DEFAULTS.maxFinishedBytesPerClient;
  for (const [name, v] of [
    ['maxFinishedPerClient', count],
    ['maxFinishedBytesPerClient', bytes],
  ] as const) {
    if (!Number.isSafeInteger(v) || v <= 0)
      throw new InvalidOptionError(`${store}: ${name} must be a positive integer`);
  }
  return { maxFinishedPerClient: count, maxFinishedBytesPerClient: bytes };
}

export function recordBytes(t: TaskRecord): number {
  let n =
    t.call.length +
    (t.paramHeaders?.length ?? 0) +
    (t.result?.length ?? 0) +
    (t.statusMessage?.length ?? 0) +
    (t.partialText?.length ?? 0);
  if (t.error !== undefined) n += JSON.stringify(t.error).length;
  // Counted on every store write: no array or entry pairs allocated for records without inputs.
  if (t.inputRequests !== undefined) n += textMapBytes(t.inputRequests);
  if (t.inputResponses !== undefined) n += textMapBytes(t.inputResponses);
  return n + (t.requestState?.length ?? 0) + 256;
}

function textMapBytes(m: Record<string, string>): number {
  let n = 0;
  for (const k in m) n += k.length + (m[k] as string).length;
  return n;
}
