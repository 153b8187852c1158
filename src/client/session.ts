/**
 * The client's view of its MCP session (2025-11-25 basic/transports §"Session Management"): the id
 * the server assigned, the negotiated revision, the `initialize` params kept for a transparent
 * re-initialization, and whether the server is known to have ended it. Read through getters;
 * changed only through the methods below, each named for the event that causes it.
 */
import { MalformedMessageError } from './errors.js';

/** Wait before the first new attempt after a failed re-initialization; doubles per failure in a row. */
export const REINIT_BACKOFF_MS = 250;
/** The longest wait between re-initialization attempts (a `Retry-After` up to `maxRetryAfterMs` may exceed it). */
export const REINIT_BACKOFF_MAX_MS = 5_000;

export class ClientSession {
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  #initializeParams: unknown;
  #gone = false;
  #reinitializing: Promise<void> | undefined;
  #reinitCount = 0;
  /** Replacement initializes refused or failed in a row since the session was lost (0: not lost). */
  #replaceFailures = 0;
  /** Clock time before which the next replacement is not attempted (backoff). */
  #retryAt = 0;
  /** The id of the session being replaced, reported in `onsessionreset` once a replacement succeeds. */
  #replacedId: string | undefined;

  constructor(sessionId: string | undefined) {
    this.#sessionId = sessionId;
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }
  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }
  /** `params` of the Client's `initialize`, replayed on re-initialization. */
  get initializeParams(): unknown {
    return this.#initializeParams;
  }
  /** The server answered 404 and no new session replaced it: `close()` skips the DELETE. */
  get gone(): boolean {
    return this.#gone;
  }
  /**
   * A replacement `initialize` failed and none has succeeded since: there is no session id to send, and a
   * request of the session must not go out without one (it would be refused, 400, forever). The next request
   * re-initializes (after `replaceDelay`).
   */
  get lost(): boolean {
    return this.#replaceFailures > 0;
  }
  /** The id of the session the current or failed replacement stands in for. */
  get replacedId(): string | undefined {
    return this.#replacedId;
  }
  /** Milliseconds from `now` until the next replacement may be attempted (0 when not lost or due). */
  replaceDelay(now: number): number {
    return this.#replaceFailures > 0 ? Math.max(0, this.#retryAt - now) : 0;
  }
  /** The re-initialization in progress, which concurrent callers join. */
  get reinitializing(): Promise<void> | undefined {
    return this.#reinitializing;
  }

  /** The Client negotiated a revision (`setProtocolVersion`), or a re-initialization did. */
  negotiated(version: string): void {
    this.#protocolVersion = version;
  }

  /** The Client sent `initialize` with these params. */
  initializing(params: unknown): void {
    this.#initializeParams = params;
  }

  /** An `initialize` was answered: adopt its `Mcp-Session-Id` (a sessionless server sends none). */
  initialized(sessionIdHeader: string | null): void {
    if (sessionIdHeader !== null && sessionIdHeader.length > 0) this.#sessionId = sessionIdHeader;
    this.#gone = false;
  }

  /** The server no longer knows the session and it was not replaced. */
  markGone(): void {
    this.#gone = true;
  }

  /** The session was ended by our DELETE (or there was none to end). */
  forget(): void {
    this.#sessionId = undefined;
  }

  /** Starts replacing the session: drops the old id and returns the wire id for the new `initialize`. */
  beginReinit(): string {
    if (this.#sessionId !== undefined) this.#replacedId = this.#sessionId;
    this.#sessionId = undefined;
    return `sluice-reinit-${++this.#reinitCount}`;
  }

  /** The replacement `initialize` was answered: its session id, or none from a sessionless server. */
  reinitialized(sessionIdHeader: string | null): void {
    this.#sessionId = sessionIdHeader !== null && sessionIdHeader.length > 0 ? sessionIdHeader : undefined;
  }

  /** The replacement session is in use (its `notifications/initialized` was accepted). */
  replaced(): void {
    this.#gone = false;
    this.#replaceFailures = 0;
    this.#replacedId = undefined;
  }

  /**
   * The replacement `initialize` (or its `notifications/initialized`) failed at `now`: the session is lost until
   * a later attempt succeeds, and that attempt waits an exponential backoff (`REINIT_BACKOFF_MS` doubling up to
   * `REINIT_BACKOFF_MAX_MS`), or the server's `Retry-After` when it asks for longer.
   */
  replaceFailed(now: number, retryAfterMs: number | undefined): void {
    this.#sessionId = undefined;
    this.#replaceFailures++;
    const backoff = Math.min(REINIT_BACKOFF_MAX_MS, REINIT_BACKOFF_MS * 2 ** (this.#replaceFailures - 1));
    this.#retryAt = now + Math.max(backoff, retryAfterMs ?? 0);
  }

  /** Runs `replace` once for all concurrent callers; the promise is cleared when it settles. */
  replaceOnce(replace: () => Promise<void>): Promise<void> {
    this.#reinitializing ??= replace().finally(() => {
      this.#reinitializing = undefined;
    });
    return this.#reinitializing;
  }
}

const VISIBLE_ASCII = /^[\x21-\x7E]+$/;

/**
 * Throws `MalformedMessageError` when an initialize answer's `Mcp-Session-Id` (null when absent) is not a session id:
 * "The session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E)" (MCP 2025-11-25
 * basic/transports §"Session Management"). Echoed as it is, a space or a second field (read joined as "a, b") names
 * no session, and bytes above 0x7E reach the server changed (node:http writes a POST's header block with its string
 * body, as UTF-8).
 */
export function checkSessionIdHeader(value: string | null): void {
  if (value === null || value.length === 0 || VISIBLE_ASCII.test(value)) return;
  throw new MalformedMessageError(
    `the server's Mcp-Session-Id ${JSON.stringify(value.slice(0, 64))} is not visible ASCII (0x21-0x7E), or was sent twice; ` +
      'MCP basic/transports §"Session Management" allows nothing else',
  );
}
