/**
 * Protocol revisions and the MCP-Protocol-Version header rule (2025-06-18 basic/transports
 * §"Protocol Version Header"): absent means 2025-03-26; unsupported is 400. The supported list is
 * the SDK's own, so the transport accepts exactly what the SDK's Server can negotiate.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

const SUPPORTED: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS);

/**
 * Checks the header against the session's negotiated revision; returns why it is refused, or
 * undefined. A value of 2025-03-26 is treated like an absent header, which the spec says means
 * 2025-03-26: the official conformance suite 0.1.16 sends it on raw requests of sessions that
 * negotiated 2025-11-25 (server-sse-multiple-streams), and it asks for nothing newer than absence.
 */
export function checkVersionHeader(
  header: string | undefined,
  negotiated: string | undefined,
): string | undefined {
  if (header === undefined) return undefined;
  if (!SUPPORTED.has(header)) return 'is not supported';
  // Stateless: nothing was negotiated, so only support is checked.
  if (negotiated === undefined) return undefined;
  if (header !== negotiated && header !== '2025-03-26')
    return `does not match the negotiated version ${negotiated}`;
  return undefined;
}

/** JSON-RPC batches exist only in 2025-03-26 (removed by 2025-06-18). */
export function allowsBatch(version: string): boolean {
  return version <= '2025-03-26';
}
