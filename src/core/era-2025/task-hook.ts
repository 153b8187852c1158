/**
 * The seam between the 2025-11-25 era's sessions and a task service (src/tasks/, the experimental
 * tasks of 2025-11-25 basic/utilities/tasks, SEP-1686), as core/era-2026/task-hook.ts is for the
 * 2026 era. The core knows nothing of tasks: when a session starts, the hook sees its server and
 * says whether it serves that session's tasks (not when the server manages tasks itself, e.g. an
 * SDK v1 server constructed with a `taskStore`); then each single request of such a session that
 * passed the session's checks is offered to it, and it takes it (answering it, now or later) or
 * leaves it to the session. A task's tool runs through `serve`: the session's own server,
 * answering into a sink of the hook's own.
 */
import type { Acceptance } from '../../http/media-type.js';
import type { JsonRpcRequest, RequestId } from '../../jsonrpc/message.js';
import { ClientLimits } from '../limits/client-limits.js';
import { sendRefusal } from '../pipeline/refusal.js';
import type { PostInput } from '../pipeline/route.js';
import type { Headers, ResponseSink } from '../pipeline/sink.js';
import type { ExchangeHooks, RelatedAsks } from './exchange.js';
import type { Session } from './session.js';
import { wakeRefusal } from './wake.js';

export type { RelatedAsks };

export interface LegacyTaskOffer {
  readonly req: JsonRpcRequest;
  readonly sessionId: string;
  /** The authenticated principal, if any (a task is bound to it, else to the session). */
  readonly principal: string | undefined;
  /** The client as the per-client limits count it: the principal, else the peer's address. */
  readonly clientKey: string;
  readonly sink: ResponseSink;
  /** The headers every answer carries (CORS). */
  readonly headers: Headers;
  /**
   * Serves `req` on the session's server as a request of the client's, answering into `sink`
   * instead of the client's response (JSON or SSE). Closing `sink` cancels the handler. `asks`
   * follows the handler's requests to the client (they go to the client's GET stream).
   */
  serve(req: JsonRpcRequest, sink: ResponseSink, asks?: RelatedAsks): void;
}

export interface LegacyTaskHook {
  /** Whether it serves this server's tasks; if so it declares the `tasks` capability on it. */
  prepareLegacy(server: unknown): boolean;
  /** Whether it wants to look at a request of this method at all (cheap, synchronous). */
  wantsLegacy(method: string): boolean;
  /** Takes the request (true: it was or will be answered by the hook) or leaves it (false). */
  offerLegacy(offer: LegacyTaskOffer): Promise<boolean>;
}

/** What a hook's own sink takes: JSON or SSE (the run's answer is never the client's). */
const SINK_ACCEPTS: Acceptance = { json: true, sse: true };

/** The sessions whose tasks the hook serves (their server does not manage tasks itself). */
const served = new WeakSet<Session>();

function legacyHook(tasks: unknown): LegacyTaskHook | undefined {
  const h = tasks as Partial<LegacyTaskHook> | undefined;
  return typeof h?.prepareLegacy === 'function' && typeof h.offerLegacy === 'function'
    ? (h as LegacyTaskHook)
    : undefined;
}

/** At a session's start, before its server is connected. */
export function prepareLegacyTasks(tasks: unknown, session: Session, server: unknown): void {
  if (legacyHook(tasks)?.prepareLegacy(server) === true) served.add(session);
}

/** Whether the hook serves this session's tasks and wants a request of this method (cheap). */
export function wantsLegacyTask(tasks: unknown, session: Session, method: string): boolean {
  return served.has(session) && legacyHook(tasks)?.wantsLegacy(method) === true;
}

/** How post.ts answers requests of a session: an exchange on `input.sink`. */
export type RunExchange<R> = (
  reg: R,
  session: Session,
  input: PostInput,
  items: { kind: 'request'; m: JsonRpcRequest }[],
  requests: Map<RequestId, string>,
  batch: boolean,
  hooks?: Pick<ExchangeHooks, 'asks'>,
) => void;

/** Offers a single request of a session to the hook; true when the hook took it. */
export async function offerLegacyTask<R>(
  tasks: unknown,
  reg: R,
  session: Session,
  input: PostInput,
  req: JsonRpcRequest,
  run: RunExchange<R>,
): Promise<boolean> {
  const hook = legacyHook(tasks);
  if (hook === undefined) return false;
  return hook.offerLegacy({
    req,
    sessionId: session.sessionKey,
    principal: session.principal,
    clientKey: ClientLimits.key(input.auth?.principal, input.remote),
    sink: input.sink,
    headers: input.headers,
    // Detached from the client's response and its credential's stream guard: the task outlives it.
    // The run answers the hook's sink, not the client, so the client's Accept does not apply: a
    // JSON-only client's task still streams its progress to the sink (the task's statusMessage).
    serve: (m, sink, asks) => {
      const go = (): void => {
        run(
          reg,
          session,
          { ...input, sink, guard: undefined, accept: SINK_ACCEPTS },
          [{ kind: 'request', m }],
          new Map([[m.id, m.method]]),
          false,
          { asks },
        );
        // A 2025 request outlives its response (a client may resume it), so a sink closed before the
        // answer (the task was cancelled) cancels the handler as the client would (2025-11-25
        // basic/utilities/cancellation): its AbortSignal fires.
        sink.onClose(() => {
          if (!session.inflight.has(m.id) || session.ended) return;
          const params = { requestId: m.id, reason: 'the task was cancelled' };
          session.dispatchNotification({ jsonrpc: '2.0', method: 'notifications/cancelled', params });
        });
      };
      // A task's later round may find its session hibernated (wake.ts): its server is rebuilt first.
      const waking = session.wake();
      if (waking === undefined) return go();
      void waking.then((outcome) =>
        outcome === 'woke' ? go() : sendRefusal(sink, wakeRefusal(outcome), {}, m.id),
      );
    },
  });
}
