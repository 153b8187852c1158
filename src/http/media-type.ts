/**
 * Just enough RFC 9110 media-type parsing for MCP, shared by the server (Content-Type of a POST
 * body, the Accept header's media ranges with parameters and q-values), the client (the media type
 * of an answer) and the doctor. Parsed, never substring-matched: `application/jsonx` is not JSON and
 * `text/event-stream;q=0` refuses SSE. Imports nothing, so the browser client can use it.
 */

import { memoByHeader } from './header-memo.js';

/** `type/subtype`, each an RFC 9110 §5.6.2 token. */
const ESSENCE = /^[a-z0-9!#$%&'*+.^_`|~-]+\/[a-z0-9!#$%&'*+.^_`|~-]+$/;

/**
 * The media type essence of a `Content-Type` value (RFC 9110 §8.3.1): type/subtype, lower-cased, parameters
 * and whitespace dropped, or undefined when there is none. `text/event-stream; charset=utf-8` →
 * `text/event-stream`; `application/json-seq` is not `application/json`.
 */
export function mediaType(header: string | null | undefined): string | undefined {
  if (header === null || header === undefined) return undefined;
  const semi = header.indexOf(';');
  const essence = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  return ESSENCE.test(essence) ? essence : undefined;
}

/** Lower-cased `type/subtype` and the value of `charset` (if any) of a Content-Type header. */
export function parseContentType(header: string | undefined): { type: string; charset?: string } | undefined {
  const type = mediaType(header);
  if (type === undefined || header === undefined) return undefined;
  const parts = header.split(';');
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
  return header === undefined ? false : jsonContentType(header);
}

const jsonContentType = memoByHeader((header: string): boolean => {
  const ct = parseContentType(header);
  if (ct === undefined || ct.type !== 'application/json') return false;
  return ct.charset === undefined || ct.charset === 'utf-8' || ct.charset === 'utf8';
});

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
  return header === undefined ? ANY : acceptance(header);
}

/** What a missing Accept header admits (shared and frozen, like every memoized answer). */
const ANY: Acceptance = Object.freeze({ json: true, sse: true });

const acceptance = memoByHeader((header: string): Acceptance => {
  if (header.trim() === '') return ANY;
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
  return Object.freeze({ json: jsonSpec > 0 && jsonQ > 0, sse: sseSpec > 0 && sseQ > 0 });
});

function specificity(range: string, type: string, subtype: string): number {
  if (range === `${type}/${subtype}`) return 3;
  if (range === `${type}/*`) return 2;
  if (range === '*/*') return 1;
  return -1;
}
