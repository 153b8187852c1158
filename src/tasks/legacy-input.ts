/**
 * A 2025-11-25 task's requests to the client, for a task Sluice runs on a 2025 session (legacy.ts):
 * the session routes every request its tool sends in relation to the call (`extra.sendRequest`,
 * `elicitInput`/`createMessage` with the call's `relatedRequestId`) to the client's GET stream, and
 * this follower (core/era-2025 `RelatedAsks`):
 * - adds the related-task `_meta` to each ("The receiver MUST include the
 *   io.modelcontextprotocol/related-task metadata in the request", 2025-11-25
 *   basic/utilities/tasks §"Input Required Status", §"Associating Task-Related Messages");
 * - makes the task read `input_required` while any of them awaits the client's reply, and `working`
 *   again once none does (same section: "SHOULD move the task to the input_required status", "SHOULD
 *   transition out of input_required status"), so a polling client knows the task waits on it;
 * - sends the tool's progress under the client's own token to the client too, with the same
 *   `_meta` (§"Task Progress Notifications": "The progressToken provided in the initial request
 *   remains valid throughout the task lifetime"); it still makes the task's `statusMessage`.
 *
 * The tool is still running here, so the task keeps its runner's lease while it reads
 * input_required (store.ts, Settlement `leaseUntil`): the run renews it as before, and if this
 * instance dies meanwhile the task fails (owner lost) when the lease lapses, as a working one does.
 * The store writes are chained, so the flips land in order and the run's outcome after the last;
 * a request goes to the client only after the write that made the task read input_required (the
 * order SDK v1's own task store gives: a client polling the task on the request sees it waiting).
 */
import type { RelatedAsks } from '../core/era-2025/task-hook.js';
import { isPlainObject, type JsonRpcRequest, type RequestId } from '../jsonrpc/message.js';
import { META_RELATED_TASK } from '../jsonrpc/meta-keys.js';
import { tokenKey } from '../jsonrpc/partial.js';
import { ownProgressToken, type TaskRecord } from './model.js';
import type { ResolvedTaskOptions } from './options.js';

/** `o` with the related-task `_meta` naming `taskId` added to its own `_meta` (a copy; `o` is not changed). */
export function withRelatedTask(
  o: Readonly<Record<string, unknown>>,
  taskId: string,
): Record<string, unknown> {
  const meta = isPlainObject(o['_meta']) ? o['_meta'] : {};
  return { ...o, _meta: { ...meta, [META_RELATED_TASK]: { taskId } } };
}

export class LegacyInput implements RelatedAsks {
  readonly #o: ResolvedTaskOptions;
  readonly #runner: string;
  readonly #taskId: string;
  readonly #owner: string;
  /** The coalescing key of the task's own progress token (the run's progress when the call had none). */
  readonly #ownKey: string;
  /** The tool's requests awaiting the client's reply. */
  readonly #pending = new Set<RequestId>();
  /** The status last asked of the store (input_required: true). */
  #wanted = false;
  /** The status the store was last written to (input_required: true). */
  #stored = false;
  #chain: Promise<void> = Promise.resolve();

  constructor(o: ResolvedTaskOptions, runner: string, t: Pick<TaskRecord, 'taskId' | 'owner'>) {
    this.#o = o;
    this.#runner = runner;
    this.#taskId = t.taskId;
    this.#owner = t.owner;
    this.#ownKey = tokenKey(ownProgressToken(t.taskId));
  }

  /** The request as the client gets it: with the related-task `_meta` (any other `_meta` kept). */
  decorate(m: JsonRpcRequest): JsonRpcRequest {
    return { ...m, params: withRelatedTask(m.params ?? {}, this.#taskId) };
  }

  notification(json: string, key: string | undefined): string | undefined {
    // Cheap tests first, no parse: most related notifications of a task are its own progress (its
    // key, per event of a progress loop), or no progress at all.
    if (key === this.#ownKey || !json.includes('"notifications/progress"')) return undefined;
    let m: unknown;
    try {
      m = JSON.parse(json);
    } catch {
      return undefined;
    }
    if (!isPlainObject(m) || m['method'] !== 'notifications/progress' || !isPlainObject(m['params']))
      return undefined;
    const params = m['params'];
    const token = params['progressToken'];
    if (token === undefined || token === ownProgressToken(this.#taskId)) return undefined;
    return JSON.stringify({ ...m, params: withRelatedTask(params, this.#taskId) });
  }

  /** The writes so far, this request's flip to input_required among them (it never rejects). */
  asking(id: RequestId): Promise<void> {
    this.#pending.add(id);
    this.#sync();
    return this.#chain;
  }

  settled(id: RequestId): void {
    if (this.#pending.delete(id)) this.#sync();
  }

  /** Before the run's outcome is stored: working again (the lease this run's), after every write. */
  async finish(): Promise<void> {
    this.#pending.clear();
    this.#sync();
    await this.#chain;
    // The flip back failed (the store was unreachable): once more, or the outcome cannot be stored.
    if (this.#stored) await this.#toWorking();
  }

  #sync(): void {
    const want = this.#pending.size > 0;
    if (want === this.#wanted) return;
    this.#wanted = want;
    this.#chain = this.#chain
      .then(() => (want ? this.#toInputRequired() : this.#toWorking()))
      .catch((error: unknown) =>
        // The store is unreachable: the status stays as it was (working while the tool waits, or
        // input_required, which finish() tries once more to leave), and the run goes on.
        this.#o.logger?.warn('tasks.input_status_failed', { taskId: this.#taskId, error: String(error) }),
      );
  }

  async #toInputRequired(): Promise<void> {
    // Refused (false) when the task is no longer this run's (cancelled meanwhile): nothing to do.
    const done = await this.#o.store.settle(this.#taskId, this.#runner, {
      status: 'input_required',
      inputRequests: {},
      requestState: undefined,
      leaseUntil: this.#o.now() + this.#o.leaseMs,
    });
    if (done) this.#stored = true;
  }

  async #toWorking(): Promise<void> {
    // No input request is stored, so an empty answer resumes it: working, leased to this run.
    // A task cancelled meanwhile is left as it is.
    await this.#o.store.answer(this.#taskId, this.#owner, {}, this.#runner, this.#o.now() + this.#o.leaseMs);
    this.#stored = false;
  }
}
