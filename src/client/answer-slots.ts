/**
 * The messages the client POSTs that are not requests — its answers to the server's requests, and notifications —
 * go out at most {@link MAX_CONCURRENT_ANSWERS} at a time; the others wait in order for a slot.
 *
 * Why: each such POST is one HTTP request, so a server that sends a burst of requests (a flood of pings, or many
 * elicitations fanned out at once) had the client open one connection per answer, all at once: 3,000 pings opened
 * 3,000 sockets together, overflowed the server's listen backlog and delayed answers by seconds of SYN retries. Such
 * a POST is answered 202 at once by a conforming server (MCP 2025-11-25 basic/transports §"Sending Messages to the
 * Server"), so a few slots keep up. Requests are not limited: a streaming call holds its connection for as long as it
 * runs, and an answer never waits behind one.
 */

/** Answers and notifications POSTed at once, at most. */
export const MAX_CONCURRENT_ANSWERS = 16;

export class AnswerSlots {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Runs `work` in a slot, waiting in line for one first when all are taken. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running < this.#limit) this.#running++;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await work();
    } finally {
      // The slot goes straight to the next in line, or is freed.
      const next = this.#waiting.shift();
      if (next !== undefined) next();
      else this.#running--;
    }
  }
}
