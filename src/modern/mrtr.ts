/**
 * Multi round-trip requests (MRTR, MCP 2026-07-28 basic/patterns/mrtr): instead of sending its own
 * request to the client, a handler returns `resultType: "input_required"` with `inputRequests`
 * (elicitation, sampling, roots) and/or an opaque `requestState`; the client retries the same call
 * with `inputResponses` and the echoed state.
 *
 * The transport's part:
 * - carry `inputResponses` and `requestState` to the handler. The v1 SDK's request schemas drop
 *   unknown params but keep `_meta`, so Sluice copies both into `_meta` under its own keys;
 *   handlers read them with `mrtrInput(extra)`.
 * - refuse to send `inputRequests` the client did not declare a capability for: the answer becomes
 *   400/-32021 with `data.requiredCapabilities` (§"Server duties"; basic/index §"Error Codes").
 * - allow `input_required` only on the methods that may carry it.
 * - offer an integrity-protected `requestState` (server/request-state.ts; the client is untrusted).
 */
import type { JsonRpcRequest } from '../jsonrpc/message.js';
import { isPlainObject as isObject } from '../jsonrpc/message.js';

import { META_INPUT_RESPONSES, META_REQUEST_STATE } from '../jsonrpc/meta-keys.js';

export { META_INPUT_RESPONSES, META_REQUEST_STATE };

/** Requests whose result may be `input_required` (§"InputRequiredResult"). */
export const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set([
  'tools/call',
  'prompts/get',
  'resources/read',
]);

/** Which client capability each input request needs. */
const CAPABILITY_OF: Readonly<Record<string, string>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** The request with `inputResponses`/`requestState` also under Sluice's `_meta` keys (or itself). */
export function carryMrtr(req: JsonRpcRequest): JsonRpcRequest {
  const p = req.params;
  if (p === undefined || (!('inputResponses' in p) && !('requestState' in p))) return req;
  const meta = isObject(p['_meta']) ? p['_meta'] : {};
  const extra: Record<string, unknown> = {};
  if ('inputResponses' in p) extra[META_INPUT_RESPONSES] = p['inputResponses'];
  if ('requestState' in p) extra[META_REQUEST_STATE] = p['requestState'];
  return { ...req, params: { ...p, _meta: { ...meta, ...extra } } };
}

export interface MrtrInput {
  /** The client's answers, keyed as the previous `inputRequests` were; undefined on a first call. */
  inputResponses: Record<string, unknown> | undefined;
  /** The `requestState` the client echoed (untrusted until verified). */
  requestState: string | undefined;
}

/** Reads what the client sent back, from a handler's `extra` (or anything with `_meta`). */
export function mrtrInput(extra: { _meta?: Record<string, unknown> | undefined } | undefined): MrtrInput {
  const meta = extra?._meta ?? {};
  const r = meta[META_INPUT_RESPONSES];
  const s = meta[META_REQUEST_STATE];
  return { inputResponses: isObject(r) ? r : undefined, requestState: typeof s === 'string' ? s : undefined };
}

/**
 * The capabilities an `input_required` result needs that the client did not declare, as the
 * object -32021 carries (`{sampling: {}}`), or undefined when nothing is missing.
 */
export function missingCapabilities(
  result: Record<string, unknown>,
  clientCapabilities: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const reqs = result['inputRequests'];
  if (!isObject(reqs)) return undefined;
  const missing: Record<string, unknown> = {};
  for (const r of Object.values(reqs)) {
    const method = isObject(r) ? r['method'] : undefined;
    const cap = typeof method === 'string' ? CAPABILITY_OF[method] : undefined;
    if (cap !== undefined && !isObject(clientCapabilities[cap])) missing[cap] = {};
  }
  return Object.keys(missing).length > 0 ? missing : undefined;
}
