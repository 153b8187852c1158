/**
 * The transport's surface: construction, `start`/`send`/`close`/`setProtocolVersion` and a few read-only
 * accessors. Its state lives in a `TransportContext` (context.ts), private to this class, which the parts
 * work through: `post.ts` (POSTing one message and routing its answer), `inbound.ts` (routing incoming
 * messages to the Client), `resend.ts` (re-sending a request whose stream was lost), `streams.ts` (SSE
 * streams and their resumption), `reinit.ts` (replacing an expired session), `delete-session.ts` (the
 * `DELETE` on close).
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { classify } from '../jsonrpc/message.js';
import { type PendingRequest, TransportContext, type TransportParts } from './context.js';
import { deleteSession } from './delete-session.js';
import {
  AlreadyStartedError,
  InvalidOptionError,
  MalformedMessageError,
  NotStartedError,
  TransportClosedError,
} from './errors.js';
import { toClientError } from './http.js';
import { failRequest, receiveMessage } from './inbound.js';
import { modernRevisionOf, RESERVED_HEADERS } from './modern.js';
import type { OutgoingRequest, StreamableHttpClientOptions } from './options.js';
import { postMessage } from './post.js';
import { reinitialize } from './reinit.js';
import { abandonRequest } from './resend.js';
import { resolveOptions } from './resolve-options.js';
import { StreamRunner } from './streams.js';
import type { TracedRequest } from './tracing.js';
import type { RequestId, WireMessage } from './wire.js';

/**
 * `send()` options: the SDK v1 ones plus what SDK v2's Client passes (`@modelcontextprotocol/client` 2.x
 * `TransportSendOptions`).
 */
export interface SluiceSendOptions extends TransportSendOptions {
  /** Aborting it cancels this request's HTTP request or stream (how SDK v2 cancels 2026-07-28-era requests). */
  requestSignal?: AbortSignal | undefined;
  /**
   * Extra headers for this request's POST (SDK v2 puts its `Mcp-Param-*` headers here). Names the transport
   * derives itself (authorization, content-type, accept, the `Mcp-*` standard headers, session id) are ignored.
   */
  headers?: Readonly<Record<string, string>> | undefined;
  /** Accepted for SDK v2 compatibility and not called: a broken stream fails its request with a typed error. */
  onRequestStreamEnd?: (() => void) | undefined;
}

/** The caller's per-request headers, lower-cased, without the names the transport owns. */
function callerHeaders(
  headers: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> | undefined {
  if (headers === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!RESERVED_HEADERS.has(lower) && typeof value === 'string') out[lower] = value;
  }
  return out;
}

/** The HTTP trace headers of a traced request, unless the caller passed its own. */
function withTraceHeaders(
  headers: Readonly<Record<string, string>> | undefined,
  traced: TracedRequest | undefined,
): Readonly<Record<string, string>> | undefined {
  if (traced?.traceparent === undefined || headers?.['traceparent'] !== undefined) return headers;
  const out: Record<string, string> = { ...headers, traceparent: traced.traceparent };
  if (traced.tracestate !== undefined) out['tracestate'] = traced.tracestate;
  return out;
}

/** The revision a legacy request goes out under: the one asked for by initialize, else the negotiated one. */
/** Waits for the standalone GET's answer, at most `standaloneReadyWaitMs` (streams.ts `standaloneReady`). */
async function standaloneOpened(t: TransportContext, opening: Promise<void>): Promise<void> {
  const { clock, standaloneReadyWaitMs } = t.options;
  if (standaloneReadyWaitMs === 0) return;
  let timer: unknown;
  await Promise.race([
    opening,
    new Promise<void>((resolve) => {
      timer = clock.setTimeout(resolve, standaloneReadyWaitMs);
    }),
  ]);
  clock.clearTimeout(timer);
}

function versionOf(t: TransportContext, wire: WireMessage): string | undefined {
  const asked =
    wire.method === 'initialize' ? (wire.params as { protocolVersion?: unknown } | undefined) : undefined;
  return typeof asked?.protocolVersion === 'string' ? asked.protocolVersion : t.session.protocolVersion;
}

/** `error.type` of a request that failed without a response: the typed error's stable code. */
function errorTypeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.constructor.name : '_OTHER';
}

/** Passed to `onsessionreset` after a transparent re-initialization. */
export interface SessionResetEvent {
  /** The session id the server stopped recognising (404). */
  readonly previousSessionId: string | undefined;
  /** The new session id (undefined when the server went sessionless). */
  readonly sessionId: string | undefined;
}

