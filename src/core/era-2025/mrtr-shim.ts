/**
 * One tool for both eras: on a legacy session, an `input_required` result (MRTR, MCP 2026-07-28
 * basic/patterns/mrtr) is not sent to the client, which would not understand it. Sluice asks each
 * input request as a real server-to-client request on the request's own stream (the 2025 way:
 * elicitation/create, sampling/createMessage, roots/list), then dispatches the original request
 * again with `inputResponses` and the echoed `requestState`, until the tool completes (at most
 * MAX_ROUNDS rounds). The client sees one request and its usual server requests.
 */
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { JsonRpcCode } from '../../jsonrpc/codes.js';
import {
  errorResponse,
  isPlainObject as isObject,
  type JsonRpcError,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../jsonrpc/message.js';
import { carryMrtr, INPUT_REQUIRED_METHODS } from '../../modern/mrtr.js';

/** Rounds of input one legacy request may go through before it is failed. */
export const MAX_ROUNDS = 8;

/** The result schema of each input request, for the SDK's request(). */
export const SHIM_SCHEMAS = {
  'elicitation/create': ElicitResultSchema,
  'sampling/createMessage': CreateMessageResultSchema,
  'roots/list': ListRootsResultSchema,
} as const;

/** What the shim needs from a session. */
export interface ShimHost {
  /** Sends a server-to-client request related to `related` and resolves with the client's result. */
  ask(method: keyof typeof SHIM_SCHEMAS, params: unknown, related: RequestId): Promise<unknown>;
  /** Hands a request to the served server again, with the `extra` it first came with. */
  redispatch(m: JsonRpcRequest, extra: unknown): void;
  /** Delivers a final response for `id` as if the server had sent it. */
  deliver(m: JsonRpcResponse): void;
  /** Whether the request is still awaited by its client (not cancelled, session alive). */
  pending(id: RequestId): boolean;
}

interface Entry {
  m: JsonRpcRequest;
  extra: unknown;
  rounds: number;
}

export class LegacyMrtrShim {
  readonly #host: ShimHost;
  /** Requests that may return input_required, with the rounds they went through. */
  readonly #requests = new Map<RequestId, Entry>();

  constructor(host: ShimHost) {
    this.#host = host;
  }

  /** Called for every request the client sends. */
  remember(m: JsonRpcRequest, extra: unknown): void {
    if (INPUT_REQUIRED_METHODS.has(m.method)) this.#requests.set(m.id, { m, extra, rounds: 0 });
  }

  /** Called for every response the server sends; true when the shim took it over. */
  intercept(message: JsonRpcResponse): boolean {
    const id = message.id;
    if (id === undefined || id === null) return false;
    const entry = this.#requests.get(id);
    if (entry === undefined) return false;
    const result = 'result' in message ? message.result : undefined;
    if (result?.['resultType'] !== 'input_required') {
      this.#requests.delete(id);
      return false;
    }
    void this.#round(id, entry, result);
    return true;
  }

  /** Forgets a request (cancelled, or its session ended). */
  forget(id: RequestId): void {
    this.#requests.delete(id);
  }

  async #round(id: RequestId, entry: Entry, result: Record<string, unknown>): Promise<void> {
    entry.rounds++;
    if (entry.rounds > MAX_ROUNDS) return this.#fail(id, `more than ${MAX_ROUNDS} rounds of input`);
    const reqs = isObject(result['inputRequests']) ? result['inputRequests'] : {};
    const inputResponses: Record<string, unknown> = {};
    try {
      await Promise.all(
        Object.entries(reqs).map(async ([key, r]) => {
          const method = isObject(r) ? r['method'] : undefined;
          if (
            method !== 'elicitation/create' &&
            method !== 'sampling/createMessage' &&
            method !== 'roots/list'
          ) {
            throw new Error(`unsupported input request ${String(method)}`);
          }
          inputResponses[key] = await this.#host.ask(method, isObject(r) ? (r['params'] ?? {}) : {}, id);
        }),
      );
    } catch (error) {
      return this.#fail(
        id,
        `input request failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (!this.#host.pending(id)) return this.forget(id);
    const params: Record<string, unknown> = { ...entry.m.params, inputResponses };
    if (typeof result['requestState'] === 'string') params['requestState'] = result['requestState'];
    else delete params['requestState'];
    this.#host.redispatch(carryMrtr({ ...entry.m, params }), entry.extra);
  }

  #fail(id: RequestId, message: string): void {
    this.#requests.delete(id);
    if (!this.#host.pending(id)) return;
    const e: JsonRpcError = errorResponse(id, JsonRpcCode.InternalError, `Internal error: ${message}`);
    this.#host.deliver(e);
  }
}
