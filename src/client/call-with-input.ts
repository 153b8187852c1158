/**
 * The client side of multi round-trip requests (MCP 2026-07-28 basic/patterns/mrtr, SEP-2322) for callers whose
 * Client does not run the loop itself: SDK v1's `Client` (its `request()` hands an `input_required` result back
 * as it is), or hand-built requests.
 *
 *   const result = await callWithInput(client, { method: 'tools/call', params }, {
 *     'elicitation/create': async (params) => ({ action: 'accept', content: { name: 'Ada' } }),
 *   });
 *
 * A server answers `tools/call`, `prompts/get` or `resources/read` with `resultType: "input_required"`, a map of
 * `inputRequests` (`elicitation/create`, `sampling/createMessage`, `roots/list`) and/or an opaque `requestState`.
 * The client fulfils every input request with its own handler and sends the original request again — a new
 * JSON-RPC request with a new id (the Client assigns one per `request()`), `inputResponses` under the same keys,
 * and `requestState` echoed byte for byte (never inspected; omitted when the server sent none) — until the
 * result is complete. SDK v2's `Client` does all of this itself (`inputRequired.maxRounds`), so it needs no helper.
 *
 * Bounded: at most `maxRounds` retries (default {@link DEFAULT_MAX_INPUT_ROUNDS}); a server that keeps asking gets
 * {@link InputRoundsExceededError}. An input request for a method the caller gave no handler for — a capability
 * the client did not declare, which a server MUST NOT ask for (mrtr §"Server duties") — fails with
 * {@link InputUnsupportedError} before anything is retried. For a 2026-07-28 request (one that carries
 * `_meta["io.modelcontextprotocol/protocolVersion"]`) the helper declares exactly the handlers' capabilities in
 * `_meta["io.modelcontextprotocol/clientCapabilities"]` unless the caller set that field.
 *
 * On a legacy (2025) session nothing here is needed by the server: Sluice's server turns `input_required` into
 * real server-to-client requests, answered by the handlers registered on the Client with `setRequestHandler`, and
 * the result the helper sees is already complete.
 */

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  ClientRequest,
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
  ListRootsRequest,
  ListRootsResult,
  Result,
} from '@modelcontextprotocol/sdk/types.js';
import { InvalidOptionError } from '../errors.js';
import { isPlainObject as isObject } from '../jsonrpc/message.js';
import { META_CLIENT_CAPABILITIES } from '../jsonrpc/meta-keys.js';
import { MalformedMessageError, SluiceClientError } from './errors.js';
import { isModernRevision, PROTOCOL_VERSION_META_KEY } from './modern.js';

/** The methods an `input_required` result may embed, and the client capability each one needs. */
export const INPUT_REQUEST_CAPABILITIES = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
} as const;

export type InputRequestMethod = keyof typeof INPUT_REQUEST_CAPABILITIES;

/**
 * What each input method's handler is given and gives back: the `params` and the result of the client request
 * of that method (the SDK's types, so one function can also serve `client.setRequestHandler`). The params are
 * the server's: checked for what the types promise (an elicitation's `message` and its `requestedSchema` or
 * `url`; a sampling request's `messages` and `maxTokens`) before any handler runs; the rest is as sent.
 */
export interface InputRequestTypes {
  'elicitation/create': { params: ElicitRequest['params']; result: ElicitResult };
  'sampling/createMessage': { params: CreateMessageRequest['params']; result: CreateMessageResult };
  'roots/list': { params: NonNullable<ListRootsRequest['params']>; result: ListRootsResult };
}

/** Answers one embedded input request: its `params` in, the result the matching client request would return out. */
export type InputHandler<M extends InputRequestMethod = InputRequestMethod> = (
  params: InputRequestTypes[M]['params'],
  context: { signal?: AbortSignal },
) => Promise<InputRequestTypes[M]['result']>;

/** A handler per input method the client supports (its declared capabilities). */
export type InputHandlers = { [M in InputRequestMethod]?: InputHandler<M> };

/** A schema with zod's `safeParse` (the SDK's result schemas: `CallToolResultSchema`, …). */
export interface ResultSchema<R> {
  safeParse(data: unknown): { success: true; data: R } | { success: false; error: unknown };
}

