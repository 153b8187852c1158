/**
 * The SDK `Transport` a session's McpServer is connected to. Outbound messages from the SDK go to
 * the session's router; inbound ones are dispatched by the session (see dispatcher.ts). One per
 * session, so the SDK's per-transport state (request handlers, abort controllers) is per session.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { JsonRpcMessage, RequestId } from '../../jsonrpc/message.js';

export interface BridgeTarget {
  route(message: JsonRpcMessage, relatedRequestId: RequestId | undefined): Promise<void> | undefined;
  /** The SDK closed its side (server.close()). */
  closedBySdk(): void;
}

/** Returned by every send that need not wait: one shared settled promise, no allocation per event. */
const SENT: Promise<void> = Promise.resolve();

export class BridgeTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  sessionId?: string | undefined;
  readonly #target: BridgeTarget;
  #closed = false;

  constructor(target: BridgeTarget, sessionId: string | undefined) {
    this.#target = target;
    this.sessionId = sessionId;
  }

  async start(): Promise<void> {}

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#closed) return SENT;
    const wait = this.#target.route(message as JsonRpcMessage, options?.relatedRequestId);
    return wait ?? SENT;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#target.closedBySdk();
    this.onclose?.();
  }
}
