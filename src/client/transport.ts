import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { detectFastDispatch, type FastDispatch } from './dispatch.js';
import {
  EventTooLargeError,
  HttpStatusError,
  MalformedMessageError,
  NetworkError,
  NoResponseError,
  NotStartedError,
  SessionExpiredError,
  type SluiceClientError,
  TRANSPORT_FAILURE_JSONRPC_CODE,
  TransportClosedError,
  UnexpectedContentTypeError,
} from './errors.js';
import {
  describe,
  discard,
  lowerCaseKeys,
  POST_ACCEPT,
  statusError,
  toClientError,
  withToken,
} from './http.js';
import {
  Canceller,
  type CancelSignal,
  type HttpClient,
  type HttpMethod,
  type HttpResponse,
  isOk,
} from './http-client.js';
import { defaultHttp, fetchHttp } from './http-default.js';
import {
  type OutgoingRequest,
  type ResolvedClientOptions,
  resolveOptions,
  type StreamableHttpClientOptions,
} from './options.js';
import { reinitialize, type SessionState } from './reinit.js';
import { type ResponseStream, StreamRunner } from './streams.js';
import { classify, type MessageKind, mediaType, type RequestId, type WireMessage } from './wire.js';

/** Passed to `onsessionreset` after a transparent re-initialization. */
export interface SessionResetEvent {
  /** The session id the server stopped recognising (404). */
  readonly previousSessionId: string | undefined;
  /** The new session id (undefined when the server went sessionless). */
  readonly sessionId: string | undefined;
}

/** A request the Client sent and whose response has not arrived yet. */
export interface PendingRequest {
  readonly message: OutgoingRequest & WireMessage;
  readonly idempotent: boolean;
  /** The stream that owes its response, if it came back as SSE. */
  stream: ResponseStream | undefined;
  resends: number;
}

/**
 * MCP Streamable HTTP client transport (revisions 2025-03-26 … 2025-11-25), a drop-in for the SDK's
 * `StreamableHTTPClientTransport`:
 *
 * ```ts
 * const client = new Client({ name: 'me', version: '1.0.0' });
 * await client.connect(new StreamableHttpClientTransport(new URL('http://127.0.0.1:3000/mcp')));
 * ```
 *
 * On Node it speaks HTTP through `node:http` (loaded only there); elsewhere, or when `options.fetch` is passed,
 * through `fetch`, so it also runs in browsers. See docs/client.md.
 */
