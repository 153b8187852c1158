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
  let immediate: ReturnType<typeof setImmediate> | undefined;
  const timer = setTimeout(() => {
    immediate = setImmediate(strike);
  }, ms);
  return {
    clear: () => {
      clearTimeout(timer);
      if (immediate !== undefined) clearImmediate(immediate);
    },
  };
}
