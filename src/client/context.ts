/**
 * The client transport's internal state and the small method surface its parts work through: `post.ts`,
 * `inbound.ts`, `resend.ts`, `streams.ts`, `reinit.ts` and `delete-session.ts` receive this context, never the
 * public `StreamableHttpClientTransport`, whose own surface stays the SDK `Transport` interface plus a few
 * accessors. Not exported from `sluice/client`.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { AnswerSlots, MAX_CONCURRENT_ANSWERS } from './answer-slots.js';
import { OAuthSession } from './auth/session.js';
import { isTokenAuthProvider, TokenProviderAuth } from './auth/token-provider.js';
import type { TransportAuth } from './auth/transport-auth.js';
import { detectFastDispatch, type FastDispatch } from './dispatch.js';
import type { SluiceClientError } from './errors.js';
import { lowerCaseKeys, withToken } from './http.js';
import type {
  Canceller,
  CancelSignal,
  FetchLike,
  HttpClient,
  HttpMethod,
  HttpResponse,
} from './http-client.js';
import { defaultHttp, fetchHttp } from './http-default.js';
import { ParamHeaderCatalog } from './modern.js';
import type { OutgoingRequest } from './options.js';
import type { ResolvedClientOptions } from './resolve-options.js';
import { ClientSession } from './session.js';
import type { ClientOperation } from './tracing.js';
import type { RequestId, WireMessage } from './wire.js';

/**
 * A response stream (streams.ts owns the class). The context and the parts other than streams.ts
 * only hold one and hand it back to the runner, so it is opaque here: this module imports none of
 * the parts that work through it (no import circle), the transport hands them in (`TransportParts`).
 */
export type ResponseStream = object;

/** The SSE streams of one transport (streams.ts's StreamRunner), as the other parts call them. */
export interface StreamRunner {
  openStandalone(): void;
  /** While the standalone GET is being opened: settles when it has its answer. */
  standaloneReady(): Promise<void> | undefined;
  dropStandalone(): void;
  adoptPostStream(
    entry: PendingRequest,
    response: HttpResponse,
    controller: Canceller,
    onresumptiontoken: ((token: string) => void) | undefined,
  ): void;
  resumeRequest(
    entry: PendingRequest,
    token: string,
    onresumptiontoken: ((token: string) => void) | undefined,
  ): void;
  /** A request `s` owes was answered (or given up); `from` is the stream the answer came on. */
  settled(s: ResponseStream, id: RequestId, from: ResponseStream | undefined): void;
  cancelled(s: ResponseStream, id: RequestId): void;
  closeAll(): void;
}

/** The parts that work through the context (inbound.ts, reinit.ts, resend.ts, streams.ts), handed in by the transport. */
export interface TransportParts {
  runner(context: TransportContext): StreamRunner;
  receive(context: TransportContext, message: WireMessage, from: ResponseStream | undefined): void;
  fail(context: TransportContext, id: RequestId, error: SluiceClientError): void;
  abandon(context: TransportContext, entry: PendingRequest, error: SluiceClientError): void;
  reinitialize(context: TransportContext): Promise<void>;
}

/** A request the Client sent and whose response has not arrived yet. */
export interface PendingRequest {
  readonly message: OutgoingRequest & WireMessage;
  readonly idempotent: boolean;
  /** The stream that owes its response, if it came back as SSE. */
  stream: ResponseStream | undefined;
  resends: number;
  /**
   * The 2026-07-28-era revision the request declares in `_meta` (modern.ts), or undefined for a legacy request.
   * A modern request carries no session id, is never resumed or re-sent, and is cancelled by aborting it.
   */
  readonly modern: string | undefined;
  /** Extra headers the caller passed for this request (`send(…, { headers })`), reserved names removed. */
  readonly extraHeaders: Readonly<Record<string, string>> | undefined;
  /** The HTTP request carrying it before its answer was handed to a stream (aborted to cancel). */
  connection: Canceller | undefined;
  /** Its span and duration metric, when tracing is on (tracing.ts). */
  readonly trace?: ClientOperation | undefined;
}

/** What the context reports back to the public transport (its SDK callbacks). */
export interface TransportOwner {
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  onsessionreset?:
    | ((event: { previousSessionId: string | undefined; sessionId: string | undefined }) => void)
    | undefined;
}

export class TransportContext {
  readonly options: ResolvedClientOptions;
  readonly url: URL;
  readonly pending = new Map<RequestId, PendingRequest>();
  /** Wire id of a re-sent request → the id the Client knows. */
  readonly aliases = new Map<RequestId, RequestId>();
  /** HTTP requests in flight, aborted by `close()`. */
  readonly inflight = new Set<Canceller>();
  /** Slots for the POSTs of answers and notifications (answer-slots.ts). */
  readonly answerSlots = new AnswerSlots(MAX_CONCURRENT_ANSWERS);
  readonly session: ClientSession;
  /** `x-mcp-header` declarations learned from `tools/list` results (modern-era `Mcp-Param-*` headers). */
  readonly paramHeaders = new ParamHeaderCatalog();
  readonly fast: FastDispatch | undefined;
  readonly runner: StreamRunner;
  /** The public transport: its callbacks, and its identity for the fast-dispatch check. */
  readonly owner: TransportOwner;
  /** The OAuth client (or SDK v2 token provider), when the transport has an `authProvider`. */
  readonly auth: TransportAuth | undefined;
  private readonly staticHeaders: Record<string, string> | undefined;
  /** The HTTP adapter; undefined until the default one has loaded (first transport on Node only). */
  private http: HttpClient | undefined;
  private httpLoading: Promise<HttpClient> | undefined;
  private closedFlag = false;
  /** Numbers the wire ids of re-sent requests (resend.ts). */
  private resendCounter = 0;
  private readonly parts: TransportParts;

