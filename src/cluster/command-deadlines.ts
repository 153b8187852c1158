/**
 * One deadline for every command of a Redis link, kept by one timer.
 *
 * node-redis's own per-command `timeout` (6.x) only covers the time a command waits to be written:
 * its listener is removed as the command goes to the socket, so a command Redis never answers (a
 * server stopped with SIGSTOP, a peer behind a dropped route, no RST) waited for its reply for as
 * long as the TCP connection lived, and so did the request behind it. This bounds the whole wait.
 *
 * Every command of a link has the same allowance, so deadlines come in the order commands were
 * sent: a FIFO, whose head is always the earliest. One timer, armed for the head, sweeps when it
 * fires (answered entries leave, late ones are rejected) and is armed again for the new head; a
 * busy link costs a list entry per command and a timer callback per allowance, not a timer each.
 */
import { type RedisLink, type RedisReply, RedisUnavailableError } from './redis-link.js';

/**
 * How long a Redis command may take before it fails (503 for the request behind it): the built-in
 * adapters' default (`commandTimeoutMs`) and the bound put on a link of the user's own.
 */
export const DEFAULT_COMMAND_DEADLINE_MS = 1_000;

interface Entry {
  readonly at: number;
  readonly reject: (error: Error) => void;
  settled: boolean;
  next: Entry | undefined;
}

export class CommandDeadlines {
  readonly #ms: number;
  readonly #now: () => number;
  #head: Entry | undefined;
  #tail: Entry | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** `ms`: how long a command may take, from the moment it is sent to its reply. */
  constructor(ms: number, now: () => number = () => performance.now()) {
    this.#ms = ms;
    this.#now = now;
  }

  /**
   * What `p` settles to, or a RedisUnavailableError once the allowance has passed first; `p`
   * settling later is then ignored (never an unhandled rejection).
   */
  bound<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const e: Entry = { at: this.#now() + this.#ms, reject, settled: false, next: undefined };
      if (this.#tail === undefined) this.#head = e;
      else this.#tail.next = e;
      this.#tail = e;
      if (this.#timer === undefined) this.#arm(this.#ms);
      p.then(
        (v) => {
          if (e.settled) return;
          e.settled = true;
          resolve(v);
        },
        (error: unknown) => {
          if (e.settled) return;
          e.settled = true;
          reject(error);
        },
      );
    });
  }

  /** Commands neither answered nor past their deadline (for tests and metrics). */
  get pending(): number {
    let n = 0;
    for (let e = this.#head; e !== undefined; e = e.next) if (!e.settled) n++;
    return n;
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#sweep(), Math.max(1, Math.ceil(ms)));
    // A command's own promise keeps whoever awaits it waiting; the timer need not hold the process.
    this.#timer.unref?.();
  }

  #sweep(): void {
    this.#timer = undefined;
    const now = this.#now();
    let e = this.#head;
    const overdue: Entry[] = [];
    while (e !== undefined && (e.settled || e.at <= now)) {
      if (!e.settled) overdue.push(e);
      e = e.next;
    }
    this.#head = e;
    if (e === undefined) this.#tail = undefined;
    else this.#arm(e.at - now);
    if (overdue.length === 0) return;
    // Failed one turn later, after the loop's I/O phase (as flow/late-deadline.ts does): timers run
    // before sockets are read, so a process that stalled past the allowance (a long collection,
    // starved of CPU) would otherwise fail replies that came in time and sit unread in its socket.
    // What is still unanswered then is late by the server, not by this process.
    setImmediate(() => {
      for (const o of overdue) {
        if (o.settled) continue;
        o.settled = true;
        o.reject(new RedisUnavailableError(`Redis did not answer within ${this.#ms} ms`));
      }
    });
  }
}

/**
 * A link of the user's own (`redisCluster({ link })`) held to the deadline the built-in adapters
 * keep (docs/scale-out.md, "Redis stalls": 503 after at most the deadline, never a hang). The seam's
 * own example wraps node-redis, whose per-command timeout stops counting once a command is written,
 * so without this a request behind a stalled Redis waited as long as the TCP connection lived.
 */
export function withDeadlines(inner: RedisLink, ms: number): RedisLink {
  const deadlines = new CommandDeadlines(ms);
  const send = (args: readonly string[]): Promise<RedisReply> => deadlines.bound(inner.send(args));
  const close = (): Promise<void> => inner.close();
  // The optional methods only when the inner link has them: their callers check for them.
  const sub = inner.subscribe;
  const failover = inner.onFailover;
  return {
    send,
    close,
    ...(sub === undefined
      ? {}
      : {
          subscribe: (channel: string, sharded: boolean, onMessage: (m: string) => void) =>
            sub.call(inner, channel, sharded, onMessage),
        }),
    ...(failover === undefined
      ? {}
      : { onFailover: (listener: () => void) => failover.call(inner, listener) }),
  };
}
