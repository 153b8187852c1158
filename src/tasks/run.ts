/**
 * One round of a task's tool on this instance: the tool runs as a plain request of the 2026-07-28
 * era answering into a CaptureSink, while this instance renews its lease; the outcome is settled
 * into the store (completed, failed, or input_required for an MRTR round). A cancel (from any
 * instance, through the store's onCancel) or a renewal the store refuses aborts the run, which
 * fires the tool's AbortSignal.
 */
import type { RelatedAsks } from '../core/era-2025/task-hook.js';
import type { RequestHead, ResponseSink } from '../core/pipeline/sink.js';
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { isPlainObject, type JsonRpcRequest } from '../jsonrpc/message.js';
import { randomToken } from '../security/random.js';
import { type Captured, CaptureSink, type HeldRelay } from './capture-sink.js';
import type { LegacyInput } from './legacy-input.js';
import { ownProgressToken, type TaskError, type TaskRecord } from './model.js';
import type { ResolvedTaskOptions } from './options.js';
import type { Settlement, TaskProgress } from './store.js';

/** The settlement a captured answer means (exported for tests). */
export function settlementOf(c: Captured, maxResultBytes: number): Settlement | undefined {
  if (c.kind === 'aborted') return undefined;
  if (c.kind === 'too-large') {
    return { status: 'failed', error: internal(`the task's result exceeds ${maxResultBytes} bytes`) };
  }
  if (c.kind === 'malformed') {
    return { status: 'failed', error: internal(`the tool's answer could not be read (HTTP ${c.status})`) };
  }
  if (c.kind === 'result') {
    if (c.text.length > maxResultBytes) {
      return { status: 'failed', error: internal(`the task's result exceeds ${maxResultBytes} bytes`) };
    }
    return { status: 'completed', result: c.text };
  }
  const m = c.message;
  if (isPlainObject(m['error'])) {
    const e = m['error'];
    const error: TaskError = {
      code: typeof e['code'] === 'number' ? e['code'] : JsonRpcCode.InternalError,
      message: typeof e['message'] === 'string' ? e['message'] : 'Internal error',
      ...(e['data'] === undefined ? {} : { data: e['data'] }),
    };
    return { status: 'failed', error };
  }
  const result = m['result'];
  if (!isPlainObject(result)) return { status: 'failed', error: internal('the tool returned no result') };
  if (result['resultType'] === 'input_required' && isPlainObject(result['inputRequests'])) {
    const inputRequests: Record<string, string> = {};
    for (const [k, v] of Object.entries(result['inputRequests'])) inputRequests[k] = JSON.stringify(v);
    const rs = result['requestState'];
    return { status: 'input_required', inputRequests, requestState: typeof rs === 'string' ? rs : undefined };
  }
  const json = JSON.stringify(result);
  if (json.length > maxResultBytes) {
    return { status: 'failed', error: internal(`the task's result exceeds ${maxResultBytes} bytes`) };
  }
  return { status: 'completed', result: json };
}

/**
 * How a round's request is served: the era's own serve (a 2026 call; a 2025 session's server),
 * answering into the run's sink. `head`: a later 2026 round's request head; `asks`: who follows the
 * tool's requests to the client (2025 sessions, legacy-input.ts).
 */
export type RoundServe = (
  req: JsonRpcRequest,
  sink: ResponseSink,
  head: RequestHead | undefined,
  asks: RelatedAsks | undefined,
) => Promise<void>;

/** The outcome to store, from the captured one (undefined: aborted) and whether abort() ran. */
export type SettlementMap = (s: Settlement | undefined, abortedHere: boolean) => Settlement | undefined;

/** A later round's head: the `Mcp-Param-*` headers of the call that created the task. */
export function paramHead(t: TaskRecord): RequestHead {
  const stored: Record<string, string> = t.paramHeaders === undefined ? {} : JSON.parse(t.paramHeaders);
  return { method: 'POST', header: (name) => (Object.hasOwn(stored, name) ? stored[name] : undefined) };
}

