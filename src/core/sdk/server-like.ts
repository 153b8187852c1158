/**
 * What `createServer` must return, checked once when a server is connected: Sluice drives the SDK
 * v1 Protocol surface, `connect(transport)` and `close()` (and, when present, the per-kind handlers
 * the dispatcher calls). Anything else fails at the session's start, with a message saying what
 * was expected, instead of a TypeError deep inside the first request.
 */
import { UnsupportedServerError } from '../../errors.js';
import type { SessionContext } from '../options.js';
import type { BridgeTransport } from './bridge-transport.js';
import { wasReleased } from './release.js';

/** What createServer may return: an SDK McpServer or low-level Server (anything with connect/close). */
export interface McpServerLike {
  connect(transport: BridgeTransport): Promise<void>;
  close(): Promise<void>;
}

export type CreateServer = (ctx: SessionContext) => McpServerLike;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v;
  if (typeof (v as { then?: unknown }).then === 'function')
    return 'a Promise (createServer must be synchronous)';
  const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
  return `an object${typeof name === 'string' && name !== 'Object' ? ` of class ${name}` : ''} without connect() and close()`;
}

export function assertDrivable(server: unknown): asserts server is McpServerLike {
  const s = server as Partial<Record<'connect' | 'close', unknown>> | null;
  if (
    typeof s === 'object' &&
    s !== null &&
    typeof s.connect === 'function' &&
    typeof s.close === 'function'
  ) {
    if (!wasReleased(s)) return;
    throw new UnsupportedServerError(
      'createServer returned a server that already served a request and was closed (Sluice empties such a ' +
        "server's handler tables: docs/dual-era.md); return a fresh server per call, or wrap createServer in statelessSafe to share one",
    );
  }
  throw new UnsupportedServerError(
    `createServer must return an official SDK v1 McpServer or Server (@modelcontextprotocol/sdk ^1.32), ` +
      `something with connect(transport) and close(); it returned ${describe(server)}`,
  );
}
