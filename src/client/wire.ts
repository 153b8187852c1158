/**
 * Wire helpers: media-type parsing and JSON-RPC classification with plain property checks (no schema
 * validation on the per-message path; see perf-baseline.md, "Failing zod type guards").
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

/**
 * The media type essence of a `Content-Type` value (RFC 9110 §8.3.1): type/subtype, lower-cased, parameters
 * and whitespace dropped. `text/event-stream; charset=utf-8` → `text/event-stream`. Never a substring match:
 * `application/json-seq` is not `application/json`.
 */
export function mediaType(contentType: string | null): string | undefined {
  if (contentType === null) return undefined;
  const semi = contentType.indexOf(';');
  const essence = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  const slash = essence.indexOf('/');
  if (slash <= 0 || slash === essence.length - 1 || /[\s/]/.test(essence.slice(slash + 1))) return undefined;
  return essence;
}
