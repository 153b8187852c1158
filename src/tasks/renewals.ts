/**
 * The leases of the runs of this instance (store.ts, TaskStore.renew): one timer renews all of
 * them every third of a lease while any run is listed (a timer per run was a `Timeout` created and
 * cleared per task), and it stops itself at a tick that finds none, not when the last run ends:
 * under load the run count drops to zero between tasks (unref'd: it never holds the process).
 *
 * A read of tasks through this instance first catches up when that timer is overdue: a process
 * that stalled (a long GC pause, a starved CPU, an event loop held) may take a request off its
 * socket before the timer fires, and the read would find this instance's own live task past its
 * lease and fail it (owner lost). So once the timer is two periods late, the read renews every run
 * here and waits for that first; otherwise it costs nothing.
 */

/** A run whose lease this instance renews (run.ts TaskRun; a task of sdk-store.ts). */
export interface Renewable {
  /** Renews its lease; settles (never rejects) once the store answered. */
  renew(): Promise<void>;
}

export class Renewals {
  readonly #runs: ReadonlyMap<string, Renewable>;
  readonly #now: () => number;
  readonly #every: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** When the runs were last renewed (this instance's clock). */
  #renewedAt = 0;

  constructor(runs: ReadonlyMap<string, Renewable>, leaseMs: number, now: () => number) {
    this.#runs = runs;
    this.#now = now;
    this.#every = Math.max(100, Math.floor(leaseMs / 3));
  }

  /** A run was listed: the timer runs (if it did not). */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#renewedAt = this.#now();
    this.#timer = setInterval(() => {
      if (this.#runs.size === 0) this.stop();
      void this.#renewAll();
    }, this.#every);
    this.#timer.unref?.();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Before a read of tasks: renews every run first when the timer is two periods late (what to
   * wait for), else nothing (undefined: no promise made on the per-request path).
   */
  caughtUp(): Promise<void> | undefined {
    if (this.#timer === undefined || this.#now() - this.#renewedAt <= 2 * this.#every) return undefined;
    return this.#renewAll();
  }

  async #renewAll(): Promise<void> {
    // Set first: a read that comes while these are on their way does not send them again (it is
    // sent after them on the store's link, so the store sees them first).
    this.#renewedAt = this.#now();
    await Promise.all([...this.#runs.values()].map((run) => run.renew()));
  }
}
