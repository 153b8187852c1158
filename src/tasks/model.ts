/**
 * The task model of the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): a task's
 * record as every store keeps it, its statuses and their one-way transitions, task ids, and the two
 * wire shapes built from a record (the flat `CreateTaskResult` a task-augmented `tools/call`
 * answers, and the `DetailedTask` of `tasks/get`).
 *
 * A task id is 256 random bits, never derived from anything (a guess is hopeless), and never a
 * credential: every read also checks the principal the task was created by (`owner`), and another
 * principal's read is not-found, exactly like an unknown id.
 */

import { META_TASK_PARTIAL } from '../jsonrpc/meta-keys.js';
import { randomToken } from '../security/random.js';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

export function isTerminal(s: TaskStatus): boolean {
  return TERMINAL.has(s);
}

/** A JSON-RPC error object, as a failed task carries it. */
export interface TaskError {
  code: number;
  message: string;
  data?: unknown;
}

export interface TaskRecord {
  readonly taskId: string;
  /** Who created it: the principal's key (principalKey()); another one never sees the task. */
  readonly owner: string;
  /** The client the live-task limit counts it against (a hash of the principal or the address). */
  readonly client: string;
  status: TaskStatus;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  lastUpdatedAt: number;
  /** How long the record is kept after its creation (the store evicts it then). */
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  statusMessage?: string | undefined;
  /** While working: the partial text its tool sent so far (bounded), and whether it was cut. */
  partialText?: string | undefined;
  partialTruncated?: boolean | undefined;
  /** When completed: the tool's result, as JSON text (what the call would have returned). */
  result?: string | undefined;
  /** When failed: the JSON-RPC error. */
  error?: TaskError | undefined;
  /** When input_required: the still unanswered input requests, key → request as JSON text. */
  inputRequests?: Record<string, string> | undefined;
  /** The MRTR `requestState` the tool returned with its input requests (opaque). */
  requestState?: string | undefined;
  /** Answers received so far for this round, key → response as JSON text. */
  inputResponses?: Record<string, string> | undefined;
  /** The `tools/call` params as JSON text (re-run after input answers arrive). */
  readonly call: string;
  /** The call's `Mcp-Param-*` headers as JSON (name → value), for its later rounds. */
  readonly paramHeaders?: string | undefined;
  /** The instance running it and until when its lease holds (only while working). */
  leaseOwner?: string | undefined;
  leaseUntil?: number | undefined;
}

/** The error a task gets when the instance running it stopped renewing its lease. */
export const OWNER_LOST: TaskError = {
  code: -32603,
  message:
    'Task failed: the server instance running it stopped (its lease lapsed); the work may or may not have had effects',
  data: { reason: 'task-owner-lost' },
};

/**
 * 32 random bytes, base64url: 43 characters (from the pool: a `randomBytes` per id was 3 % of a task's CPU).
 * Never starting with `-`, so that an id pasted after a command's verb is not read as an option: a draw
 * that does (1 in 64) is drawn again, which keeps the ids uniform over the rest.
 */
export function newTaskId(): string {
  for (;;) {
    const id = randomToken(32);
    if (id.charCodeAt(0) !== 0x2d) return id;
  }
}

/** What a new task is stored as, whichever route creates it (2026 call, 2025 call, SDK store). */
export interface NewTask {
  owner: string;
  client: string;
  ttlMs: number;
  pollIntervalMs: number;
  /** The call as stored (JSON). */
  call: string;
  paramHeaders?: string | undefined;
  /** The instance that runs it and holds its lease from `now` for `leaseMs`. */
  runner: string;
  leaseMs: number;
  now: number;
}

/** A fresh `working` task with a new id, leased to the instance that runs it. */
export function newWorkingTask(n: NewTask): TaskRecord {
  return {
    taskId: newTaskId(),
    owner: n.owner,
    client: n.client,
    status: 'working',
    createdAt: n.now,
    lastUpdatedAt: n.now,
    ttlMs: n.ttlMs,
    pollIntervalMs: n.pollIntervalMs,
    statusMessage: undefined,
    partialText: undefined,
    partialTruncated: undefined,
    result: undefined,
    error: undefined,
    inputRequests: undefined,
    requestState: undefined,
    inputResponses: undefined,
    call: n.call,
    paramHeaders: n.paramHeaders,
    leaseOwner: n.runner,
    leaseUntil: n.now + n.leaseMs,
  };
}

/**
 * A copy of `t` with every field of a record present, in one order (absent ones undefined): every
 * record the memory store keeps or hands out has then one hidden class, so the reads on the task
 * path (the store's checks, byte counts, `tasks/get`'s JSON) stay monomorphic, and a settle writes
 * fields that exist instead of adding some. `newWorkingTask` builds the same shape.
 */
export function copyRecord(t: TaskRecord): TaskRecord {
  return {
    taskId: t.taskId,
    owner: t.owner,
    client: t.client,
    status: t.status,
    createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt,
    ttlMs: t.ttlMs,
    pollIntervalMs: t.pollIntervalMs,
    statusMessage: t.statusMessage,
    partialText: t.partialText,
    partialTruncated: t.partialTruncated,
    result: t.result,
    error: t.error,
    inputRequests: t.inputRequests,
    requestState: t.requestState,
    inputResponses: t.inputResponses,
    call: t.call,
    paramHeaders: t.paramHeaders,
    leaseOwner: t.leaseOwner,
    leaseUntil: t.leaseUntil,
  };
}

