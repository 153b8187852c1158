/**
 * Which era serves an inbound POST body, decided per request before any session logic (MCP
 * 2026-07-28 basic/versioning §"Backward Compatibility with Initialization-Based Versions": a
 * request carrying modern per-request `_meta` is served statelessly; `initialize` selects legacy
 * semantics). The rows follow the official SDK v2 classifier and the conformance suite:
 *
 * | body                                                   | verdict                        |
 * |--------------------------------------------------------|--------------------------------|
 * | JSON array                                             | legacy; a modern element: 400/-32600 |
 * | response (result/error)                                | legacy                         |
 * | not a JSON-RPC message                                 | legacy (refused there as today)|
 * | notification with the `_meta` field or a modern header | modern (202); header only, with Mcp-Session-Id: the session's (route.ts) |
 * | `initialize` without the field, modern header          | 400/-32020                     |
 * | request with the `_meta` protocolVersion field         | modern                         |
 * | request without the field, modern header               | 400/-32602 naming the keys     |
 * | anything else                                          | legacy                         |
 *
 * GET, DELETE and other methods never reach this: they are legacy session operations.
 */

import { trimOws } from '../http/param-headers.js';
import { type Classified, classify, type JsonRpcRequest } from '../jsonrpc/message.js';
import { FIRST_MODERN_VERSION, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION } from './constants.js';
import { type ModernRefusal, ModernRefusals } from './refusal.js';

export type EraVerdict =
  | { era: 'legacy' }
  | { era: 'modern'; request: JsonRpcRequest }
  | { era: 'modern-notification' }
  | { era: 'refused'; refusal: ModernRefusal };

const LEGACY: EraVerdict = { era: 'legacy' };
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Whether a MCP-Protocol-Version value names a modern revision (known or not). */
export function isModernVersionHeader(v: string | undefined): boolean {
  if (v === undefined) return false;
  const t = trimOws(v);
  return DATE.test(t) && t >= FIRST_MODERN_VERSION;
}

/** Whether a message carries the modern `_meta` protocol-version field. */
export function hasModernMeta(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const params = (v as { params?: unknown }).params;
  if (typeof params !== 'object' || params === null) return false;
  const meta = (params as { _meta?: unknown })._meta;
  return typeof meta === 'object' && meta !== null && META_PROTOCOL_VERSION in meta;
}

/**
 * Classifies a parsed POST body; `versionHeader` is the raw MCP-Protocol-Version value. `single`:
 * the body's own JSON-RPC classification when the caller has it already (not for a batch), so a
 * legacy message is not classified twice. `sessionId`: the request's Mcp-Session-Id, if any.
 */
export function classifyEra(
  body: unknown,
  versionHeader: string | undefined,
  single?: Classified,
  sessionId?: string,
): EraVerdict {
  if (Array.isArray(body)) {
    for (const el of body)
      if (hasModernMeta(el)) return { era: 'refused', refusal: ModernRefusals.modernInBatch() };
    return LEGACY;
  }
  const c = single ?? classify(body);
  if (c.kind === 'invalid' || c.kind === 'response') return LEGACY;
  if (hasModernMeta(c.message)) {
    return c.kind === 'notification' ? { era: 'modern-notification' } : { era: 'modern', request: c.message };
  }
  if (!isModernVersionHeader(versionHeader)) return LEGACY;
  // A notification that only its header makes modern, sent on a session, is the session's: its
  // lookup refuses the header (2025-11-25 basic/transports §"Protocol Version Header": 400), where
  // the 2026-07-28 era would accept it with a 202 and drop it (a lost notifications/cancelled).
  if (c.kind === 'notification') return sessionId === undefined ? { era: 'modern-notification' } : LEGACY;
  const req = c.message;
  if (req.method === 'initialize') {
    return {
      era: 'refused',
      refusal: ModernRefusals.headerMismatch(
        req.id,
        `initialize is a legacy handshake, but MCP-Protocol-Version names ${trimOws(versionHeader ?? '').slice(0, 32)}`,
      ),
    };
  }
  return {
    era: 'refused',
    refusal: ModernRefusals.invalidMeta(
      req.id,
      `MCP-Protocol-Version names a 2026-07-28+ revision but params._meta lacks "${META_PROTOCOL_VERSION}" and "${META_CLIENT_CAPABILITIES}"`,
    ),
  };
}