export interface CallWithInputOptions {
  /** Retries allowed after the first request. Default {@link DEFAULT_MAX_INPUT_ROUNDS}; a positive integer. */
  maxRounds?: number;
  /** Passed to every leg's `client.request()` (timeout, signal, onprogress…); the signal also reaches handlers. */
  requestOptions?: RequestOptions;
}

/** With `resultSchema`: the complete result is checked by it, and typed by it. */
export interface CallWithInputTypedOptions<R> extends CallWithInputOptions {
  /** E.g. the SDK's `CallToolResultSchema`; a complete result it refuses is a MalformedMessageError. */
  resultSchema: ResultSchema<R>;
}

export const DEFAULT_MAX_INPUT_ROUNDS = 8;

/** The server still asked for input after `rounds` retries. */
export class InputRoundsExceededError extends SluiceClientError {
  readonly method: string;
  readonly rounds: number;
  constructor(method: string, rounds: number) {
    super(
      'SLUICE_CLIENT_INPUT_ROUNDS_EXCEEDED',
      `${method} still required input after ${rounds} rounds (maxRounds)`,
    );
    this.method = method;
    this.rounds = rounds;
  }
}

/** The server asked for input the client has no handler for (a capability it did not declare). */
export class InputUnsupportedError extends SluiceClientError {
  readonly key: string;
  readonly inputMethod: string;
  constructor(key: string, inputMethod: string) {
    super(
      'SLUICE_CLIENT_INPUT_UNSUPPORTED',
      `the server asked for ${inputMethod} (input "${key}"), which this client did not declare`,
    );
    this.key = key;
    this.inputMethod = inputMethod;
  }
}

/** Accepts any result: the loop itself checks the shape it relies on (the SDK's zod-v3-style `safeParse` contract). */
const ANY_RESULT = { safeParse: (data: unknown) => ({ success: true as const, data }) };

function validMaxRounds(options: CallWithInputOptions | undefined): number {
  const n = options?.maxRounds ?? DEFAULT_MAX_INPUT_ROUNDS;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new InvalidOptionError(`maxRounds must be a positive integer, got ${String(n)}`);
  }
  return n;
}

/** For a 2026-07-28 request without declared capabilities: exactly the handlers' capabilities. */
function withCapabilities(params: Record<string, unknown>, handlers: InputHandlers): Record<string, unknown> {
  const meta = params['_meta'];
  if (!isObject(meta)) return params;
  const revision = meta[PROTOCOL_VERSION_META_KEY];
  if (typeof revision !== 'string' || !isModernRevision(revision) || META_CLIENT_CAPABILITIES in meta) {
    return params;
  }
  const capabilities: Record<string, unknown> = {};
  for (const [method, capability] of Object.entries(INPUT_REQUEST_CAPABILITIES)) {
    if (handlers[method as InputRequestMethod] !== undefined) capabilities[capability] = {};
  }
  return { ...params, _meta: { ...meta, [META_CLIENT_CAPABILITIES]: capabilities } };
}

/** Why `params` are not what the types promise for `inputMethod`; undefined when they are (or the method is not ours). */
export function paramsFault(inputMethod: string, params: Record<string, unknown>): string | undefined {
  if (inputMethod === 'elicitation/create') {
    if (typeof params['message'] !== 'string') return 'an elicitation without a message';
    const form = isObject(params['requestedSchema']);
    const url = typeof params['url'] === 'string' && typeof params['elicitationId'] === 'string';
    return form || url ? undefined : 'an elicitation with neither requestedSchema nor url and elicitationId';
  }
  if (inputMethod === 'sampling/createMessage') {
    if (!Array.isArray(params['messages'])) return 'a sampling request without messages';
    return typeof params['maxTokens'] === 'number' ? undefined : 'a sampling request without maxTokens';
  }
  return undefined;
}

