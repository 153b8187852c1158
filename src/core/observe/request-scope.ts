/**
 * What the pipeline records about one POST for the requests its body carries (operations.ts says how
 * a request finds it): the scope, kept on the request's header object, and what reads it.
 */
import { PrivateSlot } from '../../flow/private-slot.js';
import type { RequestId } from '../../jsonrpc/message.js';
import type { OtelContext } from '../../trace/otel-like.js';
import type { Operation } from './operation.js';

/** What the scope reads of the request (the pipeline's RequestView). */
export interface ScopeView {
  readonly headers: object;
  header(name: string): string | undefined;
}

export interface SingleRequest {
  readonly id: RequestId;
  readonly method: string;
  readonly params?: Record<string, unknown> | undefined;
}

/** What the pipeline records about one POST, for the requests its body carries. */
/** The endpoint's observation (operations.ts), as a request's scope reaches it. */
export interface ScopeOwner {
  /** Runs `run` (the SDK's dispatch of `m`) inside the request's span, tracked on `host`. */
  dispatch(
    scope: RequestScope,
    m: { id: RequestId; method: string; params?: Record<string, unknown> | undefined },
    host: OperationHost,
    run: () => void,
  ): void;
}

export class RequestScope {
  readonly ops: ScopeOwner;
  /** The OpenTelemetry context active when the binding handed the request over (the HTTP span's). */
  readonly ambient: OtelContext | undefined;
  readonly #view: ScopeView;
  readonly #sink: { readonly closed: boolean };
  #single: SingleRequest | undefined;

  constructor(
    ops: ScopeOwner,
    view: ScopeView,
    sink: { readonly closed: boolean },
    ambient: OtelContext | undefined,
  ) {
    this.ops = ops;
    this.#view = view;
    this.#sink = sink;
    this.ambient = ambient;
  }

  header(name: string): string | undefined {
    return this.#view.header(name);
  }

  /** Whether the client's HTTP response is closed. */
  sinkClosed(): boolean {
    return this.#sink.closed;
  }

  /** The body's request when it is a single one (pipeline/route.ts). */
  get request(): SingleRequest | undefined {
    return this.#single;
  }

  single(request: SingleRequest): void {
    this.#single = request;
  }
}

/** On the request's header object itself (flow/private-slot.ts says why not a WeakMap). */
export const scopes = new PrivateSlot<RequestScope>('sluice.requestScope');

/** The scope of the POST a request came in, from the `extra` the SDK is given. */
export function scopeOf(extra: unknown): RequestScope | undefined {
  const h = (extra as { requestInfo?: { headers?: unknown } } | undefined)?.requestInfo?.headers;
  return typeof h === 'object' && h !== null ? scopes.get(h) : undefined;
}

/** The scope recorded for a POST's header object (pipeline/route.ts notes the single request's id). */
export function scopeFor(headers: object): RequestScope | undefined {
  return scopes.get(headers);
}

/** What a request's operation is tracked on: its SDK transport (sdk/bridge-transport.ts). */
export interface OperationHost {
  readonly sessionId?: string | undefined;
  track(id: RequestId, op: Operation): void;
}
