/**
 * The OpenTelemetry MCP semantic conventions' server metrics, kept beside Sluice's own so that
 * `/metrics` carries them in Prometheus form without an OpenTelemetry SDK:
 * `mcp.server.operation.duration` → `mcp_server_operation_duration_seconds` and
 * `mcp.server.session.duration` → `mcp_server_session_duration_seconds` (the OpenTelemetry →
 * Prometheus name mapping: dots to underscores, unit suffix). Every label value is bounded: methods
 * MCP defines (else `other`), at most MAX_TOOLS tool names (later ones share `_other`), JSON-RPC
 * error codes in the reserved range (else `_other`), protocol revisions Sluice knows (else `other`).
 */
import { MODERN_VERSIONS } from '../../modern/constants.js';
import { DURATION_BUCKETS, Histogram } from './histogram.js';
import { isMcpRequestMethod } from './methods.js';

/** Distinct `gen_ai_tool_name` values kept per endpoint. */
export const MAX_TOOLS = 64;
export const OTHER_TOOL = '_other';

const MODERN_METHODS: ReadonlySet<string> = new Set([
  'server/discover',
  'subscriptions/listen',
  'tasks/update',
]);
const KNOWN_VERSIONS: ReadonlySet<string> = new Set([
  '2024-11-05',
  '2025-03-26',
  '2025-06-18',
  '2025-11-25',
  ...MODERN_VERSIONS,
]);
/** Session durations: from seconds to a day. */
const SESSION_BUCKETS = [1, 10, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400] as const;

export function methodName(method: string): string {
  return isMcpRequestMethod(method) || MODERN_METHODS.has(method) ? method : 'other';
}

export function versionLabel(version: string | undefined): string {
  if (version === undefined) return '';
  return KNOWN_VERSIONS.has(version) ? version : 'other';
}

/** `error.type` as a label: '', `tool_error`, `cancelled`, an exception class, or a JSON-RPC code. */
export function errorLabel(errorType: string | undefined): string {
  if (errorType === undefined) return '';
  if (errorType === 'tool_error' || errorType === 'cancelled' || errorType === '_OTHER') return errorType;
  const code = Number(errorType);
  // JSON-RPC 2.0 §5.1 reserves -32768..-32000; a server's own codes outside it are lumped together.
  if (Number.isInteger(code) && code >= -32768 && code <= -32000) return errorType;
  return '_other';
}

export interface OperationKey {
  method: string;
  tool: string;
  error: string;
  version: string;
}

export class SemconvMetrics {
  /** Keyed by the joined label values. */
  readonly operations = new Map<string, { key: OperationKey; h: Histogram }>();
  readonly sessions = new Map<string, Histogram>();
  readonly #tools = new Set<string>();

  toolLabel(name: string | undefined): string {
    if (name === undefined) return '';
    if (this.#tools.has(name)) return name;
    if (this.#tools.size >= MAX_TOOLS) return OTHER_TOOL;
    this.#tools.add(name);
    return name;
  }

  operation(
    method: string,
    tool: string | undefined,
    errorType: string | undefined,
    version: string | undefined,
    seconds: number,
  ): void {
    const key: OperationKey = {
      method: methodName(method),
      tool: this.toolLabel(tool),
      error: errorLabel(errorType),
      version: versionLabel(version),
    };
    const k = `${key.method}\u0000${key.tool}\u0000${key.error}\u0000${key.version}`;
    let e = this.operations.get(k);
    if (e === undefined) {
      e = { key, h: new Histogram(DURATION_BUCKETS) };
      this.operations.set(k, e);
    }
    e.h.observe(seconds);
  }

  session(version: string | undefined, seconds: number): void {
    const v = versionLabel(version);
    let h = this.sessions.get(v);
    if (h === undefined) {
      h = new Histogram(SESSION_BUCKETS);
      this.sessions.set(v, h);
    }
    h.observe(seconds);
  }
}
