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