/** The embedded requests of an `input_required` result, checked: untrusted input from the server. */
function inputRequestsOf(
  method: string,
  result: Record<string, unknown>,
): [string, string, Record<string, unknown>][] {
  const raw = result['inputRequests'];
  if (raw === undefined) {
    if (result['requestState'] === undefined) {
      throw new MalformedMessageError(
        `${method}: input_required result with neither inputRequests nor requestState`,
      );
    }
    return [];
  }
  if (!isObject(raw)) throw new MalformedMessageError(`${method}: inputRequests is not an object`);
  const out: [string, string, Record<string, unknown>][] = [];
  for (const [key, entry] of Object.entries(raw)) {
    if (!isObject(entry) || typeof entry['method'] !== 'string') {
      throw new MalformedMessageError(`${method}: input request "${key}" has no method`);
    }
    const params = entry['params'] ?? {};
    if (!isObject(params))
      throw new MalformedMessageError(`${method}: input request "${key}" has bad params`);
    out.push([key, entry['method'], params]);
  }
  return out;
}

/**
 * Sends `request` and runs the multi round-trip loop until the server's result is complete; resolves with that
 * result (checked and typed by `options.resultSchema` when given). Rejects with {@link InputRoundsExceededError},
 * {@link InputUnsupportedError}, `MalformedMessageError` (an `input_required` result that is not one, an input
 * request whose params are not what its method needs, a result the schema refuses), a handler's own error, or the
 * Client's error for a leg.
 */
export function callWithInput<R>(
  client: Pick<Client, 'request'>,
  request: { method: string; params?: Record<string, unknown> },
  handlers: InputHandlers,
  options: CallWithInputTypedOptions<R>,
): Promise<R>;
export function callWithInput(
  client: Pick<Client, 'request'>,
  request: { method: string; params?: Record<string, unknown> },
  handlers: InputHandlers,
  options?: CallWithInputOptions,
): Promise<Result>;
export async function callWithInput(
  client: Pick<Client, 'request'>,
  request: { method: string; params?: Record<string, unknown> },
  handlers: InputHandlers,
  options?: CallWithInputOptions & { resultSchema?: ResultSchema<unknown> },
): Promise<unknown> {
  const maxRounds = validMaxRounds(options);
  const base = withCapabilities(request.params ?? {}, handlers);
  const signal = options?.requestOptions?.signal;
  let params = base;
  for (let round = 0; ; round++) {
    const result: unknown = await client.request(
      { method: request.method, params } as ClientRequest,
      ANY_RESULT as unknown as Parameters<Client['request']>[1],
      options?.requestOptions,
    );
    if (!isObject(result) || result['resultType'] !== 'input_required')
      return complete(request.method, result, options?.resultSchema);
    if (round >= maxRounds) throw new InputRoundsExceededError(request.method, maxRounds);
    const asked = inputRequestsOf(request.method, result);
    // Every request is checked before any handler runs: one the client cannot serve, or whose params are
    // not what its method needs, fails the call whole.
    for (const [key, inputMethod, inputParams] of asked) {
      if (handlers[inputMethod as InputRequestMethod] === undefined)
        throw new InputUnsupportedError(key, inputMethod);
      const fault = paramsFault(inputMethod, inputParams);
      if (fault !== undefined)
        throw new MalformedMessageError(`${request.method}: input request "${key}" is ${fault}`);
    }
    // One at a time, in the server's order: elicitations usually reach a person.
    const responses: Record<string, unknown> = {};
    for (const [key, inputMethod, inputParams] of asked) {
      // Checked above: params with what this method's type promises (paramsFault).
      const handler = handlers[inputMethod as InputRequestMethod] as (
        params: Record<string, unknown>,
        context: { signal?: AbortSignal },
      ) => Promise<unknown>;
      responses[key] = await handler(inputParams, signal !== undefined ? { signal } : {});
    }
    // The retry is the original request plus this round's answers; nothing from an earlier round is carried.
    params = { ...base };
    if (asked.length > 0) params['inputResponses'] = responses;
    if (result['requestState'] !== undefined) params['requestState'] = result['requestState'];
  }
}

/** The complete result, through `schema` when given. */
function complete(method: string, result: unknown, schema: ResultSchema<unknown> | undefined): unknown {
  if (schema === undefined) return result;
  const checked = schema.safeParse(result);
  if (checked.success) return checked.data;
  throw new MalformedMessageError(
    `${method}: the result is not what resultSchema describes: ${String(checked.error).slice(0, 500)}`,
  );
}
