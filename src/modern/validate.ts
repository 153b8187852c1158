/**
 * The validation order of a modern request, after era routing and before dispatch (MCP 2026-07-28
 * basic/transports/streamable-http §"Server Validation", basic/index §"_meta"). Content-Type (415),
 * Accept (406), auth (401/403), Origin/Host and parse errors are answered earlier by the HTTP layer.
 *
 *  1. `_meta` protocol version not a string            → 400/-32602
 *  2. MCP-Protocol-Version or Mcp-Method present but not matching the body → 400/-32020
 *  3. version not served here                          → 400/-32022 {supported, requested}
 *  4. MCP-Protocol-Version / Mcp-Method missing; Mcp-Name missing, malformed (sentinel) or not
 *     matching the body                                 → 400/-32020
 *  5. method removed by 2026-07-28                     → 404/-32601
 *  6. `clientCapabilities` missing or malformed `_meta` → 400/-32602
 *
 * Later steps need the served server: `Mcp-Param-*` (see param-headers.ts) and the capability gate.
 */

import { decodeHeaderValue, trimOws } from '../http/param-headers.js';
import { isImplementation } from '../jsonrpc/initialize-params.js';
import type { JsonRpcRequest } from '../jsonrpc/message.js';
import { isPlainObject as isObject } from '../jsonrpc/message.js';
import {
  LOG_LEVELS,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  MODERN_VERSIONS,
  NAMED_METHODS,
  REMOVED_METHODS,
} from './constants.js';
import { type ModernRefusal, ModernRefusals } from './refusal.js';

/** What a valid modern request declared about itself. */
export interface ModernMeta {
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo: { name: string; version: string; [k: string]: unknown } | undefined;
  /** The level asked for with `io.modelcontextprotocol/logLevel`; undefined = no log messages. */
  logLevel: string | undefined;
}

export type HeaderLookup = (lowerCaseName: string) => string | undefined;

function quote(s: string): string {
  return JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}…` : s);
}

export function validateModern(
  req: JsonRpcRequest,
  header: HeaderLookup,
  supported: readonly string[] = MODERN_VERSIONS,
): ModernRefusal | ModernMeta {
  const id = req.id;
  const meta = (req.params?.['_meta'] ?? {}) as Record<string, unknown>;
  // 1. The field decided the era; a non-string value is a malformed _meta.
  const version = meta[META_PROTOCOL_VERSION];
  if (typeof version !== 'string' || version.length === 0) {
    return ModernRefusals.invalidMeta(id, `_meta["${META_PROTOCOL_VERSION}"] must be a non-empty string`);
  }
  // 2. Headers that are present must agree with the body before anything else is judged (the
  // official SDK classifies on this); missing ones are refused after the version check.
  const hv = header('mcp-protocol-version');
  if (hv !== undefined && trimOws(hv) !== version) {
    return ModernRefusals.headerMismatch(
      id,
      `MCP-Protocol-Version header ${quote(trimOws(hv))} does not match _meta version ${quote(version)}`,
    );
  }
  const hm = header('mcp-method');
  if (hm !== undefined && trimOws(hm) !== req.method) {
    return ModernRefusals.headerMismatch(
      id,
      `Mcp-Method header ${quote(trimOws(hm))} does not match body method ${quote(req.method)}`,
    );
  }
  // 3.
  if (!supported.includes(version))
    return ModernRefusals.unsupportedVersion(id, version.slice(0, 64), supported);
  // 4. Required headers, and Mcp-Name (values case-sensitive, surrounding whitespace ignored).
  if (hv === undefined)
    return ModernRefusals.headerMismatch(id, 'the MCP-Protocol-Version header is required');
  if (hm === undefined) return ModernRefusals.headerMismatch(id, 'the Mcp-Method header is required');
  const field = NAMED_METHODS[req.method];
  const bodyName = field === undefined ? undefined : req.params?.[field];
  if (typeof bodyName === 'string') {
    const hn = header('mcp-name');
    if (hn === undefined)
      return ModernRefusals.headerMismatch(id, `the Mcp-Name header is required for ${req.method}`);
    const d = decodeHeaderValue(hn);
    if (!d.ok) return ModernRefusals.headerMismatch(id, `Mcp-Name header ${d.reason}`);
    if (d.value !== bodyName) {
      return ModernRefusals.headerMismatch(
        id,
        `Mcp-Name header ${quote(d.value)} does not match body value ${quote(bodyName)}`,
      );
    }
  }
  // 5.
  if (REMOVED_METHODS.has(req.method)) return ModernRefusals.methodNotFound(id, req.method);
  // 6. clientInfo is only SHOULD (basic/index §"_meta"): absent is fine, malformed is not.
  const caps = meta[META_CLIENT_CAPABILITIES];
  if (!isObject(caps)) {
    return ModernRefusals.invalidMeta(id, `_meta["${META_CLIENT_CAPABILITIES}"] must be an object`);
  }
  const info = meta[META_CLIENT_INFO];
  if (info !== undefined && !isImplementation(info)) {
    return ModernRefusals.invalidMeta(id, `_meta["${META_CLIENT_INFO}"] must have a string name and version`);
  }
  const level = meta[META_LOG_LEVEL];
  if (level !== undefined && !(typeof level === 'string' && LOG_LEVELS.includes(level))) {
    return ModernRefusals.invalidMeta(
      id,
      `_meta["${META_LOG_LEVEL}"] must be one of ${LOG_LEVELS.join(', ')}`,
    );
  }
  return new ValidMeta(version, caps, info, level as string | undefined);
}

/**
 * A class, not an object literal: V8 pretenured the literal under a server per request, and dead in
 * the old generation it kept the request's parsed `_meta` alive through every scavenge (see
 * PostRequest in core/pipeline/route.ts).
 */
class ValidMeta implements ModernMeta {
  readonly protocolVersion: string;
  readonly clientCapabilities: Record<string, unknown>;
  readonly clientInfo: ModernMeta['clientInfo'];
  readonly logLevel: string | undefined;
  constructor(
    protocolVersion: string,
    clientCapabilities: Record<string, unknown>,
    clientInfo: ModernMeta['clientInfo'],
    logLevel: string | undefined,
  ) {
    this.protocolVersion = protocolVersion;
    this.clientCapabilities = clientCapabilities;
    this.clientInfo = clientInfo;
    this.logLevel = logLevel;
  }
}

export function isRefusal(v: ModernRefusal | ModernMeta): v is ModernRefusal {
  return 'status' in v;
}
