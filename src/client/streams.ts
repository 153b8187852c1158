import { mediaType } from '../http/media-type.js';
import { type AuthAttempt, answerChallenge } from './auth/answer.js';
import { reconnectDelay } from './backoff.js';
import type { PendingRequest, TransportContext } from './context.js';
import {
  EventTooLargeError,
  IdleTimeoutError,
  RequestLostError,
  ResumeDeclinedError,
  ResumeExhaustedError,
  ResumeImpossibleError,
  SessionExpiredError,
  type SluiceClientError,
} from './errors.js';
import { discard, statusError, toClientError } from './http.js';
import { Canceller, type HttpBody, type HttpResponse, isOk } from './http-client.js';
import { newResponseStream, type ResponseStream } from './response-stream.js';
import { readSse, type SseEnd } from './sse-reader.js';
import type { RequestId } from './wire.js';

/** The counters of a GET that has met no challenge yet. */
const FRESH_ATTEMPT: AuthAttempt = { afterAuth: false, stepUps: 0, afterNonce: false };

/**
 * Runs the SSE streams of one transport: reading, idle detection (in `readSse`), resumption with backoff,
 * and the decision to re-send or fail a request whose stream is lost.
 */
export class StreamRunner {
  private readonly streams = new Set<ResponseStream>();
  private standalone: ResponseStream | undefined;
  /** 405 (or a 404 from a sessionless server) on the GET: this server never initiates. */
  private standaloneDisabled = false;
  /** Settles once the standalone GET being opened has its answer; undefined when none is being opened. */
  private opening:
    | { readonly stream: ResponseStream; readonly answered: Promise<void>; readonly settle: () => void }
    | undefined;

  private readonly t: TransportContext;

  constructor(context: TransportContext) {
    this.t = context;
  }

  /** Opens the standalone GET stream unless one is open, it is switched off, or the server refused it. */
  openStandalone(): void {
    const t = this.t;
    if (
      !t.options.openStandaloneStream ||
      this.standaloneDisabled ||
      this.standalone !== undefined ||
      t.closed
    )
      return;
    const s = this.create('standalone', undefined, false);
    this.standalone = s;
    let settle = (): void => {};
    const answered = new Promise<void>((resolve) => {
      settle = resolve;
    });
    this.opening?.settle();
    this.opening = { stream: s, answered, settle };
    void this.connect(s);
  }

  /**
   * While the standalone GET is being opened, the promise of its answer (headers, a refusal or an error): the
   * transport holds later messages until then, bounded by `standaloneReadyWaitMs`, because a server may drop
   * what it sends before the GET stream exists (2025-11-25 basic/transports §"Listening for Messages from the
   * Server": it MAY send there, and nothing asks it to queue).
   */
  standaloneReady(): Promise<void> | undefined {
    return this.opening?.answered;
  }

  private openingAnswered(s: ResponseStream): void {
    if (this.opening?.stream !== s) return;
    this.opening.settle();
    this.opening = undefined;
  }

  dropStandalone(): void {
    const s = this.standalone;
    this.standalone = undefined;
    if (s !== undefined) this.finish(s);
  }

  /** Takes over a POST's `text/event-stream` response. */
  adoptPostStream(
    entry: PendingRequest,
    response: HttpResponse,
    controller: Canceller,
    onresumptiontoken: ((token: string) => void) | undefined,
  ): void {
    const modern = entry.modern !== undefined;
    const s = this.create('post', modern ? undefined : onresumptiontoken, modern);
    s.owed.add(entry.message.id);
    entry.stream = s;
    s.connection = controller;
    s.connectionIsGet = false;
    void this.run(s, response.body as HttpBody);
  }

  /** `send(…, { resumptionToken })`: resume a request's stream from a token the caller kept. */
  resumeRequest(
    entry: PendingRequest,
    token: string,
    onresumptiontoken: ((token: string) => void) | undefined,
  ): void {
    const s = this.create('post', onresumptiontoken, false);
    s.owed.add(entry.message.id);
    s.lastEventId = token;
    entry.stream = s;
    void this.connect(s);
  }

  /** The response for `id`, owed by `s`, arrived (on `s` or on any other stream). */
  settled(s: ResponseStream, id: RequestId, from: ResponseStream | undefined): void {
    s.owed.delete(id);
    if (s.kind !== 'post' || s.owed.size > 0 || s.finished) return;
    if (s.connection === undefined) {
      this.finish(s);
    } else if (from !== s || s.connectionIsGet) {
      // A resumed GET may be kept open by the server after the replay; nothing more is owed on it.
      this.finish(s);
    } else {
      // Servers close a POST stream right after its response; let that EOF arrive (so the keep-alive socket
      // is reused) but do not wait for it forever.
      s.finished = true;
      this.streams.delete(s);
      const connection = s.connection;
      s.timer = this.t.options.clock.setTimeout(() => connection.abort(), 1_000);
    }
  }