  constructor(owner: TransportOwner, url: URL, options: ResolvedClientOptions, parts: TransportParts) {
    this.parts = parts;
    this.owner = owner;
    this.url = url;
    this.options = options;
    this.fast = detectFastDispatch(options.protocol);
    this.session = new ClientSession(options.sessionId);
    const { headers, token, authProvider } = options;
    const fetchFn: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.auth =
      authProvider === undefined
        ? undefined
        : isTokenAuthProvider(authProvider)
          ? new TokenProviderAuth({ provider: authProvider, serverUrl: url, fetch: fetchFn })
          : new OAuthSession({
              provider: authProvider,
              serverUrl: url,
              fetch: options.fetch,
              clock: options.clock,
              waitForAuthorizationResponse: options.waitForAuthorizationResponse,
              dpop: options.dpop,
              insecureUrls: options.insecureOAuthUrls,
              silenceMs: options.idleTimeoutMs,
            });
    this.staticHeaders =
      typeof headers !== 'function' && typeof token !== 'function' && authProvider === undefined
        ? withToken(lowerCaseKeys(headers), token)
        : undefined;
    this.runner = parts.runner(this);
    if (options.fetch !== undefined) {
      this.http = fetchHttp(options.fetch, options.redirectPolicy);
    } else {
      const http = defaultHttp(options.redirectPolicy);
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

  get closed(): boolean {
    return this.closedFlag;
  }

  /** Marks the transport closed; false when it already was. */
  markClosed(): boolean {
    if (this.closedFlag) return false;
    this.closedFlag = true;
    return true;
  }

  /** Releases the HTTP adapter (its sockets); the last step of `close()`. */
  closeHttp(): void {
    this.http?.close();
  }

  /** The next number for a re-sent request's wire id. */
  nextResendNumber(): number {
    return ++this.resendCounter;
  }

  /** Reports an error to the transport's `onerror`. */
  reportError(error: Error): void {
    this.owner.onerror?.(error);
  }

  /** Hands a message to the Client through the transport's `onmessage`. */
  deliverToClient(message: JSONRPCMessage): void {
    this.owner.onmessage?.(message);
  }

  /**
   * Sends one HTTP request to the endpoint through the adapter. `headers` is handed over (the adapter may add to it).
   * `resendable`: the adapter may send it again after a stale keep-alive connection (RFC 9110 §9.2.2).
   */
  request(
    method: HttpMethod,
    headers: Record<string, string>,
    body: string | undefined,
    signal: CancelSignal,
    resendable: boolean,
  ): Promise<HttpResponse> {
    const auth = this.auth;
    if (auth !== undefined && headers['authorization']?.startsWith('DPoP ') === true) {
      // RFC 9449 §7: a fresh proof for every request that presents a DPoP-bound token.
      return auth.proofFor(method, this.url, headers['authorization']).then((proof) => {
        if (proof !== undefined) headers['dpop'] = proof;
        return this.send(method, headers, body, signal, resendable);
      });
    }
    return this.send(method, headers, body, signal, resendable);
  }

  private send(
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

  /** Re-initializes once for all concurrent callers. */
  reinitialize(): Promise<void> {
    return this.session.replaceOnce(() => {
      const previousSessionId = this.session.sessionId ?? this.session.replacedId;
      this.runner.dropStandalone();
      return this.parts.reinitialize(this).then(() => {
        this.owner.onsessionreset?.({ previousSessionId, sessionId: this.session.sessionId });
        this.runner.openStandalone();
      });
    });
  }

  /** Routes one incoming message: settles the pending request of a response, then dispatches (inbound.ts). */
  receive(message: WireMessage, from?: ResponseStream): void {
    this.parts.receive(this, message, from);
  }

  /**
   * Fails a pending request: the Client's promise rejects through a JSON-RPC error response, and the typed
   * error goes to `onerror` (inbound.ts).
   */
  fail(id: RequestId, error: SluiceClientError): void {
    this.parts.fail(this, id, error);
  }

  /** A stream owing `entry`'s response was lost for good: re-send it when idempotent, else fail it (resend.ts). */
  abandon(entry: PendingRequest, error: SluiceClientError): void {
    this.parts.abandon(this, entry, error);
  }

  /** Headers for one HTTP request. Static headers are merged once at construction; providers run per request. */
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
      if (this.auth !== undefined) {
        h = lowerCaseKeys(extra);
        const authorization = await this.auth.authorization();
        if (authorization !== undefined) h['authorization'] = authorization;
      } else {
        h = withToken(lowerCaseKeys(extra), typeof token === 'function' ? await token() : token);
      }
    }
    h['accept'] = accept;
    if (withSession) {
      const { sessionId, protocolVersion } = this.session;
      if (sessionId !== undefined) h['mcp-session-id'] = sessionId;
      if (protocolVersion !== undefined) h['mcp-protocol-version'] = protocolVersion;
    }
    if (lastEventId !== undefined) h['last-event-id'] = utf8ByteString(lastEventId);
    return h;
  }
}

/**
 * An event id as a `Last-Event-ID` value: its UTF-8 bytes, one character each (WHATWG HTML §9.2.3 "reestablish the
 * connection": the last event ID string "encoded as UTF-8"). A header value is bytes, and a character above U+00FF,
 * which an SSE id may hold, is refused by `node:http` and by `Headers` alike.
 */
function utf8ByteString(id: string): string {
  let ascii = true;
  for (let i = 0; i < id.length && ascii; i++) ascii = id.charCodeAt(i) < 0x80;
  if (ascii) return id;
  let out = '';
  for (const byte of new TextEncoder().encode(id)) out += String.fromCharCode(byte);
  return out;
}
