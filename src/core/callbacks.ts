/**
 * What the application's callbacks and Sluice exchange, apart from the options themselves: the
 * answer modes, what `authenticate` returns (a principal or a denial), what `createServer` and the
 * session hooks learn, and the logger. Kept apart from options.ts (which resolves and validates)
 * so the eras and the SDK seam read these shapes without the validation code.
 */

export type ResponseMode = 'auto' | 'json' | 'sse';

/** What `authenticate` returns for an accepted request. */
export interface AuthResult {
  /** Who the caller is; a session is bound to the principal that created it. */
  principal: string;
  /** Epoch ms when the credential expires; long-lived streams end then. */
  expiresAt?: number | undefined;
  /**
   * How often a long-lived stream this credential opened re-runs `authenticate` (closing on a
   * refusal): for credentials whose validity can change before they expire, e.g. an introspected
   * token that may be revoked. The server option `revalidateMs` applies when absent; with both,
   * the shorter. Not a positive number: ignored.
   */
  revalidateMs?: number | undefined;
  /** The scopes the credential grants; handlers see them as `extra.authInfo.scopes`. */
  scopes?: readonly string[] | undefined;
  /**
   * Runs for every JSON-RPC request of a POST once the body is parsed, before anything is
   * dispatched (e.g. a per-tool scope map); a denial refuses the whole POST and changes nothing.
   */
  authorize?: ((method: string, params: unknown) => AuthDenial | undefined) | undefined;
  /**
   * Headers every answer to this request carries (lower-case names), e.g. the next DPoP nonce
   * (`dpop-nonce`, RFC 9449 §9). Not for the ones Sluice sets itself (content type, session id…).
   */
  headers?: Readonly<Record<string, string>> | undefined;
}

/**
 * A refusal `authenticate` (or `AuthResult.authorize`) decides itself, with its own status, stable
 * reason and headers: a 401/403 Bearer challenge (RFC 6750 §3), a 400 for a malformed request, or a
 * 503 + Retry-After when the verifier cannot reach its authorization server.
 */
export interface AuthDenial {
  status: 400 | 401 | 403 | 503;
  /** Stable machine-readable reason, sent as error.data.reason. */
  reason: string;
  message: string;
  /** E.g. `www-authenticate`, `retry-after` (lower-case names). */
  headers?: Readonly<Record<string, string>> | undefined;
}

/** An `authenticate` answer that is a denial rather than an accepted principal. */
export function isAuthDenial(r: unknown): r is AuthDenial {
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof (r as { principal?: unknown }).principal !== 'string' &&
    typeof (r as { status?: unknown }).status === 'number'
  );
}

/** What `createServer` learns about the session it serves. */
export interface SessionContext {
  /** The session id, or undefined in stateless mode and for 2026-07-28 requests. */
  sessionId: string | undefined;
  principal: string | undefined;
  /**
   * 'modern' when the server is built for one 2026-07-28 request (stateless, per-request `_meta`);
   * absent for legacy sessions.
   */
  era?: 'legacy' | 'modern';
  /** Modern only: the request's protocol version, client capabilities and client info (`_meta`). */
  protocolVersion?: string;
  clientCapabilities?: Record<string, unknown>;
  clientInfo?: { name: string; version: string; [k: string]: unknown } | undefined;
}

export interface SessionInfo {
  sessionId: string;
  principal: string | undefined;
  protocolVersion: string;
}

export interface Logger {
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}
