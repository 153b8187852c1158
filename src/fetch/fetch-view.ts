/**
 * RequestView over a web Request. `headers` is built on first use only (most requests never read
 * it: only `authenticate` and handlers' `requestInfo` do); Headers already lower-cases names and
 * joins repeats with ", ".
 */
import type { BodyResult, RequestView, ViewHeaders } from '../core/pipeline/request-view.js';

export interface FetchInfo {
  /** The peer's address, if the runtime tells it (Deno: info.remoteAddr.hostname; Bun: server.requestIP). */
  remoteAddress?: string | undefined;
}

export function fetchView(request: Request, loopback: boolean, info?: FetchInfo): RequestView {
  const h = request.headers;
  let record: ViewHeaders | undefined;
  return {
    method: request.method,
    // Parsed on first use only: the core never reads it (handlers' request info may).
    get url(): string {
      const u = new URL(request.url);
      return u.pathname + u.search;
    },
    get headers(): ViewHeaders {
      if (record === undefined) {
        const r: Record<string, string> = {};
        h.forEach((value, name) => {
          r[name] = value;
        });
        record = r;
      }
      return record;
    },
    header: (name) => h.get(name) ?? undefined,
    readBody: (limit) => readBody(request, limit),
    remoteAddress: info?.remoteAddress,
    loopback,
  };
}

/**
 * Reads the body with a byte limit, checked against Content-Length first and against the bytes as
 * they arrive. Invalid UTF-8 is refused ("JSON-RPC messages MUST be UTF-8 encoded",
 * basic/transports), as on the Node binding.
 */
/** One strict decoder: without `stream` each decode() is complete and leaves no state behind. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export async function readBody(request: Request, limit: number): Promise<BodyResult> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) return { ok: false, reason: 'too-large' };
  const body = request.body;
  if (body === null) return { ok: true, text: '' };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        reader.cancel().catch(() => {});
        return { ok: false, reason: 'too-large' };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, reason: 'aborted' };
  }
  let bytes: Uint8Array;
  if (chunks.length === 1) bytes = chunks[0] as Uint8Array;
  else {
    bytes = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.byteLength;
    }
  }
  try {
    return { ok: true, text: UTF8.decode(bytes) };
  } catch {
    return { ok: false, reason: 'invalid-utf8' };
  }
}