  /**
   * The caller cancelled `id` (a modern request's `requestSignal`): its stream is closed once nothing else is
   * owed on it, which is the 2026-07-28 era's cancellation (MCP 2026-07-28 basic/patterns/cancellation).
   */
  cancelled(s: ResponseStream, id: RequestId): void {
    s.owed.delete(id);
    if (s.owed.size === 0 && !s.finished) this.finish(s);
  }

  closeAll(): void {
    this.opening?.settle();
    this.opening = undefined;
    for (const s of this.streams) this.finish(s);
    this.streams.clear();
    this.standalone = undefined;
  }

  private create(
    kind: ResponseStream['kind'],
    onresumptiontoken: ((token: string) => void) | undefined,
    modern: boolean,
  ): ResponseStream {
    const s = newResponseStream(this.t, kind, onresumptiontoken, modern);
    this.streams.add(s);
    return s;
  }

  private finish(s: ResponseStream): void {
    this.openingAnswered(s);
    s.finished = true;
    this.streams.delete(s);
    if (s.timer !== undefined) {
      this.t.options.clock.clearTimeout(s.timer);
      s.timer = undefined;
    }
    if (s.connection !== undefined) {
      s.connection.abort();
      this.t.inflight.delete(s.connection);
      s.connection = undefined;
    }
    if (this.standalone === s) this.standalone = undefined;
  }

  private async run(s: ResponseStream, body: HttpBody): Promise<void> {
    const t = this.t;
    const { clock, maxEventBytes, idleTimeoutMs } = t.options;
    s.progressed = false;
    s.connectedAt = clock.now();
    const signal = s.connection;
    const end = await readSse(body, s.sink, {
      clock,
      maxEventBytes,
      idleTimeoutMs,
      ...(signal !== undefined ? { signal } : {}),
    });
    if (s.connection !== undefined) t.inflight.delete(s.connection);
    s.connection = undefined;
    if (s.finished) {
      // Done already (response delivered): drop the grace timer armed by `settled`.
      if (s.timer !== undefined) clock.clearTimeout(s.timer);
      s.timer = undefined;
      return;
    }
    this.ended(s, end);
  }

  private ended(s: ResponseStream, end: SseEnd): void {
    const t = this.t;
    if (t.closed || s.finished) return;
    if (end.kind === 'too-large') {
      // Resuming would replay the same oversized event: fail instead of looping.
      this.fail(s, () => new EventTooLargeError(t.options.maxEventBytes), false);
      if (s.kind === 'standalone') this.standaloneDisabled = true;
      return;
    }
    if (end.kind === 'idle') t.reportError(new IdleTimeoutError(t.options.idleTimeoutMs));
    const { clock, stableConnectionMs } = t.options;
    if (s.progressed || clock.now() - s.connectedAt >= stableConnectionMs) s.attempts = 0;
    this.retry(s, end.kind === 'error' ? end.error : undefined);
  }

  /** Schedules the next connection of `s`, or gives up on it. */
  private retry(s: ResponseStream, cause: unknown): void {
    const t = this.t;
    if (t.closed || s.finished) return;
    if (s.modern) {
      this.fail(s, (id) => new RequestLostError(id, cause), false);
      return;
    }
    if (s.kind === 'post' && s.lastEventId === undefined) {
      this.fail(s, (id) => new ResumeImpossibleError(id), true);
      return;
    }
    if (s.attempts >= t.options.maxReconnectAttempts) {
      const attempts = s.attempts;
      this.fail(s, () => new ResumeExhaustedError(attempts, cause), true);
      return;
    }
    const delay = reconnectDelay(t.options, s.attempts, s.retryMs);
    s.attempts++;
    s.timer = t.options.clock.setTimeout(() => {
      s.timer = undefined;
      void this.connect(s);
    }, delay);
  }

  /**
   * Gives up on `s`: each owed request is re-sent when idempotent (`resend`) or failed; the standalone stream
   * reports the error and stops.
   */
  private fail(
    s: ResponseStream,
    makeError: (id: RequestId | undefined) => SluiceClientError,
    resend: boolean,
  ): void {
    const t = this.t;
    this.finish(s);
    if (s.kind === 'standalone') {
      t.reportError(makeError(undefined));
      return;
    }
    for (const id of s.owed) {
      const entry = t.pending.get(id);
      if (entry === undefined) continue;
      if (resend) t.abandon(entry, makeError(id));
      else t.fail(id, makeError(id));
    }
    s.owed.clear();
  }

