/**
 * An SDK v1 Protocol's `_onrequest`, without its generic layers, for requests outside tasks.
 *
 * Per request, the SDK's `_onrequest` (shared/protocol.js) makes an AbortController and reads its
 * signal to put it in `extra`, and Node then builds an AbortSignal: of a session echo's 80–87 µs of
 * server CPU, about 15 went to that signal, most of it in the collector, though few handlers ever
 * read it (docs/benchmarks.md, "The SDK's request path, run by Sluice"). For a request that is not
 * part of a task, this runs the same steps in the same order, with differences a handler would have
 * to go looking for:
 * - the AbortController is made when the handler first reads `extra.signal` (most never do); until
 *   then the Protocol's table of requests in flight holds an `InFlight`, which its cancel and close
 *   paths call as they would the controller (`abort(reason)`), and which aborts the controller with
 *   the same reason once one is made;
 * - `extra.sendNotification` goes straight to the request's stream (fast-notify.ts), as the fast
 *   dispatch already did for every request;
 * - the handler starts one microtask sooner (the SDK's first step only checks task parameters);
 * - `extra` has the same own enumerable fields, but is a `RequestExtra` (its constructor's name, and
 *   `signal` listed last).
 * Everything else is the SDK's: `sendRequest` is refused with ConnectionClosed once the request is
 * cancelled, else `Protocol.request` with `relatedRequestId`; the response is `{ result, jsonrpc, id }`
 * or the SDK's error response, sent through the transport the Protocol had when the request came,
 * nothing once cancelled; a failed send goes to `onerror`; the table entry is removed if it is still
 * this request's. A server's task store is given to each request as the SDK gives it (its
 * request-scoped view, which `sendRequest` uses as the SDK's does). A request with `params.task` or a
 * related-task `_meta`, or a method without a handler (the SDK answers "Method not found" or calls its fallback) takes the
 * SDK's own `_onrequest`.
 *
 * Exactness is guarded per SDK version: this runs only when the Protocol's `_onrequest` is one this
 * file was checked against (its source text by fingerprint, KNOWN); any other SDK version, or a
 * subclass or instance that overrides `_onrequest`, takes the SDK's. Adding a version means reading
 * its `_onrequest` against this file, then adding its fingerprint; test/unit/fast-request.test.ts
 * fails when the installed SDK's is not known, so an upgrade here cannot drop the path unnoticed.
 */
