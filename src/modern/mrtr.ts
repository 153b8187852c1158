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
 * - offer an integrity-protected `requestState` (the client is untrusted: §"Security").
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { JsonRpcRequest } from '../jsonrpc/message.js';

export const META_INPUT_RESPONSES = 'dev.sluice/inputResponses';
export const META_REQUEST_STATE = 'dev.sluice/requestState';

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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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

export interface RequestStateCodec {
  /** Signs a JSON value into an opaque string for `requestState`. */
  seal(value: unknown): string;
  /** The value a sealed string carries, or undefined if it was altered, expired or is not one. */
  open(token: string | undefined): unknown;
}

/**
 * HMAC-SHA256 sealed `requestState`: `base64url(JSON {v, exp}).base64url(mac)`. Every instance
 * behind a load balancer must share the secret. Not encrypted: do not put secrets in the state.
 */
export function createRequestStateCodec(options: {
  secret: string | Buffer;
  ttlMs?: number;
  now?: () => number;
}): RequestStateCodec {
  const secret = options.secret;
  if (secret.length < 16) throw new RangeError('requestState secret must be at least 16 bytes');
  const ttl = options.ttlMs ?? 10 * 60_000;
  const now = options.now ?? Date.now;
  const mac = (body: string): Buffer => createHmac('sha256', secret).update(body).digest();
  return {
    seal(value) {
      const body = Buffer.from(JSON.stringify({ v: value, exp: now() + ttl })).toString('base64url');
      return `${body}.${mac(body).toString('base64url')}`;
    },
    open(token) {
      if (typeof token !== 'string' || token.length > 64 * 1024) return undefined;
      const dot = token.indexOf('.');
      if (dot < 0) return undefined;
      const body = token.slice(0, dot);
      const given = Buffer.from(token.slice(dot + 1), 'base64url');
      const want = mac(body);
      if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
      try {
        const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
          v?: unknown;
          exp?: unknown;
        };
        if (typeof parsed.exp !== 'number' || parsed.exp < now()) return undefined;
        return parsed.v;
      } catch {
        return undefined;
      }
    },
  };
}
