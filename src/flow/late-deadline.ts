/**
 * A deadline that strikes one loop turn after its time. Node runs due timers before it reads
 * sockets, so when the process itself stalled past a deadline (a long collection, starved of CPU on
 * a busy host) an answer that came in time, still unread in its socket, would lose to the deadline:
 * the process would blame a peer for its own stall. Struck from `setImmediate` instead, the
 * deadline runs after the loop's I/O phase has read what arrived; what is still missing then is
 * late by the peer. On time it costs one immediate, and nothing when cleared first.
 */
export interface LateDeadline {
  clear(): void;
}

export function lateDeadline(strike: () => void, ms: number): LateDeadline {
  return afterReads(strike, ms, { credit: false, unref: false });
}

/** A repeating {@link lateDeadline}: see {@link lateInterval}. */
export interface LateInterval {
  clear(): void;
}

/**
 * Runs `tick` every `periodMs`, each time after the loop's next read of the sockets (as a late
 * deadline strikes), and tells it how many milliseconds its timer fired late by: the time this process
 * was stalled, which a sweep must not count against its peers (a request that came in during the
 * stall may sit in a connection not yet accepted, read only a loop turn after the accept; the next
 * tick, on time, sees it). The timer is unref'd: it keeps no process alive.
 */
export function lateInterval(tick: (lateMs: number) => void, periodMs: number): LateInterval {
  let last = performance.now();
  let immediate: ReturnType<typeof setImmediate> | undefined;
  const timer = setInterval(() => {
    const now = performance.now();
    const lateMs = Math.max(0, now - last - periodMs);
    last = now;
    immediate ??= setImmediate(() => {
      immediate = undefined;
      tick(lateMs);
    });
  }, periodMs);
  timer.unref?.();
  return {
    clear: () => {
      clearInterval(timer);
      if (immediate !== undefined) clearImmediate(immediate);
    },
  };
}

/**
 * Lateness below this is a timer's ordinary jitter on a busy loop, not a stall: a deadline that waited
 * it again could chase its own small delays.
 */
const STALL_MIN_MS = 20;

/**
 * A {@link lateDeadline} for a wait on a peer that reaches this process on a new connection (a client
 * resuming a stream): when its timer fires late by a stall of this process, it waits that long again
 * before it strikes, as {@link lateInterval}'s tick does not count it. A connection that came in during
 * the stall is accepted in the first loop turn after it and read only in a later one, so striking
 * after one read (all `lateDeadline` does) would still blame the peer. The credit is given once: on a
 * loop that runs every timer late (a busy server), waiting each lateness again would never strike.
 * On time, or late by less than STALL_MIN_MS, it strikes as `lateDeadline` does. The timer is
 * unref'd: it keeps no process alive.
 */
export function creditedDeadline(strike: () => void, ms: number): LateDeadline {
  return afterReads(strike, ms, { credit: true, unref: true });
}

/**
 * Both deadlines: `strike` from an immediate after its timer; with `credit`, a timer late by
 * STALL_MIN_MS or more first waits its lateness once more.
 */
function afterReads(strike: () => void, ms: number, how: { credit: boolean; unref: boolean }): LateDeadline {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let immediate: ReturnType<typeof setImmediate> | undefined;
  const arm = (wait: number, credit: boolean): void => {
    // Only a credited wait reads the clock: a plain deadline (a hop's connect) never needs its lateness.
    const due = credit ? performance.now() + wait : 0;
    timer = setTimeout(() => {
      timer = undefined;
      const lateMs = credit ? performance.now() - due : 0;
      if (lateMs >= STALL_MIN_MS) arm(lateMs, false);
      else immediate = setImmediate(strike);
    }, wait);
    if (how.unref) timer.unref?.();
  };
  arm(ms, how.credit);
  return {
    clear: () => {
      if (timer !== undefined) clearTimeout(timer);
      if (immediate !== undefined) clearImmediate(immediate);
      timer = undefined;
      immediate = undefined;
    },
  };
}
