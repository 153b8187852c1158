import type { StoredEvent } from '../../events/event-store.js';
import { encodeResumePrimer } from '../../sse/encode.js';

/**
 * The resume primer: the first bytes of a resumed connection, an event carrying the cursor's own id
 * and no data (basic/transports "Resumability and Redelivery"; a client dispatches nothing for it
 * but keeps the id). It tells a client whose resumed connection dies before the next event that the
 * cursor still holds: the SDK 1.x client gives a POST stream up otherwise. Not when nothing more can
 * come (the stream finished and nothing follows the cursor): that client would reconnect with the
 * same cursor forever (test/integration/get-takeover-bounded.test.ts). One rule for a live stream
 * (event-stream.ts) and a finished one read from the store (era-2025/get.ts).
 */
export function resumePrimer(
  priming: boolean,
  live: boolean,
  replayed: number,
  cursorId: () => string | undefined,
): string {
  if (!priming || (!live && replayed === 0)) return '';
  const id = cursorId();
  return id === undefined ? '' : encodeResumePrimer(id);
}

/**
 * A resumed connection's first bytes: the primer, then every replayed frame; `last` is the seq of
 * the newest one replayed (`from` when none was).
 */
export function replayOpening(
  primer: string,
  events: readonly StoredEvent[],
  from: number,
): { first: string; last: number } {
  let first = primer;
  let last = from;
  for (const e of events) {
    first += e.frame;
    last = e.seq;
  }
  return { first, last };
}
