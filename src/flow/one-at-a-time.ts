/**
 * Jobs run one at a time, in the order they came: each starts once the one before it settled
 * (resolved or rejected; a rejection reaches its own caller only). Once idle it holds no settled
 * promise, so an object that owns one costs nothing between bursts.
 */
export class OneAtATime {
  #tail: Promise<unknown> | undefined;

  run<T>(job: () => Promise<T>): Promise<T> {
    const run = (this.#tail ?? Promise.resolve()).then(job);
    const tail = run.catch(() => undefined);
    this.#tail = tail;
    void tail.then(() => {
      if (this.#tail === tail) this.#tail = undefined;
    });
    return run;
  }
}
