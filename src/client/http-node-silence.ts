/**
 * The Node adapter's silence timeout: a request with no response head for {@link SILENCE_TIMEOUT_MS} fails. One unref'd sweep timer per client, running only while anything
 * is watched.
 */

/**
 * Silence after which a request fails: no response head for this long. undici's `headersTimeout` default,
 * which bounds the fetch path. Bodies are bounded by the transport's own `idleTimeoutMs` (60 s) instead: SSE
 * streams by the reader, `text()` reads by their own timer (http-node-response.ts).
 */
const SILENCE_TIMEOUT_MS = 300_000;
/** How often requests are checked against {@link SILENCE_TIMEOUT_MS} (one unref'd timer per client, only while any is watched). */
const SWEEP_MS = 10_000;

/** A request, until its head, that {@link SILENCE_TIMEOUT_MS} applies to. */
export interface Watched {
  /** Date.now() of the last sign of life. */
  at: number;
  expire(error: Error): void;
}

/** Where requests register while the silence timeout applies to them. */
export interface SilenceWatch {
  watch(w: Watched): void;
  unwatch(w: Watched): void;
}

/** One client's watch list and sweep timer; `close()` stops the timer and forgets everything watched. */
export function silenceWatch(): SilenceWatch & { close(): void } {
  const watched = new Set<Watched>();
  let sweeper: ReturnType<typeof setInterval> | undefined;
  const sweep = (): void => {
    const now = Date.now();
    for (const w of watched) {
      if (now - w.at >= SILENCE_TIMEOUT_MS) {
        watched.delete(w);
        w.expire(new Error(`no data from the server for ${SILENCE_TIMEOUT_MS / 1000} s`));
      }
    }
    if (watched.size === 0 && sweeper !== undefined) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };
  return {
    watch(w) {
      watched.add(w);
      if (sweeper === undefined) {
        sweeper = setInterval(sweep, SWEEP_MS);
        sweeper.unref();
      }
    },
    unwatch(w) {
      watched.delete(w);
    },
    close() {
      if (sweeper !== undefined) clearInterval(sweeper);
      sweeper = undefined;
      watched.clear();
    },
  };
}
