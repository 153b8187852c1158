/**
 * A call of an `optional` tool from a client that declared the extension, with `taskAfterMs` > 0:
 * the tool starts at once as the task's run, held (nothing stored); the call becomes a task only
 * if it is still running when `taskAfterMs` is up, or asks for input before that. A call that ends
 * sooner with a result or an error is answered with it, as a plain call would be, and its task is
 * never stored. SEP-2663 "Task Creation": the server decides per request whether to materialize a
 * task; the conformance suite's `tasks-immediate-result-shortcut` accepts either path. Without
 * this a polling client waits `pollIntervalMs` (1 s) for a call that took milliseconds.
 *
 * While held the call is a plain one: the client closing its request cancels it (2026-07-28
 * "Cancellation"), nothing of it is kept, and what it sends the client (progress for its
 * `progressToken`, partial output, log messages) goes on an SSE answer whose last event is the
 * call's answer (held-stream.ts). A task the store refuses when the time is up (the client's
 * `maxLivePerClient`, a full or unreachable store) goes on as a plain call, answered when it ends,
 * rather than being stopped half-way with a 429 or 503.
 */
import type { TaskOffer } from '../core/era-2026/task-hook.js';
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { isPlainObject } from '../jsonrpc/message.js';
import { type Answer, okJson, rpcError } from './answers.js';
import type { Captured } from './capture-sink.js';
import { HeldStream } from './held-stream.js';
import { createTaskResultJson, type TaskRecord } from './model.js';
import type { ResolvedTaskOptions } from './options.js';
import { settlementOf, type TaskRun } from './run.js';

/** What the task service lends a held call. */
export interface TaskAfterHost {
  options(): ResolvedTaskOptions;
  newRun(t: TaskRecord): TaskRun;
  /** Stores the task: undefined once it is durable, else the answer its refusal gets. */
  store(o: TaskOffer, t: TaskRecord): Promise<Answer | undefined>;
  /** A stored task's run, renewed from now until it is over. */
  track(t: TaskRecord, run: TaskRun, running: Promise<void>): void;
  send(o: TaskOffer, a: Answer): void;
  /** A call answered as a plain one: within the time, or refused a task then. */
  count(outcome: 'answeredDirectly' | 'keptPlain'): void;
}

type First = { kind: 'answered'; c: Captured } | { kind: 'time' } | { kind: 'closed' };

export async function callThenTask(host: TaskAfterHost, o: TaskOffer, t: TaskRecord): Promise<void> {
  const opts = host.options();
  const run = host.newRun(t);
  run.hold();
  // While held, what the client asked for reaches it as a plain call's would (held-stream.ts).
  const stream = new HeldStream(o, clientProgressToken(o));
  run.relay(stream);
  /**
   * The answer, as the opened stream's last event or in one body. The relay stops here, where the
   * tool may go on as a task; a closed client needs no stop (the stream writes nothing then).
   */
  const answer = (a: Answer): void => {
    run.relay(undefined);
    if (stream.open) stream.finish(a);
    else host.send(o, a);
  };
  const running = run.run(t, o.serve, undefined, o.req.params).catch((error: unknown) => {
    opts.logger?.error('tasks.settle_failed', { taskId: t.taskId, error: String(error) });
  });
  const closed = new Promise<First>((resolve) => o.sink.onClose(() => resolve({ kind: 'closed' })));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const time = new Promise<First>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'time' }), opts.taskAfterMs);
  });
  const first = await Promise.race([run.outcome.then((c): First => ({ kind: 'answered', c })), time, closed]);
  clearTimeout(timer);
  if (first.kind === 'closed') {
    // The client gave up on a plain call: the tool's AbortSignal fires, and nothing was stored.
    run.release(false);
    run.abort();
    return;
  }
  if (first.kind === 'answered' && !asksForInput(first.c)) {
    run.release(false);
    host.count('answeredDirectly');
    answer(plainAnswer(o, first.c, run.status, opts.maxResultBytes));
    return;
  }
  // The record was built when the call arrived; its lease starts now, when it is stored and renewed
  // (taskAfterMs may exceed leaseMs: a lease counted from the call's arrival would have lapsed, and
  // the new task read `failed` owner-lost at its first tasks/get, store.ts).
  const now = opts.now();
  t.leaseUntil = now + opts.leaseMs;
  t.lastUpdatedAt = now;
  const refused = await host.store(o, t);
  if (refused === undefined) {
    // Durable now (SEP-2663: a tasks/get right after this answer resolves); the held outcome, if
    // the tool already asked for input, is settled into the store from here on.
    run.release(true);
    host.track(t, run, running);
    answer(okJson(o, createTaskResultJson(t)));
    return;
  }
  opts.logger?.info('tasks.kept_plain', { status: refused.status });
  host.count('keptPlain');
  run.release(false);
  // It may run for long now, as a plain call: kept alive through proxies' idle timeouts.
  stream.keepAlive();
  const last = await Promise.race([run.outcome.then((c): First => ({ kind: 'answered', c })), closed]);
  if (last.kind === 'answered') answer(plainAnswer(o, last.c, run.status, opts.maxResultBytes));
  else run.abort();
}

/** The client's own progress token, if its call carried one (`params._meta.progressToken`). */
function clientProgressToken(o: TaskOffer): unknown {
  const meta = o.req.params?.['_meta'];
  return isPlainObject(meta) ? meta['progressToken'] : undefined;
}

/** An MRTR round's `input_required`: a task's `inputRequests`, so the call becomes a task. */
function asksForInput(c: Captured): boolean {
  if (c.kind !== 'response') return false;
  const result = c.message['result'];
  return (
    typeof result === 'object' &&
    result !== null &&
    (result as { resultType?: unknown }).resultType === 'input_required'
  );
}

/**
 * The captured answer as the client's own, under its request id. An answer that could not be kept
 * (too large, unreadable, none) is the error its task would have failed with (run.ts settlementOf).
 */
export function plainAnswer(o: TaskOffer, c: Captured, status: number, maxResultBytes: number): Answer {
  if (c.kind === 'result')
    return { status, body: `{"jsonrpc":"2.0","id":${JSON.stringify(o.req.id)},"result":${c.text}}` };
  if (c.kind === 'response') return { status, body: { ...c.message, id: o.req.id } };
  const s = settlementOf(c, maxResultBytes);
  const e =
    s?.status === 'failed'
      ? s.error
      : { code: JsonRpcCode.InternalError, message: 'Internal error: the call ended without an answer' };
  return rpcError(o, 500, e.code, e.message, e.data);
}
