/** The length of the meter's windows: events less than this apart may be counted together. */
export const RATE_WINDOW_MS = 1000;

/**
 * The rate of a stream of events, in events and bytes per second: the highest of the completed
 * one-second windows, or the current window's count when it is higher (a burst is seen within its
 * first second, not a second late). Peak, not average: it sizes a replay buffer that must hold a
 * disconnect's worth of the fastest production seen. No timer, O(1) per event.
 */
export class RateMeter {
  #windowStart = Number.NEGATIVE_INFINITY;
  #events = 0;
  #bytes = 0;
  #peakEvents = 0;
  #peakBytes = 0;

  /** Counts one event of `bytes` at time `now`. */
  note(bytes: number, now: number): void {
    if (now - this.#windowStart >= RATE_WINDOW_MS) {
      if (this.#events > this.#peakEvents) this.#peakEvents = this.#events;
      if (this.#bytes > this.#peakBytes) this.#peakBytes = this.#bytes;
      this.#windowStart = now;
      this.#events = 0;
      this.#bytes = 0;
    }
    this.#events++;
    this.#bytes += bytes;
  }

  get eventsPerSecond(): number {
    return Math.max(this.#peakEvents, this.#events);
  }
  get bytesPerSecond(): number {
    return Math.max(this.#peakBytes, this.#bytes);
  }
}
