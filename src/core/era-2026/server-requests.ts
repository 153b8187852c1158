/**
 * A server-to-client request (sampling, elicitation, roots) made while serving a 2026-07-28 request:
 * that era has no stream for one (MCP 2026-07-28 basic/transports §"Receiving Messages": multi-round
 * trips, `input_required` results, replace them), so it fails at once and the tool learns why.
 */
import { JsonRpcCode } from '../../jsonrpc/codes.js';
import { errorResponse, type RequestId } from '../../jsonrpc/message.js';
import type { Dispatcher } from '../sdk/dispatcher.js';

export const SERVER_REQUESTS_UNAVAILABLE =
  'server-to-client requests are not available to 2026-07-28 clients; return an input_required result instead';

/** Answers request `id` with an error on the served server's side; deferred, as the SDK is inside its send(). */
export function failServerRequest(dispatch: Dispatcher | undefined, id: RequestId): void {
  queueMicrotask(() =>
    dispatch?.response(errorResponse(id, JsonRpcCode.ServerError, SERVER_REQUESTS_UNAVAILABLE)),
  );
}
