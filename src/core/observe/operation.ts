/**
 * One JSON-RPC request served by this endpoint, from its dispatch to the SDK until its response
 * leaves (or it is cancelled): its span, when tracing is on, and its `mcp.server.operation.duration`
 * observation. Attribute names are the OpenTelemetry MCP semantic conventions' (status:
 * development): `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`,
 * `jsonrpc.request.id`, `mcp.session.id`, `mcp.protocol.version`, `rpc.response.status_code`,
 * `error.type`, `network.transport`, `server.address`, `server.port`.
 */

import { STATUS_ERROR } from '../../trace/otel-bridge.js';
import type { Attributes, SpanLike } from '../../trace/otel-like.js';

/** Why a request was cancelled rather than answered (span event `mcp.request.cancelled`). */
export type CancelCause =
  | 'protocol' // the client's notifications/cancelled (2025-11-25 basic/utilities/cancellation)
  | 'orphan-timeout' // its stream was lost and nobody resumed it within orphanTimeoutMs
  | 'client-closed' // 2026-07-28: the client closed the response (that era's cancellation)
  | 'shutdown' // the endpoint was closing
  | 'session-end' // the session ended (DELETE, idle, the server closed itself)
  | 'server'; // Sluice cancelled it for another reason (the served server closed)

/** What an operation reports its end to (the endpoint's Operations). */
export interface OperationSink {
  ended(op: Operation, seconds: number, errorType: string | undefined): void;
  /** Why Sluice itself cancels a request (closing endpoint, client gone, else the server). */
  causeOfCancel(scope: { sinkClosed(): boolean } | undefined): CancelCause;
  /** Why a transport closed with requests open (the shutdown, else the session's end). */
  closeCause(): CancelCause;
}

export class Operation {
  readonly method: string;
  readonly tool: string | undefined;
  readonly version: string | undefined;
  readonly span: SpanLike | undefined;
  readonly #startedAt: number;
  readonly #now: () => number;
  readonly #sink: OperationSink;
  /** The request's scope: whether the client's HTTP response is closed. */
  readonly #scope: { sinkClosed(): boolean } | undefined;
  #done = false;

  constructor(
    sink: OperationSink,
    now: () => number,
    method: string,
    tool: string | undefined,
    version: string | undefined,
    span: SpanLike | undefined,
    scope: { sinkClosed(): boolean } | undefined,
  ) {
    this.#sink = sink;
    this.#scope = scope;
    this.#now = now;
    this.#startedAt = now();
    this.method = method;
    this.tool = tool;
    this.version = version;
    this.span = span;
  }

  get done(): boolean {
    return this.#done;
  }

  cancelCause(): CancelCause {
    return this.#sink.causeOfCancel(this.#scope);
  }

  closeCause(): CancelCause {
    return this.#sink.closeCause();
  }

  event(name: string, attributes?: Attributes): void {
    if (!this.#done) this.span?.addEvent(name, attributes);
  }

  /** The response left for the client: a result (maybe a tool error) or a JSON-RPC error. */
  answered(message: { result?: unknown; error?: unknown }): void {
    let errorType: string | undefined;
    let message_: string | undefined;
    const span = this.span;
    if (message.error !== undefined) {
      const e = message.error as { code?: unknown; message?: unknown };
      const code = typeof e.code === 'number' ? String(e.code) : 'unknown';
      errorType = code;
      message_ = typeof e.message === 'string' ? e.message : undefined;
      span?.setAttribute('rpc.response.status_code', code);
    } else {
      const r = message.result as { isError?: unknown; resultType?: unknown } | undefined;
      if (r?.isError === true) errorType = 'tool_error';
      else if (typeof r?.resultType === 'string' && r.resultType !== 'complete')
        span?.setAttribute('mcp.result.type', r.resultType);
    }
    this.#end(errorType, message_);
  }

  /** The dispatch threw before any response (the SDK's handler table itself failed). */
  threw(error: unknown): void {
    this.span?.recordException(error as Error);
    const type = error instanceof Error ? error.constructor.name || 'Error' : '_OTHER';
    this.#end(type, error instanceof Error ? error.message : String(error));
  }

  cancelled(cause: CancelCause, reason: string | undefined): void {
    if (this.#done) return;
    this.span?.addEvent('mcp.request.cancelled', {
      'mcp.cancel.cause': cause,
      ...(reason === undefined ? {} : { 'mcp.cancel.reason': reason }),
    });
    // Cancellation is recorded apart from failures: error.type says so, the status stays unset.
    this.span?.setAttribute('error.type', 'cancelled');
    this.#finish('cancelled');
  }

  #end(errorType: string | undefined, message: string | undefined): void {
    if (this.#done) return;
    const span = this.span;
    if (span !== undefined && errorType !== undefined) {
      span.setAttribute('error.type', errorType);
      span.setStatus(message === undefined ? { code: STATUS_ERROR } : { code: STATUS_ERROR, message });
    }
    this.#finish(errorType);
  }

  #finish(errorType: string | undefined): void {
    this.#done = true;
    this.span?.end();
    this.#sink.ended(this, (this.#now() - this.#startedAt) / 1000, errorType);
  }
}
