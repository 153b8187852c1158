/**
 * Hands inbound messages to the SDK. The SDK's `Protocol.connect` wraps `transport.onmessage` in a
 * function that first runs `isJSONRPCResultResponse || isJSONRPCErrorResponse` — zod safeParse
 * guards that fail, building a ZodError each, for every request and notification (about 27 % of the
 * official transport's CPU per echo: docs/benchmarks.md "Baseline"). Sluice has already classified the
 * message, so when the Protocol's own per-kind handlers are present it calls them directly.
 * If a future SDK renames them, this falls back to `onmessage`, which is always correct.
 */
import type { MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/message.js';
import type { BridgeTransport } from './bridge-transport.js';

export interface Dispatcher {
  request(m: JsonRpcRequest, extra: MessageExtraInfo): void;
  notification(m: JsonRpcNotification): void;
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

export function createDispatcher(server: unknown, transport: BridgeTransport, fast: boolean): Dispatcher {
  const p = fast ? internalsOf(server) : undefined;
  if (p !== undefined) {
    return {
      request: (m, extra) => p._onrequest(m, extra),
      notification: (m) => p._onnotification(m),
      response: (m) => p._onresponse(m),
      fast: true,
    };
  }
  const deliver = (m: unknown, extra?: MessageExtraInfo): void => {
    transport.onmessage?.(m as never, extra);
  };
  return { request: deliver, notification: (m) => deliver(m), response: (m) => deliver(m), fast: false };
}
