/**
 * What a v1-era server's answers lack on a modern request, added on the way out:
 * - `resultType` on every result (MUST, schema 2026-07-28 `Result`), "complete" unless set;
 * - `_meta["io.modelcontextprotocol/serverInfo"]` (SHOULD, basic/index §"_meta");
 * - `ttlMs` and `cacheScope` on cacheable results (MUST, schema `CacheableResult`);
 * and error codes the revision retired mapped to their successors: -32002 (resource not found)
 * becomes -32602 with `data.uri` (basic/index §"Error Codes"). The HTTP status follows the code:
 * -32601 is 404 and -32021 is 400 while the answer is not yet committed (streamable-http
 * §"Protocol Version Header"); every other error stays in-band on 200.
 */
import { JsonRpcCode } from '../jsonrpc/codes.js';
import type { JsonRpcError, JsonRpcRequest, JsonRpcResult } from '../jsonrpc/message.js';
import { CACHEABLE_METHODS, META_SERVER_INFO, ModernCode } from './constants.js';

/** Defaults for results the server did not mark: immediately stale, never shared across principals. */
const DEFAULT_TTL_MS = 0;
const DEFAULT_CACHE_SCOPE = 'private';

const RESOURCE_NOT_FOUND_V1 = -32002;
const URL_ELICITATION_REQUIRED_V1 = -32042;

/**
 * A copy of `src`'s own enumerable string-keyed properties, what `{ ...src }` gives for the JSON
 * these objects are (symbol keys are never serialized), without its cost here: on Node 20's V8, a
 * property added to a spread copy (or after a spread in a literal) takes a slow path of 1-2 µs per
 * object, against tens of ns for an object filled key by key (docs/benchmarks.md, section (h)).
 * `__proto__` stays an own property, as with the spread, instead of setting the copy's prototype.
 */
export function plainCopy(src: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(src)) {
    const v = (src as Record<string, unknown>)[k];
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

export function stampResult(
  r: JsonRpcResult,
  method: string,
  serverInfo: { name: string; version: string } | undefined,
): JsonRpcResult {
  const result = plainCopy(r.result);
  if (typeof result['resultType'] !== 'string') result['resultType'] = 'complete';
  // The v1 SDK adds `content: []` to every tool result; an input_required result has none.
  else if (result['resultType'] === 'input_required') {
    const c = result['content'];
    if (Array.isArray(c) && c.length === 0) delete result['content'];
  }
  if (serverInfo !== undefined) {
    const meta = result['_meta'];
    const m: Record<string, unknown> = typeof meta === 'object' && meta !== null ? plainCopy(meta) : {};
    if (m[META_SERVER_INFO] === undefined) m[META_SERVER_INFO] = serverInfo;
    result['_meta'] = m;
  }
  if (CACHEABLE_METHODS.has(method)) {
    const ttl = result['ttlMs'];
    if (!(typeof ttl === 'number' && Number.isFinite(ttl) && ttl >= 0)) result['ttlMs'] = DEFAULT_TTL_MS;
    const scope = result['cacheScope'];
    if (scope !== 'public' && scope !== 'private') result['cacheScope'] = DEFAULT_CACHE_SCOPE;
  }
  return { jsonrpc: '2.0', id: r.id, result };
}

/** The modern spelling of an error answer and the HTTP status it earns while uncommitted. */
export function mapError(e: JsonRpcError, req: JsonRpcRequest): { status: number; error: JsonRpcError } {
  const err = e.error;
  if (err.code === RESOURCE_NOT_FOUND_V1) {
    const uri = req.params?.['uri'];
    const data = typeof err.data === 'object' && err.data !== null ? { ...(err.data as object) } : {};
    return {
      status: 200,
      error: {
        jsonrpc: '2.0',
        id: e.id ?? req.id,
        error: { code: JsonRpcCode.InvalidParams, message: err.message, data: { uri, ...data } },
      },
    };
  }
  if (err.code === URL_ELICITATION_REQUIRED_V1) {
    return {
      status: 200,
      error: {
        jsonrpc: '2.0',
        id: e.id ?? req.id,
        error: { code: JsonRpcCode.InternalError, message: err.message },
      },
    };
  }
  const status =
    err.code === JsonRpcCode.MethodNotFound
      ? 404
      : err.code === ModernCode.MissingRequiredClientCapability
        ? 400
        : 200;
  return { status, error: e };
}
