/**
 * A gate producers wait at until it opens, or at most `maxMs` (then they go on regardless: a bound
 * on every wait). One promise and one unref'd timer however many wait; opening releases them all.
 */
export class Gate {
  #promise: Promise<void> | undefined;
  #release: (() => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #maxMs: number;

  constructor(maxMs: number) {
    this.#maxMs = maxMs;
  }

  /** Resolves when the gate opens, or after `maxMs` at the latest. */
  wait(): Promise<void> {
    this.#promise ??= new Promise<void>((resolve) => {
      this.#release = resolve;
      this.#timer = setTimeout(() => this.open(), this.#maxMs);
      this.#timer.unref?.();
    });
    return this.#promise;
  }

  /** Releases every waiter; the next wait() waits again. */
  open(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#release?.();
    this.#promise = undefined;
    this.#release = undefined;
    this.#timer = undefined;
  }
}
