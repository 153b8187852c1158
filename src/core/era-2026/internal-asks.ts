/**
 * Requests Sluice sends the served server on its own behalf, never seen by the client: the
 * initialize that describes the server for server/discover and subscriptions/listen, and the
 * tools/list that holds the tools' `x-mcp-header` declarations (introspect.ts). They go through
 * the call's own transport under ids of the form `\0sluice-<n>` (which observe/operations.ts knows
 * not to trace as a client's request), and their answers come back through the same route as the
 * client's response, so they are told apart here.
 */
import type { JsonRpcResponse } from '../../jsonrpc/message.js';

type Waiter = (m: JsonRpcResponse | undefined) => void;

/**
 * How long an ask waits for the served server's answer. A server that never answers its own
 * initialize or tools/list would otherwise hold the client's call (and a task's run, which has no
 * client to close it) forever; the ask then reads as unanswered and the caller says so.
 */
export const INTERNAL_ASK_MS = 10_000;

let seq = 0;

export class InternalAsks {
  /** Asks awaiting their answer, made on first use (most calls ask nothing). */
  #waiting: Map<string, Waiter> | undefined;

  /**
   * A fresh id, and its answer: undefined if the call ends before it comes, or if it does not come
   * within `deadlineMs` (a later answer to that id is then dropped, as one to no ask).
   */
  open(deadlineMs = INTERNAL_ASK_MS): { id: string; answer: Promise<JsonRpcResponse | undefined> } {
    const id = `\u0000sluice-${++seq}`;
    this.#waiting ??= new Map();
    const waiting = this.#waiting;
    const answer = new Promise<JsonRpcResponse | undefined>((resolve) => {
      const timer = setTimeout(() => {
        if (waiting.get(id) !== settle) return;
        waiting.delete(id);
        resolve(undefined);
      }, deadlineMs);
      timer.unref?.();
      const settle: Waiter = (m) => {
        clearTimeout(timer);
        resolve(m);
      };
      waiting.set(id, settle);
    });
    return { id, answer };
  }

  /** Hands an answer to the ask it belongs to; false when it answers none (the client's response). */
  settle(message: JsonRpcResponse): boolean {
    const id = message.id;
    if (typeof id !== 'string') return false;
    const w = this.#waiting?.get(id);
    if (w === undefined) return false;
    this.#waiting?.delete(id);
    w(message);
    return true;
  }

  /** The ids still awaiting an answer. */
  ids(): Iterable<string> {
    return this.#waiting?.keys() ?? [];
  }

  /** The call is over: every ask still waiting gets undefined. */
  clear(): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting !== undefined) for (const w of waiting.values()) w(undefined);
  }
}