/** The call's `Mcp-Param-*` headers as JSON, or undefined when it has none. */
export function paramHeadersOf(
  raw: Readonly<Record<string, string | string[] | undefined>>,
): string | undefined {
  let out: Record<string, string> | undefined;
  // for...in, not Object.entries: no array per header on every task creation. The names are
  // lower-case already (TaskOffer.rawHeaders, as node:http gives them).
  for (const name in raw) {
    if (!name.startsWith('mcp-param-')) continue;
    const v = raw[name];
    if (v === undefined) continue;
    out ??= {};
    out[name] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out === undefined ? undefined : JSON.stringify(out);
}

function internal(message: string): TaskError {
  return { code: JsonRpcCode.InternalError, message: `Internal error: ${message}` };
}

/** The id of a round's request (the sink knows it, to cut the result out of the answer). */
function runRequestId(taskId: string): string {
  return `sluice-task:${taskId}`;
}

/**
 * The mark of a later round's input request keys: `~r` and 8 random base64url characters, one
 * draw per round. SEP-2663 "tasks/update": a key MUST be unique over the task's lifetime, while an
 * MRTR tool's keys are per round (it may ask `name` again); its first round's keys go out as they
 * are, each later round's with the mark, which is taken off again before the tool reads its
 * answers. A tool's own key ending so would lose the ending (reserved).
 */
const ROUND_MARK = /~r[A-Za-z0-9_-]{8}$/;

/** A later round's input requests under keys no earlier round used. */
export function markRound(s: Settlement): Settlement {
  if (s.status !== 'input_required') return s;
  const mark = `~r${randomToken(6)}`;
  const inputRequests: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.inputRequests)) inputRequests[`${k}${mark}`] = v;
  return { ...s, inputRequests };
}

/** A shallow copy of a call's params without the SEP-1686 `task` hint. */
function withoutTask(call: Readonly<Record<string, unknown>>): Record<string, unknown> {
  // Both forms define own data properties (a `__proto__` key stays a key, as JSON.parse made it).
  return Object.hasOwn(call, 'task')
    ? Object.fromEntries(Object.entries(call).filter(([k]) => k !== 'task'))
    : { ...call };
}

/** The `tools/call` of a round: the stored call, plus the answers and state of an MRTR round. */
export function roundRequest(t: TaskRecord, call?: Readonly<Record<string, unknown>>): JsonRpcRequest {
  // The first round may take the call's own params (what `t.call` holds as text), copied: only
  // top-level keys and `_meta` (replaced, never changed in place) are touched below. The SEP-1686
  // `task` hint is not the tool's business (SEP-2663: tolerated, ignored), so it is left out of the
  // copy: a `delete` would turn the copy into a dictionary-mode object, which every read of it by
  // the SDK (zod's parse of the params) then walks as a hash table.
  const params = withoutTask(call ?? (JSON.parse(t.call) as Record<string, unknown>));
  // A progress token of the task's own when the call has none (model.ts ownProgressToken).
  const meta = isPlainObject(params['_meta']) ? params['_meta'] : {};
  if (meta['progressToken'] === undefined)
    params['_meta'] = { ...meta, progressToken: ownProgressToken(t.taskId) };
  if (t.inputResponses !== undefined && hasAnswers(t)) {
    params['inputResponses'] = Object.fromEntries(
      // Under the tool's own keys (markRound).
      Object.entries(t.inputResponses).map(([k, v]) => [k.replace(ROUND_MARK, ''), JSON.parse(v)]),
    );
    if (t.requestState !== undefined) params['requestState'] = t.requestState;
  }
  return { jsonrpc: '2.0', id: runRequestId(t.taskId), method: 'tools/call', params };
}

function hasAnswers(t: TaskRecord): boolean {
  return t.inputResponses !== undefined && Object.keys(t.inputResponses).length > 0;
}

export class TaskRun {
  readonly taskId: string;
  readonly #o: ResolvedTaskOptions;
  readonly #runner: string;
  readonly #sink: CaptureSink;
  #progress: string | undefined;
  #partial = '';
  #partialTruncated = false;
  #partialDirty = false;
  #progressBusy = false;

  /**
   * How an outcome is stored (the 2025 era fails a task whose tool result has isError, and one
   * whose run ended without an answer it did not abort itself); undefined: nothing is stored.
   */
  readonly #map: SettlementMap;
  /** abort() ran: a cancel or a lease no longer ours, not the run's own end. */
  #abortedHere = false;
  /** A 2025 task's requests to the client, and its input_required status (legacy-input.ts). */
  readonly #input: LegacyInput | undefined;
  /**
   * A run started before its task is stored (`hold`, TaskService's `taskAfterMs`): no store write
   * until `release`; released with false, nothing is ever written (the call was answered as a
   * plain one).
   */
  #gate: 'open' | 'held' | 'never' = 'open';
  #stored: Promise<boolean> = Promise.resolve(true);
  #release: (stored: boolean) => void = () => undefined;

