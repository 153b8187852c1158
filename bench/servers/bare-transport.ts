// The least a Streamable HTTP transport can be and still let an SDK server answer: each message is
// handed to the SDK through the `onmessage` its `connect` installed, and each answer goes to the
// response its request came on, written by the child's `write` (one `res.end`). Notifications from
// the client get 202; the SDK's own notifications are dropped (the echo sends none). No checks of
// any kind. sdk-bare.ts (section (a)) and modern/server.ts (section (h)) host the SDK on it.
import type { ServerResponse } from 'node:http';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Writes one answer to the response of its request. */
export type WriteAnswer = (res: ServerResponse, message: JSONRPCMessage) => void;

export class BareTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];
  readonly #waiting = new Map<string | number, ServerResponse>();
  readonly #write: WriteAnswer;
  readonly #answered: (() => void) | undefined;

  /** `answered` runs after each answer is written. */
  constructor(write: WriteAnswer, answered?: () => void) {
    this.#write = write;
    this.#answered = answered;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  /** Hands one parsed message to the SDK; a request's answer will end `res`. */
  receive(message: JSONRPCMessage, res: ServerResponse): void {
    const id = 'id' in message ? message.id : undefined;
    if (id !== undefined && 'method' in message) this.#waiting.set(id, res);
    else res.writeHead(202).end();
    this.onmessage?.(message);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const id = 'id' in message && !('method' in message) ? message.id : undefined;
    const res = id === undefined ? undefined : this.#waiting.get(id);
    if (id === undefined || res === undefined) return;
    this.#waiting.delete(id);
    this.#write(res, message);
    this.#answered?.();
  }
}
