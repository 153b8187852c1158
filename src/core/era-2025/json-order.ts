/**
 * JSON-mode ordering across two connections: a request answered with one JSON body whose related
 * messages went out on the standalone GET stream must not overtake them (clients stop listening for
 * a request's progress once its response is in). The exchange holds its answer on this wait.
 */
import type { EventStream } from '../stream/event-stream.js';

/**
 * How long a json answer waits for its related notifications to leave on the standalone stream
 * when that stream is away (reconnecting): a few reconnection delays, then it is answered anyway.
 */
export function relatedWaitMs(retryMs: number): number {
  return Math.max(2000, 3 * retryMs);
}

/** Settle time per byte of related frames sent on the GET connection, and its bound (see standaloneDelivered). */
const SETTLE_BYTES_PER_MS = 1024;
const SETTLE_MAX_MS = 250;

/**
 * Holds a json answer until its related frames on the standalone stream have left (see
 * EventStream.whenDelivered), then for a settle time that grows with their bytes. Two connections
 * have no common order: a client reads a socket ~64 KiB per event-loop turn, so a response that
 * leaves right after a large burst on the GET connection is still read first, and a client also
 * needs time to process each message. The settle gives it 1 ms per KiB of the burst sent in the
 * last second (the SDK client handles ~2,000 progress events of 130 B in 20–60 ms), bounded at
 * SETTLE_MAX_MS. Best effort across two connections; the POST stream (auto/sse) has exact order.
 * If the GET connection that carried the frames is cut before the settle ends, what it held may
 * never have reached the client (a proxy drops what it had buffered): the answer then waits for
 * the client's resume to bring those frames again, all within relatedWaitMs.
 */
export function standaloneDelivered(
  s: EventStream,
  seq: number,
  bytes: number,
  retryMs: number,
): Promise<void> {
  const settle = Math.min(SETTLE_MAX_MS, 1 + Math.ceil(bytes / SETTLE_BYTES_PER_MS));
  return new Promise((resolve) => {
    let over = false;
    const finish = (): void => {
      if (over) return;
      over = true;
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(finish, relatedWaitMs(retryMs));
    t.unref?.();
    const attempt = (): void => {
      void (s.whenDelivered(seq) ?? Promise.resolve()).then(() => {
        if (over) return;
        const carrier = s.connection;
        setTimeout(() => {
          if (over) return;
          if (s.attached && s.connection === carrier) finish();
          else attempt();
        }, settle).unref?.();
      });
    };
    attempt();
  });
}