  constructor(
    o: ResolvedTaskOptions,
    runner: string,
    taskId: string,
    map: SettlementMap = (s) => s,
    input?: LegacyInput,
  ) {
    this.#map = map;
    this.#input = input;
    this.#o = o;
    this.#runner = runner;
    this.taskId = taskId;
    this.#sink = new CaptureSink(
      o.maxResultBytes + 64 * 1024,
      (m) => this.#onProgress(m),
      (d) => this.#onPartial(d),
      runRequestId(taskId),
    );
  }

  /** The tool's answer as captured (before anything is stored). */
  get outcome(): Promise<Captured> {
    return this.#sink.done;
  }

  /** The HTTP status of the tool's answer. */
  get status(): number {
    return this.#sink.status;
  }

  /** The run's notifications go to `r` too, until called with undefined (held-stream.ts). */
  relay(r: HeldRelay | undefined): void {
    this.#sink.relay(r);
  }

  /** Store nothing until `release` (call before `run`). */
  hold(): void {
    this.#gate = 'held';
    this.#stored = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  /** The task is stored (true: progress and the outcome go to the store now) or never will be. */
  release(stored: boolean): void {
    if (this.#gate !== 'held') return;
    this.#gate = stored ? 'open' : 'never';
    this.#release(stored);
    if (stored) this.#flush();
  }

  /** Runs the round; resolves once its outcome is settled (or the run was aborted). */
  async run(
    t: TaskRecord,
    serve: RoundServe,
    head?: RequestHead,
    call?: Readonly<Record<string, unknown>>,
  ): Promise<void> {
    // The lease is renewed by the service's one timer (renewals.ts) while this run is listed there.
    serve(roundRequest(t, call), this.#sink, head, this.#input).catch((error: unknown) => {
      this.#o.logger?.error('tasks.run_failed', { taskId: this.taskId, error: String(error) });
      this.#sink.respond(500, {}, '');
    });
    const captured = await this.#sink.done;
    // A task that read input_required is working (and leased here) again before its outcome.
    await this.#input?.finish();
    let s = this.#map(settlementOf(captured, this.#o.maxResultBytes), this.#abortedHere);
    // A round that ran with answers is a later one: its new questions get keys of their own.
    if (s?.status === 'input_required' && hasAnswers(t)) s = markRound(s);
    if (s !== undefined && (await this.#stored)) await this.#settle(s);
  }

  /**
   * Stores the outcome, retrying while the store is unreachable for up to one lease (the lease is
   * still renewed meanwhile): past that the task reads as failed (owner lost) anyway.
   */
  async #settle(s: Settlement): Promise<void> {
    const until = this.#o.now() + this.#o.leaseMs;
    for (;;) {
      try {
        await this.#o.store.settle(this.taskId, this.#runner, s);
        return;
      } catch (error) {
        if (this.#o.now() >= until) throw error;
        await new Promise((r) => setTimeout(r, Math.max(50, Math.floor(this.#o.leaseMs / 10))));
      }
    }
  }

  /** Cancelled (anywhere) or no longer ours: the tool's AbortSignal fires. */
  abort(): void {
    this.#abortedHere = true;
    this.#sink.abort();
  }

  /** Extends this run's lease (renewals.ts); settles, never rejects, once the store answered. */
  renew(): Promise<void> {
    return this.#o.store.renew(this.taskId, this.#runner, this.#o.now() + this.#o.leaseMs).then(
      (ours) => {
        if (!ours) this.abort();
      },
      (error: unknown) => {
        // The store is unreachable: keep running; if the lease lapses meanwhile, the settle is
        // refused and the task reads as failed (owner lost), never as working forever.
        this.#o.logger?.warn('tasks.renew_failed', { taskId: this.taskId, error: String(error) });
      },
    );
  }

  #onProgress(message: string): void {
    this.#progress = message;
    this.#flush();
  }

  /** The first maxPartialBytes characters are kept; past them the text is marked cut. */
  #onPartial(delta: string): void {
    if (this.#partialTruncated) return;
    const room = this.#o.maxPartialBytes - this.#partial.length;
    if (delta.length > room) {
      this.#partial += delta.slice(0, Math.max(0, room));
      this.#partialTruncated = true;
    } else this.#partial += delta;
    this.#partialDirty = true;
    this.#flush();
  }

  /**
   * Progress and partial text are coalesced: at most one store write in flight; it carries the
   * newest message and the whole partial text so far (each write replaces the stored one).
   */
  #flush(): void {
    if (this.#progressBusy || this.#gate !== 'open') return;
    this.#progressBusy = true;
    const next = (): void => {
      const p: TaskProgress = {};
      if (this.#progress !== undefined) p.message = this.#progress;
      if (this.#partialDirty) {
        p.partialText = this.#partial;
        p.partialTruncated = this.#partialTruncated;
      }
      this.#progress = undefined;
      this.#partialDirty = false;
      if ((p.message === undefined && p.partialText === undefined) || this.#sink.closed) {
        this.#progressBusy = false;
        return;
      }
      this.#o.store.progress(this.taskId, this.#runner, p).then(next, () => {
        this.#progressBusy = false;
      });
    };
    next();
  }
}
