/**
 * Just enough RFC 9110 media-type parsing for the MCP endpoint: Content-Type of a POST body and
 * the Accept header's media ranges (with parameters and q-values). Parsed, never substring-matched:
 * `application/jsonx` is not JSON and `text/event-stream;q=0` refuses SSE.
 */

/** Lower-cased `type/subtype` and the value of `charset` (if any) of a Content-Type header. */
export function parseContentType(header: string | undefined): { type: string; charset?: string } | undefined {
  if (header === undefined) return undefined;
  const parts = header.split(';');
  const type = (parts[0] ?? '').trim().toLowerCase();
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type)) return undefined;
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i] ?? '';
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    if (p.slice(0, eq).trim().toLowerCase() === 'charset') {
      return {
        type,
        charset: p
          .slice(eq + 1)
          .trim()
          .replace(/^"|"$/g, '')
          .toLowerCase(),
      };
    }
  }
  return { type };
}

/** True when the body is declared as JSON in UTF-8 (MCP: "JSON-RPC messages MUST be UTF-8 encoded"). */
export function isJsonContentType(header: string | undefined): boolean {
  const ct = parseContentType(header);
  if (ct === undefined || ct.type !== 'application/json') return false;
  return ct.charset === undefined || ct.charset === 'utf-8' || ct.charset === 'utf8';
}

/** Which of the two MCP answer types an Accept header admits. */
export interface Acceptance {
  json: boolean;
  sse: boolean;
}

/**
 * Evaluates an Accept header against application/json and text/event-stream. A missing header
 * admits everything (RFC 9110 §12.5.1). The most specific matching range decides, and q=0 refuses.
 */
export function parseAccept(header: string | undefined): Acceptance {
  if (header === undefined || header.trim() === '') return { json: true, sse: true };
  // Best match per target: specificity 3 = exact, 2 = type/*, 1 = */*; -1 = no match yet.
  let jsonSpec = -1;
  let jsonQ = 0;
  let sseSpec = -1;
  let sseQ = 0;
  for (const range of header.split(',')) {
    const params = range.split(';');
    const mt = (params[0] ?? '').trim().toLowerCase();
    let q = 1;
    for (let i = 1; i < params.length; i++) {
      const p = (params[i] ?? '').trim().toLowerCase();
      if (p.startsWith('q=')) {
        const v = Number(p.slice(2));
        q = Number.isFinite(v) && v >= 0 && v <= 1 ? v : 0;
      }
    }
    const js = specificity(mt, 'application', 'json');
    if (js > jsonSpec) {
      jsonSpec = js;
      jsonQ = q;
    }
    const ss = specificity(mt, 'text', 'event-stream');
    if (ss > sseSpec) {
      sseSpec = ss;
      sseQ = q;
    }
  }
  return { json: jsonSpec > 0 && jsonQ > 0, sse: sseSpec > 0 && sseQ > 0 };
}

function specificity(range: string, type: string, subtype: string): number {
  if (range === `${type}/${subtype}`) return 3;
  if (range === `${type}/*`) return 2;
  if (range === '*/*') return 1;
  return -1;
}
