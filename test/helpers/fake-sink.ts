/**
 * A response sink and a small core context for unit tests of the core's state machines (the
 * answer, the exchange, the event stream, the 2026-07-28 call) with no HTTP server: the sink records
 * what was written, can refuse bytes (a blocked socket) until drain() and can be closed by the
 * "peer"; the context holds only what those machines read.
 */
import type { ConnectionShared } from '../../src/core/answer/connection.js';
import { Counters } from '../../src/core/observe/counters.js';
import type { Headers, ResponseSink } from '../../src/core/pipeline/sink.js';
import { LiveSet } from '../../src/core/stream/live.js';
import { Pacer } from '../../src/core/stream/pacer.js';
import type { WriterLimits } from '../../src/core/stream/sse-writer.js';
import type { StreamContext, StreamShared } from '../../src/core/stream/stream-context.js';
import { MemoryEventStore } from '../../src/events/memory-event-store.js';

export class FakeSink implements ResponseSink {
  status: number | undefined;
  headers: Headers | undefined;
  /** Everything handed to the sink, in order (respond's body, writes, end's last bytes). */
  body = '';
  /** Bytes refused by the "socket" are still accepted (as a kernel buffer would), but write() says false. */
  blocked = false;
  ended = false;
  destroyed = false;
  writes = 0;
  #closed = false;
  readonly #drain: (() => void)[] = [];
  readonly #close: (() => void)[] = [];

  get closed(): boolean {
    return this.#closed;
  }

  respond(status: number, headers: Headers, body: string): void {
    this.status = status;
    this.headers = headers;
    this.body += body;
    this.ended = true;
    this.#closeNow();
  }

  head(status: number, headers: Headers): void {
    this.status = status;
    this.headers = headers;
  }

  write(chunk: string): boolean {
    if (this.#closed) return false;
    this.writes++;
    this.body += chunk;
    return !this.blocked;
  }

  end(last?: string): void {
    if (this.#closed) return;
    this.body += last ?? '';
    this.ended = true;
    this.#closeNow();
  }

  destroy(): void {
    if (this.#closed) return;
    this.destroyed = true;
    this.#closeNow();
  }

  onDrain(listener: () => void): void {
    this.#drain.push(listener);
  }

  onClose(listener: () => void): void {
    this.#close.push(listener);
  }

  /** The socket takes bytes again. */
  drain(): void {
    this.blocked = false;
    for (const l of this.#drain) l();
  }

  /** The client goes away. */
  peerClose(): void {
    this.#closeNow();
  }

  /** The JSON payloads of the SSE `data:` lines written so far. */
  messages(): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const line of this.body.split('\n')) {
      if (!line.startsWith('data: ') || line.length <= 6) continue;
      out.push(JSON.parse(line.slice(6)) as Record<string, unknown>);
    }
    return out;
  }

  /** The ids of the SSE events written so far. */
  ids(): string[] {
    return this.body
      .split('\n')
      .filter((l) => l.startsWith('id: '))
      .map((l) => l.slice(4));
  }

  #closeNow(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const l of this.#close) l();
  }
}

/** Waits for the writer's end-of-tick batch (it flushes on setImmediate). */
export function nextTick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export interface SmallContext extends ConnectionShared {
  readonly live: LiveSet;
  readonly counters: Counters;
}

/** What every connection shares, with small queue limits so a test can overflow them. */
export function smallContext(limits: Partial<WriterLimits> = {}): SmallContext {
  return {
    counters: new Counters(false),
    limits: { highWaterMark: 64, maxQueueBytes: 256, ...limits },
    now: Date.now,
    live: new LiveSet(),
  };
}

/** A session's stream context: ids tagged `t`, the built-in replay store, priming on. */
export function streamContext(
  small: SmallContext = smallContext(),
  over: Partial<Omit<StreamShared, 'live'>> = {},
  store: MemoryEventStore = new MemoryEventStore(),
): StreamContext & {
  readonly store: MemoryEventStore;
  readonly shared: StreamShared & { readonly live: LiveSet };
} {
  const shared = {
    ...small,
    retryMs: 1000,
    probe: undefined,
    pacer: new Pacer(0),
    streamAfterMs: 0,
    streamGraceMs: 60_000,
    orphanTimeoutMs: 60_000,
    ...over,
    live: small.live,
  };
  return {
    shared,
    sessionKey: 'session-1',
    tag: 't',
    store,
    priming: true,
    ended: false,
    sessionHash: 'abcd1234',
  };
}
