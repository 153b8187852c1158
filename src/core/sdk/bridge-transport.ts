/**
 * The SDK `Transport` a session's McpServer is connected to. Outbound messages from the SDK go to
 * the session's router; inbound ones are dispatched by the session (see dispatcher.ts). One per
 * session, so the SDK's per-transport state (request handlers, abort controllers) is per session.
 * Every response the served server gives passes here, so the operations observed for its requests
 * (observe/operations.ts: spans, the operation-duration metric) end here.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { JsonRpcMessage, RequestId } from '../../jsonrpc/message.js';
import type { ProgressEvent } from '../../jsonrpc/progress-json.js';
import type { CancelCause, Operation } from '../observe/operation.js';
import type { OperationHost } from '../observe/request-scope.js';
import { closeQuietly } from './quiet-close.js';

export interface BridgeTarget {
  route(message: JsonRpcMessage, relatedRequestId: RequestId | undefined): Promise<void> | undefined;
  /**
   * A `notifications/progress` related to request `related`, already serialized (`json`, with its
   * coalescing `key`): what `route` does with that message, without the message object
   * (fast-notify.ts). `parts`, when given, is that text as layout and values (its `json` is
   * `json`): a replay store may keep those instead of the frame. Optional: a target without it gets
   * the message through `route`.
   */
  routeProgress?(
    related: RequestId,
    json: string,
    key: string | undefined,
    parts?: ProgressEvent,
  ): Promise<void> | undefined;
  /** The SDK closed its side (server.close()) of `from`. */
  closedBySdk(from: BridgeTransport): void;
}

/**
 * What a closed transport routes to: nothing. The SDK's `connect` stores its handlers on the
 * transport as function literals assigned to properties (`transport.onmessage = (m) => …`), and V8
 * allocates such a function in the old generation at once (its parser marks a function literal on the
 * right of a property assignment for pretenuring). Dead, it still keeps its context alive through
 * every scavenge until the next full collection, and that context holds this transport: whatever the
 * transport still reaches (the request's whole graph, through its target) was promoted with it on every
 * 2026-07-28 call on Node 22 and 24 (docs/benchmarks.md, "Function literals assigned to properties").
 */
const DETACHED: BridgeTarget = {
  route: () => undefined,
  closedBySdk: () => {},
};

/** Returned by every send that need not wait: one shared settled promise, no allocation per event. */
const SENT: Promise<void> = Promise.resolve();

export class BridgeTransport implements Transport, OperationHost {
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  sessionId?: string | undefined;
  /** Detached (DETACHED) once closed: see close(). */
  #target: BridgeTarget;
  #closed = false;
  /** Requests being observed, by the id they have on this transport; made on first use. */
  #ops: Map<RequestId, Operation> | undefined;
  #onclose: (() => void) | undefined;
  /** How often `onclose` was set: once, by the Protocol's `connect`, unless someone else wraps it. */
  #oncloseSets = 0;
  /** The SDK Protocol connected here whose close may skip stack traces (quiet-close.ts), if any. */
  #quiet: object | undefined;

  constructor(target: BridgeTarget, sessionId: string | undefined) {
    this.#target = target;
    this.sessionId = sessionId;
  }

  get onclose(): (() => void) | undefined {
    return this.#onclose;
  }
  set onclose(f: (() => void) | undefined) {
    this.#onclose = f;
    this.#oncloseSets++;
  }

  /**
   * The SDK Protocol just connected to this transport, whose internals the fast dispatch uses: its
   * close runs without stack traces nobody can observe, when that is sound (quiet-close.ts).
   */
  closesQuietly(protocol: object): void {
    this.#quiet = protocol;
  }

  async start(): Promise<void> {}

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#closed) return SENT;
    if (this.#ops !== undefined && !('method' in message)) this.#answered(message as JsonRpcMessage);
    const wait = this.#target.route(message as JsonRpcMessage, options?.relatedRequestId);
    return wait ?? SENT;
  }

  /**
   * A serialized `notifications/progress` related to request `related` (see BridgeTarget
   * `routeProgress`); false when the target takes messages only through `route` (send it then).
   */
  sendProgress(
    json: string,
    key: string | undefined,
    related: RequestId,
    parts?: ProgressEvent,
  ): Promise<void> | false {
    if (this.#closed) return SENT;
    const t = this.#target;
    if (t.routeProgress === undefined) return false;
    return t.routeProgress(related, json, key, parts) ?? SENT;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const ops = this.#ops;
    this.#ops = undefined;
    if (ops !== undefined) for (const op of ops.values()) op.cancelled(op.closeCause(), undefined);
    this.#target.closedBySdk(this);
    // Nothing reaches the target from a closed transport any more (DETACHED says why).
    this.#target = DETACHED;
    const onclose = this.#onclose;
    if (onclose === undefined) return;
    // Only when nothing but the Protocol's connect set onclose: then all that runs up to the
    // application's own onclose is the Protocol's teardown.
    const quiet = this.#quiet;
    if (quiet !== undefined && this.#oncloseSets === 1) closeQuietly(quiet, onclose);
    else onclose();
  }

  // ---- OperationHost -----------------------------------------------------------------------------

  /** A request dispatched to the served server is observed until its response passes `send`. */
  track(id: RequestId, op: Operation): void {
    this.#ops ??= new Map();
    this.#ops.get(id)?.cancelled('server', 'dispatched again under the same id');
    this.#ops.set(id, op);
  }

  /**
   * Drops the table of observed requests while it is empty, so an idle session keeps no empty Map
   * (about 200 bytes). Called by the session's compact() (after initialize, and by the idle sweep),
   * not per response: a session answering one request at a time keeps its table.
   */
  compact(): void {
    if (this.#ops?.size === 0) this.#ops = undefined;
  }

  /** Whether requests are being observed now (tests of compact()). */
  get observing(): boolean {
    return this.#ops !== undefined;
  }

  /** The operation of a request in flight, if observed (for stream events). */
  operation(id: RequestId): Operation | undefined {
    return this.#ops?.get(id);
  }

  /** The request was cancelled (no response will pass here). */
  cancelled(id: RequestId, cause: CancelCause | undefined, reason: string | undefined): void {
    const op = this.#ops?.get(id);
    if (op === undefined) return;
    this.#ops?.delete(id);
    op.cancelled(cause ?? op.cancelCause(), reason);
  }

  #answered(message: JsonRpcMessage): void {
    const id = (message as { id?: unknown }).id;
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const op = this.#ops?.get(id);
    if (op === undefined) return;
    this.#ops?.delete(id);
    op.answered(message as { result?: unknown; error?: unknown });
  }
}
