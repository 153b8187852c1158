/**
 * DELETE: the client ends its session (2025-11-25 basic/transports §"Session Management").
 * Afterwards the id gets 404. Requests still open are answered 404 too, so a client that was
 * waiting learns the session is gone.
 */
import type { AuthResult } from '../options.js';
import { sendRefusal } from '../pipeline/refusal.js';
import type { Headers, RequestHead, ResponseSink } from '../pipeline/sink.js';
import { Session } from './session.js';
import type { Sessions } from './sessions.js';

export function handleDelete(
  reg: Sessions,
  head: RequestHead,
  auth: AuthResult | undefined,
  sink: ResponseSink,
  headers: Headers,
): void {
  const found = reg.lookup(head, auth);
  if (!(found instanceof Session)) {
    sendRefusal(sink, found, headers);
    return;
  }
  found.end('delete');
  sink.respond(204, headers, '');
}