import { ErrorCode, McpError, type MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { errorResponse, type JsonRpcRequest, type RequestId } from '../../jsonrpc/message.js';
import { META_RELATED_TASK } from '../../jsonrpc/meta-keys.js';
import { shortHash } from '../observe/probe.js';
import type { BridgeTransport } from './bridge-transport.js';
import { handlerOf, type Notify, notifier, type V1Protocol } from './fast-notify.js';

/**
 * Fingerprints (`shortHash`: FNV-1a, 32 bits, of `_onrequest.toString()`) of the SDK versions read
 * against this file: @modelcontextprotocol/sdk 1.32.0 and 1.32.2 (the same text), ESM and CommonJS.
 */
const KNOWN: ReadonlySet<string> = new Set(['79a7bc17', 'dae1a5d8']);

/** The Protocol internals the SDK's `_onrequest` uses and this does too. */
interface RequestProtocol extends V1Protocol {
  _onrequest: (...args: unknown[]) => unknown;
  _requestHandlerAbortControllers: Map<unknown, { abort(reason?: unknown): void }>;
  _taskStore?: unknown;
  requestTaskStore?(request: unknown, sessionId: string | undefined): RequestTaskStore;
  _onerror(error: Error): void;
  notification(n: unknown, options?: unknown): Promise<void>;
  request(r: unknown, schema: unknown, options?: unknown): Promise<unknown>;
}

/** Per `_onrequest` function: whether it is a known one (each is read once). */
const checked = new WeakMap<object, boolean>();

/** Whether `fn` is an `_onrequest` this file was checked against. */
export function knownOnrequest(fn: unknown): boolean {
  if (typeof fn !== 'function') return false;
  let known = checked.get(fn);
  if (known === undefined) {
    known = KNOWN.has(shortHash(Function.prototype.toString.call(fn)));
    checked.set(fn, known);
  }
  return known;
}

/**
 * One request in flight, in the Protocol's table where the SDK keeps its AbortController. The
 * controller is made when the handler reads `extra.signal`; an abort before that is kept and
 * applied to it, with the same reason.
 */
class InFlight {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get aborted(): boolean {
    return this.#aborted;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** As AbortController's: the first call counts. */
  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/** What `sendRequest` uses of the SDK's request-scoped task store. */
interface RequestTaskStore {
  updateTaskStatus(taskId: unknown, status: 'input_required'): Promise<void>;
}

type SendRequest = (r: unknown, schema: unknown, options?: object) => Promise<unknown>;

/**
 * A request's `extra`: the SDK's fields (`taskId` and `taskRequestedTtl` undefined: no task request
 * comes here). `signal` is an own enumerable accessor (so a spread of `extra` copies it, as it copies
 * the SDK's) whose getter is one function shared by all (an accessor made per request, as an object
 * literal's `get` would, gives each object a map of its own: measured 15 µs a request more, most of
 * it in the collector).
 */
class RequestExtra {
  static readonly #signal: PropertyDescriptor = {
    get(this: RequestExtra): AbortSignal {
      return this.#flight.signal;
    },
    enumerable: true,
    configurable: true,
  };
  readonly #flight: InFlight;
  declare readonly signal: AbortSignal;
  readonly sessionId: string | undefined;
  readonly _meta: unknown;
  readonly sendNotification: Notify;
  readonly sendRequest: SendRequest;
  readonly authInfo: MessageExtraInfo['authInfo'];
  readonly requestId: RequestId;
  readonly requestInfo: MessageExtraInfo['requestInfo'];
  readonly taskId: undefined;
  readonly taskStore: RequestTaskStore | undefined;
  readonly taskRequestedTtl: undefined;
  readonly closeSSEStream: MessageExtraInfo['closeSSEStream'];
  readonly closeStandaloneSSEStream: MessageExtraInfo['closeStandaloneSSEStream'];

  constructor(
    flight: InFlight,
    id: RequestId,
    meta: unknown,
    transport: BridgeTransport | undefined,
    info: MessageExtraInfo,
    notify: Notify,
    request: SendRequest,
    taskStore: RequestTaskStore | undefined,
  ) {
    this.#flight = flight;
    Object.defineProperty(this, 'signal', RequestExtra.#signal);
    this.sessionId = transport?.sessionId;
    this._meta = meta;
    this.sendNotification = notify;
    this.sendRequest = request;
    this.authInfo = info.authInfo;
    this.requestId = id;
    this.requestInfo = info.requestInfo;
    this.taskStore = taskStore;
    this.closeSSEStream = info.closeSSEStream;
    this.closeStandaloneSSEStream = info.closeStandaloneSSEStream;
  }
}

/**
 * The SDK's error response for a handler's rejection (`_onrequest`'s, field for field: a code that
 * is not a safe integer becomes InternalError, no message "Internal error", `data` only if defined).
 */
function sdkErrorResponse(id: RequestId, error: unknown): unknown {
  const e = error as Record<string, unknown>;
  const code = e['code'];
  return errorResponse(
    id,
    Number.isSafeInteger(code) ? (code as number) : ErrorCode.InternalError,
    (e['message'] ?? 'Internal error') as string,
    e['data'],
  );
}

/** Runs the requests of one server connected to one transport (see the module note). */
export class FastRequests {
  readonly #p: RequestProtocol;
  readonly #t: BridgeTransport;

  private constructor(p: RequestProtocol, t: BridgeTransport) {
    this.#p = p;
    this.#t = t;
  }

  /**
   * For a server's v1 Protocol `v1` (fast-notify.ts `fastNotifyOn`) connected to `t`, or undefined
   * when there is none or its shape or SDK version is not a known one.
   */
  static of(v1: V1Protocol | undefined, t: BridgeTransport): FastRequests | undefined {
    const p = v1 as RequestProtocol | undefined;
    if (
      p === undefined ||
      !knownOnrequest(p._onrequest) ||
      (p._taskStore !== undefined && typeof p.requestTaskStore !== 'function') ||
      !(p._requestHandlerAbortControllers instanceof Map) ||
      typeof p._onerror !== 'function' ||
      typeof p.request !== 'function'
    )
      return undefined;
    return new FastRequests(p, t);
  }

  /** Runs `m` as the SDK's `_onrequest` would; false when it is the SDK's to run (nothing done). */
  run(m: JsonRpcRequest, info: MessageExtraInfo): boolean {
    const p = this.#p;
    const params = m.params;
    const meta = params?.['_meta'] as Record<string, { taskId?: unknown } | undefined> | undefined;
    if (params?.['task'] !== undefined || meta?.[META_RELATED_TASK]?.taskId !== undefined) return false;
    const handler = handlerOf(p, m.method);
    if (handler === undefined) return false;
    const id = m.id;
    const captured = p._transport as BridgeTransport | undefined;
    const flight = new InFlight();
    const table = p._requestHandlerAbortControllers;
    table.set(id, flight);
    const notify = notifier(p, this.#t, id, flight, async (notification) => {
      if (flight.aborted) return;
      await p.notification(notification, { relatedRequestId: id });
    });
    // The request's view of the server's task store, as the SDK gives every request when there is one.
    const taskStore = p._taskStore === undefined ? undefined : p.requestTaskStore?.(m, captured?.sessionId);
    const request: SendRequest = async (r, schema, options) => {
      if (flight.aborted) throw new McpError(ErrorCode.ConnectionClosed, 'Request was cancelled');
      const sent = { ...options, relatedRequestId: id };
      // As the SDK: a request sent on a task's behalf (`relatedTask`) marks that task input_required.
      const taskId = (sent as { relatedTask?: { taskId?: unknown } }).relatedTask?.taskId;
      if (taskId && taskStore) await taskStore.updateTaskStatus(taskId, 'input_required');
      return await p.request(r, schema, sent);
    };
    const extra = new RequestExtra(flight, id, meta, captured, info, notify, request, taskStore);
    const done = (): void => {
      if (table.get(id) === flight) table.delete(id);
    };
    Promise.resolve()
      .then(() => handler(m, extra))
      .then(
        (result) => (flight.aborted ? undefined : captured?.send({ result, jsonrpc: '2.0', id } as never)),
        (error: unknown) =>
          flight.aborted ? undefined : captured?.send(sdkErrorResponse(id, error) as never),
      )
      .then(done, (error: unknown) => {
        try {
          p._onerror(new Error(`Failed to send response: ${error}`));
        } finally {
          done();
        }
      });
    return true;
  }
}