  /** Opens (or resumes) `s` with a GET. */
  private async connect(s: ResponseStream): Promise<void> {
    const t = this.t;
    if (t.closed || s.finished) return;
    if (t.session.reinitializing !== undefined && s.sessionId === undefined) {
      await t.session.reinitializing.catch(() => {
        // Reported to whoever triggered the re-init; this GET then finds out on its own.
      });
    }
    if (t.session.lost) {
      // No session to resume in (a replacement initialize failed): never a GET without a session id. Owed
      // idempotent requests are re-sent, and their POST re-initializes.
      this.fail(
        s,
        () => new SessionExpiredError('no session to resume the stream in: re-initializing failed'),
        true,
      );
      return;
    }
    const controller = new Canceller();
    let response: HttpResponse;
    let authorization: string | undefined;
    try {
      const headers = await t.headers('text/event-stream', true, s.lastEventId);
      if (s.sessionId !== undefined) headers['mcp-session-id'] = s.sessionId;
      authorization = headers['authorization'];
      if (t.closed || s.finished) return;
      t.inflight.add(controller);
      s.connection = controller;
      s.connectionIsGet = true;
      response = await t.request('GET', headers, undefined, controller, true);
    } catch (error) {
      this.openingAnswered(s);
      t.inflight.delete(controller);
      s.connection = undefined;
      s.connectedAt = t.options.clock.now();
      s.progressed = false;
      this.retry(s, error);
      return;
    }
    this.openingAnswered(s);
    if (t.closed || s.finished) {
      await discard(response);
      return;
    }
    if (
      isOk(response) &&
      mediaType(response.header('content-type')) === 'text/event-stream' &&
      response.body !== null
    ) {
      s.everConnected = true;
      s.authAttempt = undefined;
      t.auth?.rememberNonce(t.url, response.header('dpop-nonce'));
      await this.run(s, response.body);
      return;
    }
    t.inflight.delete(controller);
    s.connection = undefined;
    if ((response.status === 401 || response.status === 403) && t.auth !== undefined) {
      this.reauthorize(s, response, authorization);
      return;
    }
    this.refused(s, response);
  }

  /**
   * A GET (a resume, or the standalone stream) answered 401/403: the token expired or lost scope while the stream
   * was away, or the resource server wants a DPoP nonce. Answer it as a POST would (a nonce once, an
   * authorization once, step-ups up to maxStepUps: answerChallenge keeps the count across the attempts, and
   * refuses past it), then connect again with the same `Last-Event-ID`, so the stream continues where it
   * stopped: nothing lost, nothing twice (the server replays after the cursor). A nonce no longer uses up the
   * stream's one authorization.
   */
  private reauthorize(s: ResponseStream, response: HttpResponse, authorization: string | undefined): void {
    const t = this.t;
    answerChallenge(t, 'GET', response, authorization, s.authAttempt ?? FRESH_ATTEMPT).then(
      (next) => {
        if (next === undefined) this.refused(s, response);
        else {
          s.authAttempt = next;
          void this.connect(s);
        }
      },
      (error: unknown) => {
        if (!t.closed && !s.finished) this.fail(s, () => toClientError(error), false);
      },
    );
  }

  private refused(s: ResponseStream, response: HttpResponse): void {
    const t = this.t;
    const status = response.status;
    void statusError('GET', response, t.options.idleTimeoutMs).then((error) => {
      if (t.closed || s.finished) return;
      if (status === 401 || status === 403) {
        this.fail(s, () => error, false);
        return;
      }
      // Transient: the old connection may still be registered server-side (409), or the server is overloaded.
      if (status === 409 || status === 429 || status >= 500) {
        s.connectedAt = t.options.clock.now();
        s.progressed = false;
        this.retry(s, error);
        return;
      }
      if (s.kind === 'post') {
        // 4xx (or a 2xx that is not SSE) on the resuming GET: the server declined to resume.
        this.fail(s, (id) => new ResumeDeclinedError(status, id), true);
        return;
      }
      this.finish(s);
      if (status === 405) {
        // "The server does not offer an SSE stream at this endpoint": it never initiates. Not an error.
        this.standaloneDisabled = true;
        return;
      }
      if (status === 404) {
        const sid = t.session.sessionId;
        if (sid !== undefined && s.everConnected && t.options.reinitializeOnSessionExpiry) {
          // The stream worked and now the session is unknown: the server restarted or evicted us.
          t.reinitialize().catch((cause: unknown) => t.reportError(toClientError(cause)));
          return;
        }
        // Stateless servers without a GET route answer 404 (the SDK's own stateless examples do): same
        // meaning as 405.
        this.standaloneDisabled = true;
        return;
      }
      this.standaloneDisabled = true;
      t.reportError(error);
    });
  }
}
