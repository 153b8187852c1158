/**
 * The `DELETE` that ends the session on `close()`: bounded by `closeTimeoutMs`, 404 and 405 tolerated. The
 * session id is forgotten once the server has accepted it (2xx, or 404/405: there is no session to end).
 */

import type { TransportContext } from './context.js';
import { HttpStatusError, NetworkError } from './errors.js';
import { describe, discard } from './http.js';
import { Canceller, type HttpResponse, isOk } from './http-client.js';

/** Sends the `DELETE` (see the file comment); throws a `NetworkError` or `HttpStatusError` when it fails. */
export async function deleteSession(t: TransportContext): Promise<void> {
  const { clock, closeTimeoutMs } = t.options;
  const controller = new Canceller();
  const timer = clock.setTimeout(() => controller.abort(), closeTimeoutMs);
  try {
    const headers = await t.headers('application/json, text/event-stream', true, undefined);
    let response: HttpResponse;
    try {
      response = await t.request('DELETE', headers, undefined, controller, true);
    } catch (error) {
      throw new NetworkError(
        controller.aborted
          ? `DELETE did not complete within closeTimeoutMs (${closeTimeoutMs} ms)`
          : `DELETE failed: ${describe(error)}`,
        error,
      );
    }
    await discard(response);
    if (!isOk(response) && response.status !== 405 && response.status !== 404) {
      throw new HttpStatusError('DELETE', response.status, '');
    }
    t.session.forget();
  } finally {
    clock.clearTimeout(timer);
  }
}