/** What `inspect()` returns: a snapshot for diagnostics (watchdogs, logs); not for control flow. */
export interface TransportSnapshot {
  readonly sessionId: string | undefined;
  readonly protocolVersion: string | undefined;
  /** Ids of the Client's requests whose responses have not arrived yet. */
  readonly pendingRequestIds: readonly RequestId[];
  /** HTTP requests (POSTs, GET streams, the DELETE) currently open. */
  readonly httpRequestsInFlight: number;
  readonly started: boolean;
  readonly closed: boolean;
}

/** The parts the context works through, handed to it here so that context.ts imports none of them. */
const PARTS: TransportParts = {
  runner: (context) => new StreamRunner(context),
  receive: receiveMessage,
  fail: failRequest,
  abandon: abandonRequest,
  reinitialize,
};

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

  /**
   * One HTTP request per JSON-RPC request, and `requestSignal` honoured: SDK v2 then cancels a 2026-07-28-era
   * request by aborting it instead of sending `notifications/cancelled`.
   */
  readonly hasPerRequestStream = true;

  readonly #t: TransportContext;
  #started = false;
  /** When the session's initialize was sent, for `mcp.client.session.duration`. */
  #initializedAt: number | undefined;

  constructor(url: URL | string, options?: StreamableHttpClientOptions) {
    this.#t = new TransportContext(
      this,
      typeof url === 'string' ? new URL(url) : url,
      resolveOptions(options),
      PARTS,
    );
  }

  /** The session id the server assigned (`Mcp-Session-Id`), once initialized. */
  get sessionId(): string | undefined {
    return this.#t.session.sessionId;
  }

  /** The negotiated protocol version, sent as `MCP-Protocol-Version` after initialize. */
  get protocolVersion(): string | undefined {
    return this.#t.session.protocolVersion;
  }

  /** A snapshot of what the transport holds open, for diagnostics (see docs/client.md). */
  inspect(): TransportSnapshot {
    const t = this.#t;
    return {
      sessionId: t.session.sessionId,
      protocolVersion: t.session.protocolVersion,
      pendingRequestIds: [...t.pending.keys()],
      httpRequestsInFlight: t.inflight.size,
      started: this.#started,
      closed: t.closed,
    };
  }

  /**
   * Completes an OAuth authorization the user agent returned from, as the SDK transport's `finishAuth(code)` does:
   * exchanges the code for tokens (saved through the `authProvider`). Pass the redirect URI itself (a `URL`) to have
   * its `state`, `error` and RFC 9207 `iss` checked; a string is taken as the bare `code`. Then retry (for an SDK
   * Client: connect again). Throws `AuthorizationError` with a stable reason on any refusal.
   */
  async finishAuth(response: string | URL): Promise<void> {
    const auth = this.#t.auth;
    if (auth === undefined) throw new InvalidOptionError('finishAuth needs the authProvider option');
    await auth.finish(response);
  }

  setProtocolVersion(version: string): void {
    this.#t.session.negotiated(version);
  }

  /**
   * SDK v2 passes the revisions its Client supports at connect. Nothing to do with them: the revision of each
   * 2026-07-28-era request travels in its own `_meta`, and legacy requests use the negotiated one.
   */
  setSupportedProtocolVersions(_versions: string[]): void {
    // Deliberately empty (see above); present so SDK v2 finds the hook.
  }

  async start(): Promise<void> {
    if (this.#started) throw new AlreadyStartedError();
    this.#started = true;
    if (this.#t.session.sessionId !== undefined) this.#t.runner.openStandalone();
  }

  async send(message: JSONRPCMessage, options?: SluiceSendOptions): Promise<void> {
    const t = this.#t;
    if (!this.#started) throw new NotStartedError();
    if (t.closed) throw new TransportClosedError();
    if (t.session.reinitializing !== undefined) {
      await t.session.reinitializing.catch(() => {
        // The failure is reported to the request that triggered it; this one tries on its own.
      });
    }
    const opening = t.runner.standaloneReady();
    if (opening !== undefined) await standaloneOpened(t, opening);
    const wire = message as WireMessage;
    const kind = classify(wire).kind;
    if (kind === 'invalid')
      throw new MalformedMessageError('refusing to send a message that is not JSON-RPC');
    if (kind !== 'request') {
      if (wire.method === 'notifications/cancelled') this.#forgetCancelled(wire);
      // At most MAX_CONCURRENT_ANSWERS at once (answer-slots.ts); one that waited past close() is not sent.
      await t.answerSlots.run(async () => {
        if (t.closed) throw new TransportClosedError();
        await postMessage(t, wire, kind, undefined);
      });
      return;
    }
    const modern = modernRevisionOf(wire);
    if (wire.method === 'initialize' && modern === undefined) {
      t.session.initializing(wire.params);
      this.#initializedAt = t.options.clock.now();
    }
    const signal = options?.requestSignal;
    if (signal?.aborted === true) return;
    const traced = t.options.tracing?.begin(wire, t.url, t.session.sessionId, modern ?? versionOf(t, wire));
    const request = (traced?.message ?? wire) as OutgoingRequest & WireMessage;
    const entry: PendingRequest = {
      message: request,
      idempotent: t.options.isIdempotent(request),
      stream: undefined,
      resends: 0,
      modern,
      extraHeaders: withTraceHeaders(callerHeaders(options?.headers), traced),
      connection: undefined,
      trace: traced?.op,
    };
    t.pending.set(request.id, entry);
    if (signal !== undefined) {
      const onAbort = (): void => this.#abortRequest(entry);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    if (options?.resumptionToken !== undefined && modern === undefined) {
      t.runner.resumeRequest(entry, options.resumptionToken, options.onresumptiontoken);
      return;
    }
    try {
      await postMessage(t, request, kind, entry, options?.onresumptiontoken);
    } catch (error) {
      t.pending.delete(request.id);
      entry.trace?.failed(errorTypeOf(error), error instanceof Error ? error.message : undefined);
      throw error;
    }
  }

  /**
   * The Client cancelled one of its requests (timeout or abort): no response will come and none is
   * wanted, so the transport stops owing it — otherwise the end of its stream would look like a
   * loss and start a resume loop for a request nobody awaits. A request re-sent under a new wire id
   * is cancelled under that id, the only one the server knows.
   */
  #forgetCancelled(wire: WireMessage): void {
    const t = this.#t;
    const params = wire.params as { requestId?: unknown } | undefined;
    const id = params?.requestId;
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const entry = t.pending.get(id);
    if (entry === undefined) return;
    t.pending.delete(id);
    entry.trace?.failed('cancelled', undefined);
    for (const [wireId, original] of t.aliases) {
      if (original === id) {
        t.aliases.delete(wireId);
        if (params !== undefined) params.requestId = wireId;
      }
    }
    if (entry.stream !== undefined) t.runner.settled(entry.stream, id, undefined);
  }

  /**
   * `requestSignal` aborted (SDK v2 cancels 2026-07-28-era requests this way): the HTTP request or stream that
   * carries the request is closed, which is that era's cancellation (MCP 2026-07-28 basic/patterns/cancellation
   * §"HTTP": closing the response stream is the cancel). The Client has already rejected its promise, so
   * nothing is delivered and nothing is reported. A legacy request is only forgotten here: its era cancels with
   * `notifications/cancelled`, which the Client sends itself.
   */
  #abortRequest(entry: PendingRequest): void {
    const t = this.#t;
    const id = entry.message.id;
    if (t.pending.get(id) !== entry) return;
    t.pending.delete(id);
    entry.trace?.failed('cancelled', undefined);
    if (entry.stream !== undefined) {
      if (entry.modern !== undefined) t.runner.cancelled(entry.stream, id);
      else t.runner.settled(entry.stream, id, undefined);
    } else if (entry.modern !== undefined) {
      entry.connection?.abort();
    }
  }

  /**
   * Closes: aborts every open stream and pending reconnection, then sends `DELETE` with the session id
   * (bounded by `closeTimeoutMs`; 405 tolerated; skipped when the session is known to be gone).
   */
  async close(): Promise<void> {
    const t = this.#t;
    if (!t.markClosed()) return;
    t.runner.closeAll();
    for (const controller of t.inflight) controller.abort();
    t.inflight.clear();
    const sessionId = t.session.sessionId;
    if (sessionId !== undefined && !t.session.gone && this.#started) {
      await deleteSession(t).catch((error: unknown) => this.onerror?.(toClientError(error)));
    }
    t.closeHttp();
    for (const entry of t.pending.values()) entry.trace?.failed('cancelled', 'transport closed');
    t.pending.clear();
    if (sessionId !== undefined && this.#initializedAt !== undefined)
      t.options.tracing?.sessionEnded(this.#initializedAt, t.session.protocolVersion);
    this.onclose?.();
  }
}