export class StreamableHttpClientTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  /** Called after a transparent re-initialization replaced an expired session. */
  onsessionreset?: ((event: SessionResetEvent) => void) | undefined;

  /** @internal shared with the stream runner and the re-initializer */
  readonly options: ResolvedClientOptions;
  /** @internal */
  readonly url: URL;
  /** @internal */
  readonly pending = new Map<RequestId, PendingRequest>();
  /** @internal wire id of a re-sent request → the id the Client knows */
  readonly aliases = new Map<RequestId, RequestId>();
  /** @internal */
  readonly inflight = new Set<Canceller>();
  /** @internal */
  readonly session: SessionState;

  private readonly fast: FastDispatch | undefined;
  private readonly runner: StreamRunner;
  private readonly staticHeaders: Record<string, string> | undefined;
  /** The HTTP adapter; undefined until the default one has loaded (first transport on Node only). */
  private http: HttpClient | undefined;
  private httpLoading: Promise<HttpClient> | undefined;
  private started = false;
  private closedFlag = false;
  private resendCounter = 0;

  constructor(url: URL | string, options?: StreamableHttpClientOptions) {
    this.url = typeof url === 'string' ? new URL(url) : url;
    this.options = resolveOptions(options);
    this.fast = detectFastDispatch(this.options.protocol);
    this.session = {
      sessionId: this.options.sessionId,
      protocolVersion: undefined,
      initializeParams: undefined,
      gone: false,
      reinitializing: undefined,
      reinitCount: 0,
    };
    const { headers, token } = this.options;
    this.staticHeaders =
      typeof headers !== 'function' && typeof token !== 'function'
        ? withToken(lowerCaseKeys(headers), token)
        : undefined;
    this.runner = new StreamRunner(this);
    if (this.options.fetch !== undefined) {
      this.http = fetchHttp(this.options.fetch);
    } else {
      const http = defaultHttp();
      if (http instanceof Promise) {
        this.httpLoading = http.then((loaded) => {
          this.http = loaded;
          return loaded;
        });
      } else {
        this.http = http;
      }
    }
  }

  /**
   * Sends one HTTP request to the endpoint through the adapter. `headers` is handed over (the adapter may add to it).
   * @internal
   */
  request(
    method: HttpMethod,
    headers: Record<string, string>,
    body: string | undefined,
    signal: CancelSignal,
  ): Promise<HttpResponse> {
    const http = this.http;
    if (http !== undefined) return http.request(method, this.url, headers, body, signal);
    return (this.httpLoading as Promise<HttpClient>).then((loaded) =>
      loaded.request(method, this.url, headers, body, signal),
    );
  }

  /** The session id the server assigned (`Mcp-Session-Id`), once initialized. */
  get sessionId(): string | undefined {
    return this.session.sessionId;
  }

  /** The negotiated protocol version, sent as `MCP-Protocol-Version` after initialize. */
  get protocolVersion(): string | undefined {
    return this.session.protocolVersion;
  }

  /** @internal */
  get closed(): boolean {
    return this.closedFlag;
  }

  setProtocolVersion(version: string): void {
    this.session.protocolVersion = version;
  }

  async start(): Promise<void> {
    if (this.started) {
      throw new Error(
        'StreamableHttpClientTransport already started (Client.connect() calls start() for you)',
      );
    }
    this.started = true;
    if (this.session.sessionId !== undefined) this.runner.openStandalone();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (!this.started) throw new NotStartedError();
    if (this.closedFlag) throw new TransportClosedError();
    if (this.session.reinitializing !== undefined) {
      await this.session.reinitializing.catch(() => {
        // The failure is reported to the request that triggered it; this one tries on its own.
      });
    }
    const wire = message as WireMessage;
    const kind = classify(wire);
    if (kind === 'invalid')
      throw new MalformedMessageError('refusing to send a message that is not JSON-RPC');
    if (kind !== 'request') {
      await this.post(wire, kind, undefined);
      return;
    }
    const request = wire as OutgoingRequest & WireMessage;
    if (request.method === 'initialize') this.session.initializeParams = request.params;
    const entry: PendingRequest = {
      message: request,
      idempotent: this.options.isIdempotent(request),
      stream: undefined,
      resends: 0,
    };
    this.pending.set(request.id, entry);
    if (options?.resumptionToken !== undefined) {
      this.runner.resumeRequest(entry, options.resumptionToken, options.onresumptiontoken);
      return;
    }
    try {
      await this.post(wire, kind, entry, options?.onresumptiontoken);
    } catch (error) {
      this.pending.delete(request.id);
      throw error;
    }
  }

  /**
   * POSTs one message and routes the answer by its media type (never by the method).
   * @internal
   */
  async post(
    wire: WireMessage,
    kind: MessageKind,
    entry: PendingRequest | undefined,
    onresumptiontoken?: (token: string) => void,
    retriedAfterReinit = false,
  ): Promise<void> {
    const isInitialize = wire.method === 'initialize';
    const sentWithSession = isInitialize ? undefined : this.session.sessionId;
    const headers = await this.headers(POST_ACCEPT, !isInitialize, undefined);
    headers['content-type'] = 'application/json';
    const controller = new Canceller();
    this.inflight.add(controller);
    let response: HttpResponse;
    try {
      response = await this.request('POST', headers, JSON.stringify(wire), controller);
    } catch (error) {
      this.inflight.delete(controller);
      if (this.closedFlag) throw new TransportClosedError();
      throw new NetworkError(`POST ${this.url.href} failed: ${describe(error)}`, error);
    }
    let handedOff = false;
    try {
      if (!isOk(response)) {
        if (response.status === 404 && sentWithSession !== undefined) {
          await discard(response);
          return await this.onSessionNotFound(wire, kind, entry, sentWithSession, retriedAfterReinit);
        }
        throw await statusError('POST', response);
      }
      if (isInitialize) {
        const sid = response.header('mcp-session-id');
        if (sid !== null && sid.length > 0) this.session.sessionId = sid;
        this.session.gone = false;
      }
      if (response.status === 202 || kind !== 'request' || entry === undefined) {
        await discard(response);
        if (wire.method === 'notifications/initialized' && response.status < 300)
          this.runner.openStandalone();
        // A request answered 202 gets its response later on the standalone GET stream; it stays pending.
        return;
      }
      const type = mediaType(response.header('content-type'));
      if (type === 'text/event-stream' && response.body !== null) {
        handedOff = true;
        this.runner.adoptPostStream(entry, response, controller, onresumptiontoken);
        return;
      }
      if (type === 'application/json') {
        await this.receiveJsonBody(response, entry.message.id);
        return;
      }
      await discard(response);
      throw new UnexpectedContentTypeError(response.header('content-type'));
    } finally {
      if (!handedOff) this.inflight.delete(controller);
    }
  }

  private async onSessionNotFound(
    wire: WireMessage,
    kind: MessageKind,
    entry: PendingRequest | undefined,
    sentWithSession: string,
    retriedAfterReinit: boolean,
  ): Promise<void> {
    if (!this.options.reinitializeOnSessionExpiry || retriedAfterReinit) {
      this.session.gone = true;
      throw new SessionExpiredError(
        retriedAfterReinit
          ? `session not found (HTTP 404) again right after re-initializing; giving up on ${String(wire.method ?? 'message')}`
          : 'session not found (HTTP 404) and reinitializeOnSessionExpiry is off',
      );
    }
    // Another request may already be replacing the session (its sessionId is cleared meanwhile) or
    // have replaced it while this one was in flight: join the former, skip only the latter.
    if (this.session.reinitializing !== undefined || this.session.sessionId === sentWithSession) {
      try {
        await this.reinitialize();
      } catch (error) {
        this.session.gone = true;
        throw new SessionExpiredError(
          `session expired and re-initializing failed: ${describe(error)}`,
          error,
        );
      }
    }
    await this.post(wire, kind, entry, undefined, true);
  }

  /** Re-initializes once for all concurrent callers. @internal */
  reinitialize(): Promise<void> {
    if (this.session.reinitializing === undefined) {
      const previousSessionId = this.session.sessionId;
      this.runner.dropStandalone();
      this.session.reinitializing = reinitialize(this)
        .then(() => {
          this.onsessionreset?.({ previousSessionId, sessionId: this.session.sessionId });
          this.runner.openStandalone();
        })
        .finally(() => {
          this.session.reinitializing = undefined;
        });
    }
    return this.session.reinitializing;
  }

  private async receiveJsonBody(response: HttpResponse, requestId: RequestId): Promise<void> {
    const text = await response.text(this.options.maxEventBytes);
    if (text === undefined) throw new EventTooLargeError(this.options.maxEventBytes);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new MalformedMessageError('the JSON response body is not valid JSON', error);
    }
    if (Array.isArray(parsed)) {
      for (const item of parsed) this.receive(item as WireMessage);
    } else {
      this.receive(parsed as WireMessage);
    }
    if (this.pending.has(requestId)) {
      this.pending.delete(requestId);
      throw new NoResponseError(requestId);
    }
  }

  /**
   * Routes one incoming message: settles the pending request of a response, then dispatches.
   * @internal
   */
  receive(message: WireMessage, from?: ResponseStream): void {
    const kind = classify(message);
    if (kind === 'invalid') {
      this.onerror?.(
        new MalformedMessageError(`not a JSON-RPC message: ${JSON.stringify(message).slice(0, 200)}`),
      );
      return;
    }
    if (kind === 'response') {
      let id = message.id as RequestId;
      if (this.aliases.size > 0) {
        const original = this.aliases.get(id);
        if (original !== undefined) {
          this.aliases.delete(id);
          message.id = original;
          id = original;
        }
      }
      const entry = this.pending.get(id);
      if (entry !== undefined) {
        this.pending.delete(id);
        const stream = entry.stream;
        if (stream !== undefined) this.runner.settled(stream, id, from);
      }
    }
    this.dispatch(message, kind);
  }

  private dispatch(message: WireMessage, kind: MessageKind): void {
    if (kind === 'response') {
      // The SDK Protocol runs notification handlers one microtask later (`Promise.resolve().then(handler)`) but
      // settles responses synchronously, and deletes the request's progress handler when it does. Several
      // events parsed from one chunk are dispatched in one synchronous run, so a response must wait behind the
      // notifications dispatched before it, or the last progress update would be dropped as "unknown token".
      queueMicrotask(() => this.deliver(message, kind));
      return;
    }
    this.deliver(message, kind);
  }

  private deliver(message: WireMessage, kind: MessageKind): void {
    const fast = this.fast;
    if (fast !== undefined && fast.target.transport === this) {
      if (kind === 'notification') fast.notification(message);
      else if (kind === 'response') fast.response(message);
      else fast.request(message, undefined);
      return;
    }
    this.onmessage?.(message as JSONRPCMessage);
  }

  /**
   * Fails a pending request: the Client's promise rejects through a JSON-RPC error response, and the typed
   * error goes to `onerror`.
   * @internal
   */
  fail(id: RequestId, error: SluiceClientError): void {
    if (!this.pending.delete(id)) return;
    this.onerror?.(error);
    this.dispatch(
      {
        jsonrpc: '2.0',
        id,
        error: {
          code: TRANSPORT_FAILURE_JSONRPC_CODE,
          message: error.message,
          data: { sluiceCode: error.code },
        },
      },
      'response',
    );
  }

  /**
   * A stream owing `entry`'s response was lost for good: re-send it when idempotent, else fail it.
   * @internal
   */
  abandon(entry: PendingRequest, error: SluiceClientError): void {
    const id = entry.message.id;
    if (this.pending.get(id) !== entry) return;
    entry.stream = undefined;
    if (
      !entry.idempotent ||
      entry.resends >= Math.max(1, this.options.maxReconnectAttempts) ||
      this.closedFlag
    ) {
      this.fail(id, error);
      return;
    }
    entry.resends++;
    // A new wire id: the old one may still be known to the server (R1–R3 forbid reusing an id in a session).
    const wireId = `${String(id)}.sluice-resend-${++this.resendCounter}`;
    this.aliases.set(wireId, id);
    const copy: WireMessage = { ...entry.message, id: wireId };
    this.post(copy, 'request', entry).catch((cause: unknown) => {
      this.aliases.delete(wireId);
      this.fail(id, toClientError(cause));
    });
  }

  /**
   * Headers for one HTTP request. Static headers are merged once at construction; providers run per request.
   * @internal
   */
  async headers(
    accept: string,
    withSession: boolean,
    lastEventId: string | undefined,
  ): Promise<Record<string, string>> {
    let h: Record<string, string>;
    if (this.staticHeaders !== undefined) {
      h = { ...this.staticHeaders };
    } else {
      const { headers, token } = this.options;
      const extra = typeof headers === 'function' ? await headers() : headers;
      const bearer = typeof token === 'function' ? await token() : token;
      h = withToken(lowerCaseKeys(extra), bearer);
    }
    h['accept'] = accept;
    if (withSession) {
      const { sessionId, protocolVersion } = this.session;
      if (sessionId !== undefined) h['mcp-session-id'] = sessionId;
      if (protocolVersion !== undefined) h['mcp-protocol-version'] = protocolVersion;
    }
    if (lastEventId !== undefined) h['last-event-id'] = lastEventId;
    return h;
  }

  /**
   * Closes: aborts every open stream and pending reconnection, then sends `DELETE` with the session id
   * (bounded by `closeTimeoutMs`; 405 tolerated; skipped when the session is known to be gone).
   */
  async close(): Promise<void> {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.runner.closeAll();
    for (const controller of this.inflight) controller.abort();
    this.inflight.clear();
    const sessionId = this.session.sessionId;
    if (sessionId !== undefined && !this.session.gone && this.started) {
      await this.deleteSession().catch((error: unknown) => this.onerror?.(toClientError(error)));
    }
    this.http?.close();
    this.pending.clear();
    this.onclose?.();
  }

  private async deleteSession(): Promise<void> {
    const { clock, closeTimeoutMs } = this.options;
    const controller = new Canceller();
    const timer = clock.setTimeout(() => controller.abort(), closeTimeoutMs);
    try {
      const headers = await this.headers('application/json, text/event-stream', true, undefined);
      let response: HttpResponse;
      try {
        response = await this.request('DELETE', headers, undefined, controller);
      } catch (error) {
        throw new NetworkError(
          controller.aborted
            ? `DELETE did not complete within closeTimeoutMs (${closeTimeoutMs} ms)`
            : `DELETE failed: ${describe(error)}`,
          error,
        );
      }
      await discard(response);
      if (!isOk(response) && response.status !== 405 && response.status !== 404) {
        throw new HttpStatusError('DELETE', response.status, '');
      }
      this.session.sessionId = undefined;
    } finally {
      clock.clearTimeout(timer);
    }
  }
}
