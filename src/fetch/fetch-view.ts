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
  return new FetchView(request, loopback, info?.remoteAddress);
}

/**
 * A class, not an object literal with getters: such a literal gets a hidden class of its own per
 * request in V8's old space, pointing at the request's young closures, and every request's
 * objects were then promoted by each scavenge (see server/node-view.ts, where it was measured).
 */
class FetchView implements RequestView {
  readonly method: string;
  readonly remoteAddress: string | undefined;
  readonly loopback: boolean;
  readonly #request: Request;
  #record: ViewHeaders | undefined;
  /** Own functions (not prototype methods): callers may pass `view.header` around on its own. */
  readonly header: (name: string) => string | undefined;
  readonly readBody: (limit: number) => Promise<BodyResult>;

  constructor(request: Request, loopback: boolean, remoteAddress: string | undefined) {
    this.method = request.method;
    this.remoteAddress = remoteAddress;
    this.loopback = loopback;
    this.#request = request;
    const h = request.headers;
    // Made before they are assigned: a function literal assigned to a property is born in V8's old
    // generation and keeps the request alive until the next full collection (core/sdk/bridge-transport.ts,
    // DETACHED, says more).
    const header = (name: string): string | undefined => h.get(name) ?? undefined;
    const body = (limit: number): Promise<BodyResult> => readBody(request, limit);
    this.header = header;
    this.readBody = body;
  }

  /** Parsed on first use only: the core never reads it (handlers' request info may). */
  get url(): string {
    const u = new URL(this.#request.url);
    return u.pathname + u.search;
  }

  get headers(): ViewHeaders {
    if (this.#record === undefined) {
      const r: Record<string, string> = {};
      this.#request.headers.forEach((value, name) => {
        r[name] = value;
      });
      this.#record = r;
    }
    return this.#record;
  }
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
