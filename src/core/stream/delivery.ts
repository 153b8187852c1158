/**
 * Waiters for "every frame up to seq reached a connection and left its queue": a JSON answer of
 * the session era waits on it so the response never overtakes the related notifications sent on
 * the standalone stream (era-2025/json-order.ts). While no connection is attached (cut, the client
 * about to resume) nothing counts as delivered: what the lost connection held may never have
 * reached the client, and the resume sends it again.
 */
import type { SseWriter } from './sse-writer.js';

/** Waiters kept at most: callers bound their wait by a timer, so the oldest has timed out. */
const MAX_WAITERS = 64;

export interface DeliveryState {
  /** Highest seq handed to any connection. */
  readonly delivered: number;
  /** The attached connection's writer; undefined while none is attached. */
  readonly writer: SseWriter | undefined;
  /** No more frames come (the stream finished, or its session ended). */
  readonly over: boolean;
}

export class DeliveryWaiters {
  #list: { seq: number; resolve: () => void }[] | undefined;

  get empty(): boolean {
    return this.#list === undefined;
  }

  /** Resolves once frame `seq` is delivered (see check); undefined when it is already. */
  when(seq: number, s: DeliveryState): Promise<void> | undefined {
    if (s.delivered >= seq && (s.writer !== undefined || s.over)) return s.writer?.whenFlushed();
    return new Promise((resolve) => {
      this.#list ??= [];
      // A client that never comes back must not make this list grow with every answer.
      if (this.#list.length >= MAX_WAITERS) this.#list.shift()?.resolve();
      this.#list.push({ seq, resolve });
    });
  }

  /** Lets go of the waiters whose frames reached the attached connection and left its queue. */
  check(s: DeliveryState, finished: boolean): void {
    const list = this.#list;
    if (list === undefined) return;
    const rest = list.filter((d) => {
      if (s.delivered < d.seq || (s.writer === undefined && !finished)) return true;
      const f = s.writer?.whenFlushed();
      if (f === undefined) d.resolve();
      else void f.then(d.resolve);
      return false;
    });
    this.#list = rest.length > 0 ? rest : undefined;
  }
}
