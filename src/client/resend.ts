/**
 * Re-sending: a request whose stream was lost for good is POSTed again under a new wire id when it is idempotent
 * (at most `maxReconnectAttempts` times, at least once), and failed otherwise.
 */

import type { PendingRequest, TransportContext } from './context.js';
import type { SluiceClientError } from './errors.js';
import { toClientError } from './http.js';
import { failRequest } from './inbound.js';
import { aliasedCopy, postMessage } from './post.js';
import type { RequestId } from './wire.js';

/**
 * A stream owing `entry`'s response was lost for good: re-send it when idempotent, else fail it.
 */
export function abandonRequest(t: TransportContext, entry: PendingRequest, error: SluiceClientError): void {
  const id = entry.message.id;
  if (t.pending.get(id) !== entry) return;
  entry.stream = undefined;
  if (!entry.idempotent || entry.resends >= Math.max(1, t.options.maxReconnectAttempts) || t.closed) {
    failRequest(t, id, error);
    return;
  }
  entry.resends++;
  // A new wire id: the old one may still be known to the server (R1–R3 forbid reusing an id in a session).
  const copy = aliasedCopy(t, entry);
  postMessage(t, copy, 'request', entry).catch((cause: unknown) => {
    t.aliases.delete(copy.id as RequestId);
    failRequest(t, id, toClientError(cause));
  });
}
