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
    let response: HttpResponse;
    try {
      // Building the headers may await a token provider or an OAuth refresh: bounded by the same timer, or a
      // stuck provider would hold close() forever.
      const headers = await untilAborted(
        t.headers('application/json, text/event-stream', true, undefined),
        controller,
      );
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

/** `work`, or a rejection as soon as `signal` aborts (`work` is then left to settle unobserved). */
function untilAborted<T>(work: Promise<T>, signal: Canceller): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('aborted'));
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.onAbort(onAbort);
    work.then(
      (value) => {
        signal.offAbort(onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.offAbort(onAbort);
        reject(error);
      },
    );
  });
}