/**
 * The progress token a round's call gets when the client's call had none: the tool's progress then
 * still reaches `statusMessage` (server/partial-results.ts needs a token to send partial output).
 * Progress under this token is the task's own, never the client's.
 */
export function ownProgressToken(taskId: string): string {
  return `sluice-task:${taskId}`;
}

/** What a task id looks like; anything else is not looked up at all. */
export function isTaskIdShape(v: unknown): v is string {
  return typeof v === 'string' && v.length >= 16 && v.length <= 128 && /^[A-Za-z0-9_-]+$/.test(v);
}

/** The owner key of a principal; requests without authentication share the anonymous one. */
export function principalKey(principal: string | undefined): string {
  return principal === undefined ? 'anon' : `p:${principal}`;
}

/**
 * ISO-8601 text of a time, from the text of its second: under load many tasks are created and
 * polled within the same second, and a `Date` plus its ISO text per field was 1.5 % of a task
 * echo's CPU. Two seconds are kept: a task's createdAt and lastUpdatedAt may straddle one.
 */
const isoSecond = [Number.NaN, Number.NaN];
const isoPrefix = ['', ''];
let isoNext = 0;
function iso(ms: number): string {
  const sec = Math.floor(ms / 1000);
  const milli = ms - sec * 1000;
  // Whole milliseconds only (Date.now()); anything else takes the Date path.
  if (Number.isInteger(milli)) {
    const tail = milli < 10 ? `00${milli}Z` : milli < 100 ? `0${milli}Z` : `${milli}Z`;
    if (sec === isoSecond[0]) return `${isoPrefix[0]}${tail}`;
    if (sec === isoSecond[1]) return `${isoPrefix[1]}${tail}`;
  }
  const text = new Date(ms).toISOString();
  if (Number.isInteger(milli) && text.length === 24) {
    // `YYYY-MM-DDTHH:MM:SS.` (years 0000-9999: the 24-character form).
    isoSecond[isoNext] = sec;
    isoPrefix[isoNext] = text.slice(0, 20);
    isoNext ^= 1;
  }
  return text;
}

/**
 * The DetailedTask of `tasks/get` (SEP-2663) as JSON text: the result inline when completed, the
 * error when failed, the input requests while input_required, and while unfinished the partial
 * text so far under `_meta` (a Sluice extension: SEP-2663 has no field for it; the finished result
 * is authoritative and replaces it). Written directly, the same text `JSON.stringify` gives of the
 * object (a property test holds it to that): a poll builds no objects, and what the store keeps as
 * JSON text (the result, each input request: only ever what `JSON.stringify` produced) is spliced
 * in, not parsed and serialized again.
 */
export function detailedTaskJson(t: TaskRecord): string {
  let out = `{"resultType":"complete",${taskFieldsJson(t)}`;
  if (!isTerminal(t.status) && t.partialText !== undefined) {
    out += `,"_meta":${JSON.stringify({ [META_TASK_PARTIAL]: { text: t.partialText, truncated: t.partialTruncated === true } })}`;
  }
  if (t.status === 'failed' && t.error !== undefined) out += `,"error":${JSON.stringify(t.error)}`;
  if (t.status === 'input_required' && t.inputRequests !== undefined) {
    let first = true;
    out += ',"inputRequests":{';
    for (const k in t.inputRequests) {
      const v = t.inputRequests[k];
      if (v === undefined) continue;
      out += `${first ? '' : ','}${JSON.stringify(k)}:${v}`;
      first = false;
    }
    out += '}';
  }
  if (t.status === 'completed' && t.result !== undefined) out += `,"result":${t.result}`;
  return `${out}}`;
}

/**
 * The flat CreateTaskResult (`resultType: "task"`, no nested `task`, no result/error/inputRequests)
 * as JSON text, written directly (held to `JSON.stringify` of the object by a property test).
 */
export function createTaskResultJson(t: TaskRecord): string {
  return `{"resultType":"task",${taskFieldsJson(t)}}`;
}

/** The `Task` fields both shapes share, as JSON members (SEP-2663: integer milliseconds, ISO-8601 times). */
function taskFieldsJson(t: TaskRecord): string {
  // A failed task says why in statusMessage (SEP-2663 "Task Execution Errors": SHOULD include one
  // with diagnostic information about the failure): its error's message, not the last progress.
  const text = t.status === 'failed' && t.error !== undefined ? t.error.message : t.statusMessage;
  const message = text === undefined ? '' : `,"statusMessage":${JSON.stringify(text)}`;
  return `"taskId":${JSON.stringify(t.taskId)},"status":${JSON.stringify(t.status)},"createdAt":"${iso(t.createdAt)}","lastUpdatedAt":"${iso(t.lastUpdatedAt)}","ttlMs":${JSON.stringify(t.ttlMs)},"pollIntervalMs":${JSON.stringify(t.pollIntervalMs)}${message}`;
}
