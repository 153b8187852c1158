/**
 * Hands inbound messages to the SDK. The SDK's `Protocol.connect` wraps `transport.onmessage` in a
 * function that first runs `isJSONRPCResultResponse || isJSONRPCErrorResponse` — zod safeParse
 * guards that fail, building a ZodError each, for every request and notification (about 27 % of the
 * official transport's CPU per echo: docs/benchmarks.md "Baseline"). Sluice has already classified the
 * message, so when the Protocol's own per-kind handlers are present it calls them directly.
 * If a future SDK renames them, this falls back to `onmessage`, which is always correct.
 */
import type { MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../jsonrpc/message.js';
import type { CancelCause } from '../observe/operation.js';
import { scopeOf } from '../observe/request-scope.js';
import type { BridgeTransport } from './bridge-transport.js';
import { fastNotifyOn } from './fast-notify.js';
import { FastRequests } from './fast-request.js';

export interface Dispatcher {
  request(m: JsonRpcRequest, extra: MessageExtraInfo): void;
  /**
   * `cause` names who cancels, when a `notifications/cancelled` is handed over (observe/operation.ts);
   * without it, Sluice's own reasons are told apart by what the endpoint knows (closing, client gone).
   */
  notification(m: JsonRpcNotification, cause?: CancelCause): void;
  response(m: JsonRpcResponse): void;
  /** Whether the SDK's per-kind handlers are called directly (false: through `onmessage`). */
  readonly fast: boolean;
}

interface ProtocolInternals {
  _onrequest(m: unknown, extra?: unknown): void;
  _onnotification(m: unknown): void;
  _onresponse(m: unknown): void;
}

function internalsOf(server: unknown): ProtocolInternals | undefined {
  // McpServer wraps the low-level Server (which extends Protocol) as `.server`.
  const inner = (server as { server?: unknown }).server ?? server;
  const p = inner as Partial<Record<keyof ProtocolInternals, unknown>>;
  if (
    typeof p._onrequest === 'function' &&
    typeof p._onnotification === 'function' &&
    typeof p._onresponse === 'function'
  ) {
    return inner as ProtocolInternals;
  }
  return undefined;
}

/**
 * Calls the Protocol's per-kind handlers, and runs requests itself where fast-request.ts can. A
 * class, not closures: one small object per session.
 */
class FastDispatcher implements Dispatcher {
  readonly #p: ProtocolInternals;
  readonly #t: BridgeTransport;
  readonly #requests: FastRequests | undefined;
  constructor(p: ProtocolInternals, t: BridgeTransport, requests: FastRequests | undefined) {
    this.#p = p;
    this.#t = t;
    this.#requests = requests;
  }
  get fast(): boolean {
    return true;
  }
  request(m: JsonRpcRequest, extra: MessageExtraInfo): void {
    const scope = scopeOf(extra);
    if (scope === undefined) this.#request(m, extra);
    else scope.ops.dispatch(scope, m, this.#t, () => this.#request(m, extra));
  }
  #request(m: JsonRpcRequest, extra: MessageExtraInfo): void {
    if (this.#requests?.run(m, extra) !== true) this.#p._onrequest(m, extra);
  }
  notification(m: JsonRpcNotification, cause?: CancelCause): void {
    observeCancel(this.#t, m, cause);
    this.#p._onnotification(m);
  }
  response(m: JsonRpcResponse): void {
    this.#p._onresponse(m);
  }
}

/** Hands every message to `transport.onmessage`, as the SDK's own transports do. */
class MessageDispatcher implements Dispatcher {
  readonly #t: BridgeTransport;
  constructor(t: BridgeTransport) {
    this.#t = t;
  }
  get fast(): boolean {
    return false;
  }
  request(m: JsonRpcRequest, extra: MessageExtraInfo): void {
    const scope = scopeOf(extra);
    if (scope === undefined) this.#t.onmessage?.(m as never, extra);
    else scope.ops.dispatch(scope, m, this.#t, () => this.#t.onmessage?.(m as never, extra));
  }
  notification(m: JsonRpcNotification, cause?: CancelCause): void {
    observeCancel(this.#t, m, cause);
    this.#t.onmessage?.(m as never);
  }
  response(m: JsonRpcResponse): void {
    this.#t.onmessage?.(m as never);
  }
}

/**
 * The dispatcher for a server just connected to `transport`. With the fast dispatch, an SDK v1
 * server's handlers also get the direct `extra.sendNotification` (fast-notify.ts), a known SDK
 * version's requests outside tasks skip its generic request layers (fast-request.ts), and the
 * server's close skips the stack trace of an error nobody can observe (quiet-close.ts).
 */
export function createDispatcher(server: unknown, transport: BridgeTransport, fast: boolean): Dispatcher {
  const p = fast ? internalsOf(server) : undefined;
  if (p === undefined) return new MessageDispatcher(transport);
  const v1 = fastNotifyOn(server, transport);
  const requests = FastRequests.of(v1, transport);
  transport.closesQuietly(p);
  return new FastDispatcher(p, transport, requests);
}

/** A cancellation ends the request's observed operation (no response will come). */
function observeCancel(t: BridgeTransport, m: JsonRpcNotification, cause: CancelCause | undefined): void {
  if (m.method !== 'notifications/cancelled') return;
  const id = m.params?.['requestId'];
  const reason = m.params?.['reason'];
  if (typeof id === 'string' || typeof id === 'number')
    t.cancelled(id, cause, typeof reason === 'string' ? reason : undefined);
}
