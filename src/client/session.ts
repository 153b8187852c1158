/**
 * The client's view of its MCP session (2025-11-25 basic/transports §"Session Management"): the id
 * the server assigned, the negotiated revision, the `initialize` params kept for a transparent
 * re-initialization, and whether the server is known to have ended it. Read through getters;
 * changed only through the methods below, each named for the event that causes it.
 */
export class ClientSession {
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  #initializeParams: unknown;
  #gone = false;
  #reinitializing: Promise<void> | undefined;
  #reinitCount = 0;

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
  }

  /** Runs `replace` once for all concurrent callers; the promise is cleared when it settles. */
  replaceOnce(replace: () => Promise<void>): Promise<void> {
    this.#reinitializing ??= replace().finally(() => {
      this.#reinitializing = undefined;
    });
    return this.#reinitializing;
  }
}
