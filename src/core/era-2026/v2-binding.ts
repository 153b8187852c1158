/**
 * Serving a 2026-07-28 request with an SDK v2 server (`@modelcontextprotocol/server` 2.x).
 *
 * A v2 `Server` speaks the era it is bound to. Bound to nothing (a connection that skipped
 * `initialize`), it answers as a 2025-era server: an `input_required` result is then turned into real
 * server-to-client requests by v2's own legacy shim, which a 2026 client can never answer (MCP
 * 2026-07-28 basic/patterns/mrtr: the server returns the result, the client retries). SDK v2's
 * own HTTP entry binds each per-request instance to the request's revision before dispatch; its
 * helper for that is not exported, so Sluice does the same with the one field the binding is —
 * the negotiated protocol version — and checks the result through the server's own era probe. If a
 * later SDK moves either, binding reports false and the request is served unbound, as before
 * (results stamped by Sluice; only MRTR from a v2 tool is lost), never half-bound.
 *
 * A bound v2 server checks the `_meta` envelope on every request it is handed (so Sluice's own
 * internal requests carry the client's, see `envelopeOf`) and no longer answers `initialize`, so
 * `server/discover` and `subscriptions/listen` — which Sluice answers from an internal initialize —
 * are served by an unbound instance.
 */
import { META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION } from '../../modern/constants.js';
import type { ModernMeta } from '../../modern/validate.js';

/** The v2 `Server` fields involved (SDK v2 2.4: Protocol `_negotiatedProtocolVersion`, Server `_servedModernEra()`). */
interface V2ServerInternals {
  _negotiatedProtocolVersion?: unknown;
  _supportedProtocolVersions?: unknown;
  _servedModernEra: () => unknown;
  _clientCapabilities?: unknown;
  _clientVersion?: unknown;
}

/** Requests Sluice answers from the served server's initialize result (see the module note). */
export const UNBOUND_METHODS: ReadonlySet<string> = new Set(['server/discover', 'subscriptions/listen']);

function v2Internals(server: unknown): V2ServerInternals | undefined {
  // McpServer wraps the low-level Server as `.server` (both majors).
  const inner = ((server as { server?: unknown }).server ?? server) as Partial<V2ServerInternals>;
  return typeof inner?._servedModernEra === 'function' ? (inner as V2ServerInternals) : undefined;
}

/**
 * Binds a connected SDK v2 server to `revision`; true when the server now serves that era. False
 * for an SDK v1 server (it has no eras: Sluice's adapter serves it) or a v2 that refused the binding.
 * `identity`: the request's client capabilities and info, for `getClientCapabilities()` and
 * `getClientVersion()` in its handlers (as v2's own entry seeds them); omitted for a shared server.
 */
export function bindModern(server: unknown, revision: string, identity?: ModernMeta): boolean {
  const s = v2Internals(server);
  if (s === undefined) return false;
  const before = s._negotiatedProtocolVersion;
  s._negotiatedProtocolVersion = revision;
  let bound = false;
  try {
    bound = s._servedModernEra() === true;
  } catch {
    bound = false;
  }
  if (!bound) {
    s._negotiatedProtocolVersion = before;
    return false;
  }
  // Its version errors and discover answer then name the revision it serves.
  const supported = s._supportedProtocolVersions;
  if (Array.isArray(supported) && !supported.includes(revision)) {
    s._supportedProtocolVersions = [...(supported as unknown[]), revision];
  }
  if (identity !== undefined) {
    s._clientCapabilities = identity.clientCapabilities;
    if (identity.clientInfo !== undefined) s._clientVersion = identity.clientInfo;
  }
  return true;
}

/** The `_meta` envelope a bound server requires on a request Sluice sends it on the client's behalf. */
export function envelopeOf(meta: ModernMeta): Record<string, unknown> {
  return {
    [META_PROTOCOL_VERSION]: meta.protocolVersion,
    [META_CLIENT_CAPABILITIES]: meta.clientCapabilities,
    ...(meta.clientInfo === undefined ? {} : { [META_CLIENT_INFO]: meta.clientInfo }),
  };
}

/** The edge classification a bound v2 server expects with each request (its `MessageExtraInfo.classification`). */
export function classificationOf(revision: string): { era: 'modern'; revision: string } {
  return { era: 'modern', revision };
}
