/**
 * The open SSE connections of one endpoint, whatever era or stream they carry: the shared keepalive
 * timer walks them (one timer for every stream, not one per connection), and the stats sum their
 * queues. Writers join when a connection attaches and leave when it goes.
 */
import type { Counters } from '../observe/counters.js';
import type { SseWriter } from './sse-writer.js';

/** Where attached writers are registered (a LiveSet; a plain Set in unit tests). */
export interface WriterSet {
  add(w: SseWriter): unknown;
  delete(w: SseWriter): unknown;
}

export interface QueueTotals {
  bytes: number;
  messages: number;
  maxStreamBytes: number;
}

export class LiveSet implements WriterSet {
  readonly #writers = new Set<SseWriter>();
  #timer: ReturnType<typeof setInterval> | undefined;

  add(w: SseWriter): void {
    this.#writers.add(w);
  }

  delete(w: SseWriter): void {
    this.#writers.delete(w);
  }

  get size(): number {
    return this.#writers.size;
  }

  /**
   * Starts the keepalive: a stream silent for `idleMs` gets a comment within a quarter period more
   * (docs/deploy.md: keepalive every 15–30 s, under the tightest proxy idle timeout).
   */
  startKeepalive(idleMs: number, now: () => number, counters: Counters): void {
    if (idleMs <= 0) return;
    const period = Math.max(50, Math.floor(idleMs / 4));
    this.#timer = setInterval(() => {
      const t = now();
      for (const w of this.#writers) if (w.keepalive(t, idleMs)) counters.add('keepalivesSent');
    }, period);
    this.#timer.unref?.();
  }

  stopKeepalive(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }

  queues(): QueueTotals {
    let bytes = 0;
    let messages = 0;
    let maxStreamBytes = 0;
    for (const w of this.#writers) {
      const b = w.queuedBytes;
      bytes += b;
      messages += w.queuedMessages;
      if (b > maxStreamBytes) maxStreamBytes = b;
    }
    return { bytes, messages, maxStreamBytes };
  }
}
