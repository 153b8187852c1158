/**
 * The doctor's own event-loop stalls while it reads a stream. Arrival times are taken when this
 * process reads the events: if its loop stalls (a loaded machine, a CI runner), events the path
 * passed on as they came are read together afterwards, which looks exactly like a proxy holding
 * them. A 10 ms timer notes every tick that comes far too late; the pacing check (check-streaming.ts)
 * does not count against the path what such a stall explains.
 */

/** A tick this much later than due is a stall (enough to join two events produced 50 ms apart). */
const STALL_MS = 40;
/** After a stall ends, what arrives within this many ms was read together because of it. */
export const AFTER_STALL_MS = 50;

/** A stall, in ms on the clock of whoever asked (`stalls(t0)`): from the last punctual tick to the late one. */
export interface StallWindow {
  from: number;
  to: number;
}

export class StallWatch {
  readonly #windows: StallWindow[] = [];
  readonly #timer: ReturnType<typeof setInterval>;
  #last = performance.now();

  constructor() {
    this.#timer = setInterval(() => {
      const now = performance.now();
      if (now - this.#last - 10 > STALL_MS) this.#windows.push({ from: this.#last, to: now });
      this.#last = now;
    }, 10);
    // Never what keeps the process alive.
    this.#timer.unref?.();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** The longest stall seen, in ms (0 when none passed STALL_MS). */
  get longest(): number {
    return longestStall(this.#windows);
  }

  /** The stalls as windows in ms since `t0` (a time on `performance.now()`, e.g. an exchange's start). */
  stalls(t0: number): StallWindow[] {
    return this.#windows.map((w) => ({ from: w.from - t0, to: w.to - t0 }));
  }
}

/** How late the latest tick of `stalls` came, in ms (0 for none): the longest stall. */
export function longestStall(stalls: readonly StallWindow[]): number {
  return stalls.reduce((m, w) => Math.max(m, w.to - w.from - 10), 0);
}

/** Whether an arrival at `t` came during one of `stalls` or within AFTER_STALL_MS after it. */
export function readAfterStall(t: number, stalls: readonly StallWindow[]): boolean {
  return stalls.some((w) => t >= w.from && t <= w.to + AFTER_STALL_MS);
}

/**
 * How much of the silence from `a` to `b` the doctor spent stalled (ms, the overlaps with `stalls`
 * summed): the part of a silence that is its own doing, not the path's. Only that part: a stall of
 * 120 ms inside a silence of 1.2 s leaves a silence of over a second to the path.
 */
export function stalledWithin(a: number, b: number, stalls: readonly StallWindow[]): number {
  let ms = 0;
  for (const w of stalls) ms += Math.max(0, Math.min(b, w.to) - Math.max(a, w.from));
  return ms;
}
