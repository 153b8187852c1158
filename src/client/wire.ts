/**
 * Wire helpers: JSON-RPC classification with plain property checks (no schema validation on the
 * per-message path: a failing zod guard builds an error object, far dearer than the check itself).
 * Media types are parsed by src/http/media-type.ts.
 */

export type RequestId = string | number;

/** A JSON-RPC message as the transport sees it: only the fields it routes on are typed. */
export interface WireMessage {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}

export type MessageKind = 'request' | 'notification' | 'response' | 'invalid';

/**
 * Classifies by the presence of discriminating members (JSON-RPC 2.0 §4, §5):
 * `method` + `id` = request, `method` alone = notification, `result`/`error` + `id` = response.
 */
export function classify(message: unknown): MessageKind {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return 'invalid';
  const m = message as WireMessage;
  if (typeof m.method === 'string') {
    if (m.id === undefined) return 'notification';
    return typeof m.id === 'string' || typeof m.id === 'number' ? 'request' : 'invalid';
  }
  if (
    (m.result !== undefined || m.error !== undefined) &&
    (typeof m.id === 'string' || typeof m.id === 'number')
  ) {
    return 'response';
  }
  return 'invalid';
}
