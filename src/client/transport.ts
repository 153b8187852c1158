/**
 * The transport's surface: construction, `start`/`send`/`close`/`setProtocolVersion`, request headers and the
 * shared state its parts work on. The parts: `post.ts` (POSTing one message and routing its answer),
 * `inbound.ts` (routing incoming messages to the Client), `resend.ts` (re-sending a request whose stream was
 * lost), `streams.ts` (SSE streams and their resumption), `reinit.ts` (replacing an expired session),
 * `delete-session.ts` (the `DELETE` on close).
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { deleteSession } from './delete-session.js';
import { detectFastDispatch, type FastDispatch } from './dispatch.js';
import {
  MalformedMessageError,
  NotStartedError,
  type SluiceClientError,
  TransportClosedError,
} from './errors.js';
import { lowerCaseKeys, toClientError, withToken } from './http.js';
import type { Canceller, CancelSignal, HttpClient, HttpMethod, HttpResponse } from './http-client.js';
import { defaultHttp, fetchHttp } from './http-default.js';
import { failRequest, receiveMessage } from './inbound.js';
import {
  type OutgoingRequest,
  type ResolvedClientOptions,
  resolveOptions,
  type StreamableHttpClientOptions,
} from './options.js';
import { postMessage } from './post.js';
import { reinitialize, type SessionState } from './reinit.js';
import { abandonRequest } from './resend.js';
import { type ResponseStream, StreamRunner } from './streams.js';
import { classify, type RequestId, type WireMessage } from './wire.js';

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

  /** @internal used by inbound.ts */
  readonly fast: FastDispatch | undefined;
  /** @internal used by post.ts and inbound.ts */
  readonly runner: StreamRunner;
  private readonly staticHeaders: Record<string, string> | undefined;
  /** The HTTP adapter; undefined until the default one has loaded (first transport on Node only). */
  private http: HttpClient | undefined;
  private httpLoading: Promise<HttpClient> | undefined;
  private started = false;
  private closedFlag = false;
  /** @internal numbers the wire ids of re-sent requests (resend.ts) */
  resendCounter = 0;

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
    resendable: boolean,
  ): Promise<HttpResponse> {
    const http = this.http;
    if (http !== undefined) return http.request(method, this.url, headers, body, signal, resendable);
    return (this.httpLoading as Promise<HttpClient>).then((loaded) =>
      loaded.request(method, this.url, headers, body, signal, resendable),
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
      if (wire.method === 'notifications/cancelled') this.forgetCancelled(wire);
      await postMessage(this, wire, kind, undefined);
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
      await postMessage(this, wire, kind, entry, options?.onresumptiontoken);
    } catch (error) {
      this.pending.delete(request.id);
      throw error;
    }
  }

  /**
   * The Client cancelled one of its requests (timeout or abort): no response will come and none is
   * wanted, so the transport stops owing it — otherwise the end of its stream would look like a
   * loss and start a resume loop for a request nobody awaits. A request re-sent under a new wire id
   * is cancelled under that id, the only one the server knows.
   */
  private forgetCancelled(wire: WireMessage): void {
    const params = wire.params as { requestId?: unknown } | undefined;
    const id = params?.requestId;
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    this.pending.delete(id);
    for (const [wireId, original] of this.aliases) {
      if (original === id) {
        this.aliases.delete(wireId);
        if (params !== undefined) params.requestId = wireId;
      }
    }
    if (entry.stream !== undefined) this.runner.settled(entry.stream, id, undefined);
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

  /**
   * Routes one incoming message: settles the pending request of a response, then dispatches (inbound.ts).
   * @internal
   */
  receive(message: WireMessage, from?: ResponseStream): void {
    receiveMessage(this, message, from);
  }

  /**
   * Fails a pending request: the Client's promise rejects through a JSON-RPC error response, and the typed
   * error goes to `onerror` (inbound.ts).
   * @internal
   */
  fail(id: RequestId, error: SluiceClientError): void {
    failRequest(this, id, error);
  }

  /**
   * A stream owing `entry`'s response was lost for good: re-send it when idempotent, else fail it (resend.ts).
   * @internal
   */
  abandon(entry: PendingRequest, error: SluiceClientError): void {
    abandonRequest(this, entry, error);
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
      await deleteSession(this).catch((error: unknown) => this.onerror?.(toClientError(error)));
    }
    this.http?.close();
    this.pending.clear();
    this.onclose?.();
  }
}
