/**
 * One POST that carried requests, from arrival to its last response. It decides, per response, how
 * to answer (2025-11-25 basic/transports §"Sending Messages to the Server": the server picks JSON or
 * SSE per request):
 * - 'auto' answers plain JSON when every response arrives before anything else related to the
 *   request; the first related notification or request, or `streamAfterMs` without an answer,
 *   upgrades it to an SSE stream;
 * - 'sse' opens the stream at once; 'json' never streams (related messages go to the GET stream,
 *   and the JSON answer waits until they have left on it: a request's related notifications reach
 *   the client before its response in every mode; clients stop listening for a request's progress
 *   once its response is in).
 * The decision itself, and the stream's opening, are the shared answer's (answer/answer.ts, with
 * the close-and-resume policy); this file keeps what is the session era's own: the JSON body (one
 * response or a batch), initialize's hooks, the ordering behind the standalone stream, the orphan timer.
 * A client disconnect is not a cancellation (2025-11-25 basic/transports): the work goes on, its
 * events go to the replay store, and only if nobody resumes for `orphanTimeoutMs` is it cancelled.
 */

import { creditedDeadline, type LateDeadline } from '../../flow/late-deadline.js';
import type { PartialFrame } from '../../flow/partial-frame.js';
import type { JsonRpcRequest, RequestId } from '../../jsonrpc/message.js';
import type { ProgressEvent } from '../../jsonrpc/progress-json.js';
import { Answer } from '../answer/answer.js';
import { type Refusal, sendRefusal } from '../pipeline/refusal.js';
import type { Policy } from '../pipeline/route.js';
import type { Headers, ResponseSink } from '../pipeline/sink.js';
import { EventStream } from '../stream/event-stream.js';
import type { StreamShared, StreamWatcher } from '../stream/stream-context.js';
import { SSE_HEADERS } from '../stream/stream-context.js';
import type { StreamGuard } from '../stream/stream-guard.js';

/** What an exchange needs from its session. */
export interface ExchangeHost {
  /** A new POST stream answering these requests. */
  newPostStream(requestIds: readonly RequestId[]): EventStream;
  /** Cancels requests through the SDK Protocol (as a `notifications/cancelled` would). */
  cancel(ids: RequestId[], reason: string): void;
  exchangeDone(ex: Exchange): void;
  countMode(mode: 'json' | 'sse', methods: Iterable<string>): void;
  observeDuration(method: string, ms: number): void;
  orphaned(ids: RequestId[]): void;
  /**
   * Resolves once the standalone stream has handed every frame up to `seq` to a connection, or
   * after a bound (the GET stream may never come back); undefined when nothing needs waiting.
   */
  standaloneDelivered(seq: number, bytes: number): Promise<void> | undefined;
  /** The endpoint's timing: streamAfterMs, streamGraceMs, orphanTimeoutMs. */
  readonly shared: StreamShared;
}

/**
 * Who follows the server-to-client requests related to an exchange's request (a task's run, whose
 * own answer went to the task, not the client: tasks/legacy-input.ts). Such a request goes to the
 * client's standalone GET stream, never to the exchange's sink, as `decorate` returns it; `asking`
 * and `settled` bracket the wait for the client's reply (settled: the reply came, the server gave
 * the request up, or it could not be sent).
 */
export interface RelatedAsks {
  decorate(m: JsonRpcRequest): JsonRpcRequest;
  /**
   * A related notification (JSON) goes to the exchange's sink as usual; the text returned here also
   * goes to the client's standalone stream (a task's progress under the client's own token). `key`:
   * its coalescing key (jsonrpc/partial.ts `coalesceKeyOf`: its progress token's, for progress).
   */
  notification(json: string, key: string | undefined): string | undefined;
  /**
   * The run sends request `id` to the client. The promise (when given) settles once the task reads
   * `input_required` in its store (or that write failed): the request goes out only then, so a
   * client that polls the task as soon as it gets the request sees it waiting on it.
   */
  asking(id: RequestId): Promise<void> | undefined;
  settled(id: RequestId): void;
}

/** What the POST path gives an exchange when it opens it; fixed for the exchange's life. */
export interface ExchangeHooks {
  /**
   * Runs just before an undecided exchange answers (initialize registers its session here); a
   * refusal it returns is sent instead of the answer.
   */
  beforeAnswer?: ((responses: string[]) => Refusal | undefined) | undefined;
  /**
   * With policy 'sse': open the stream only when the answer is ready (or something related is sent),
   * not at once. Initialize uses it so its SSE answer can still carry Mcp-Session-Id.
   */
  deferStream?: boolean;
  /** Bounds the stream's life by the credential that opened it. */
  guard?: StreamGuard | undefined;
  /** Runs once when the exchange is over, however it ended. */
  onDone?: (() => void) | undefined;
  /** Follows the server-to-client requests related to this exchange's requests (see RelatedAsks). */
  asks?: RelatedAsks | undefined;
}

export class Exchange implements StreamWatcher {
  readonly #host: ExchangeHost;
  readonly #sink: ResponseSink;
  /** Requests still awaiting their response, with their method (for metrics). */
  readonly #pending: Map<RequestId, string>;
  readonly #startedAt: number;
  readonly #batch: boolean;
  /** JSON now or upgraded to this session's POST stream; close-and-resume (answer/answer.ts). */
  readonly #answer: Answer<EventStream>;
  #responses: string[] = [];
  /** Methods answered while the exchange was undecided (counted as JSON if it stays so). */
  #answered: string[] = [];
  /** The standalone stream's seq of the newest related message sent there (json policy). */
  #relatedSeq = 0;
  /** Bytes of related messages sent on the standalone stream lately (json policy), for the settle time. */
  #relatedBytes = 0;
  #relatedWindow = 0;
  #orphanTimer: LateDeadline | undefined;
  /** Headers added to the answer (CORS, and Mcp-Session-Id for initialize). */
  readonly #headers: Headers;
  readonly #beforeAnswer: ((responses: string[]) => Refusal | undefined) | undefined;
  readonly #deferStream: boolean;
  readonly #guard: StreamGuard | undefined;
  readonly #onDone: (() => void) | undefined;
  /** See ExchangeHooks.asks. */
  readonly asks: RelatedAsks | undefined;

  constructor(
    host: ExchangeHost,
    sink: ResponseSink,
    requests: Map<RequestId, string>,
    batch: boolean,
    policy: Policy,
    headers: Headers,
    startedAt: number,
    hooks: ExchangeHooks = {},
  ) {
    this.#host = host;
    this.#sink = sink;
    this.#pending = requests;
    this.#startedAt = startedAt;
    this.#batch = batch;
    this.#answer = new Answer(sink, policy, EventStream.overflow, () => this.#openStream());
    this.#headers = headers;
    this.#beforeAnswer = hooks.beforeAnswer;
    this.#deferStream = hooks.deferStream === true;
    this.#guard = hooks.guard;
    this.#onDone = hooks.onDone;
    this.asks = hooks.asks;
    sink.onClose(() => this.#onSinkClose());
  }

  /** Adds a header to the answer (initialize: Mcp-Session-Id, once the session is registered). */
  setHeader(name: string, value: string): void {
    this.#headers[name] = value;
  }

  get ids(): RequestId[] {
    return [...this.#pending.keys()];
  }
  get streaming(): boolean {
    return this.#answer.streaming;
  }
  get stream(): EventStream | undefined {
    return this.#answer.stream;
  }

  start(): void {
    if (this.#answer.policy === 'sse' && !this.#deferStream) this.#answer.upgrade();
    else this.#answer.armTimer(this.#host.shared.streamAfterMs);
  }

  /**
   * A notification or request related to this exchange. Returns 'nostream' when this exchange
   * cannot carry it (json policy, or its client is gone without a stream to resume).
   */
  related(
    json: string,
    key: string | undefined,
    parts?: ProgressEvent,
  ): Promise<void> | undefined | 'nostream' {
    const stream = this.#answer.carrier();
    // Related messages are urgent: the first one flushes the stream's opening bytes with it.
    return stream === undefined ? 'nostream' : stream.send(json, key, true, parts);
  }

  /** Partial output of one of this exchange's requests (see related()). */
  relatedPartial(p: PartialFrame): Promise<void> | undefined | 'nostream' {
    const stream = this.#answer.carrier();
    return stream === undefined ? 'nostream' : stream.sendPartial(p);
  }

  /** A related message went to the standalone stream as frame `seq`: the JSON answer must follow it. */
  relatedVia(seq: number, bytes: number, now: number): void {
    if (seq > this.#relatedSeq) this.#relatedSeq = seq;
    // Only a recent burst can still be unread by the client: count bytes of the last second.
    if (now - this.#relatedWindow > 1000) {
      this.#relatedWindow = now;
      this.#relatedBytes = 0;
    }
    this.#relatedBytes += bytes;
  }

  /** The response for one of this exchange's requests. */
  response(id: RequestId, json: string, now: number): Promise<void> | undefined {
    const method = this.#pending.get(id);
    if (method === undefined) return undefined;
    this.#pending.delete(id);
    this.#host.observeDuration(method, now - this.#startedAt);
    let wait: Promise<void> | undefined;
    if (this.#answer.streaming) wait = this.#answer.stream?.send(json);
    else {
      this.#responses.push(json);
      this.#answered.push(method);
    }
    if (this.#pending.size === 0) this.#complete();
    return wait;
  }

  /** The request was cancelled: no response will come for it. */
  cancelled(id: RequestId): void {
    if (this.#pending.delete(id) && this.#pending.size === 0) this.#complete();
  }

  /** Closes the SSE connection early so the client polls (the SDK's `closeSSEStream` extra). */
  closeConnection(): void {
    const a = this.#answer;
    if (a.policy === 'json') return;
    if (a.pending && !a.sinkClosed) a.upgrade();
    a.stream?.closeConnection();
  }

  /** Ends the exchange without responses (session ended): answers what the HTTP request still awaits. */
  abandon(answer: Refusal): void {
    const a = this.#answer;
    if (a.done) return;
    this.#disarmOrphan();
    const wasPending = a.pending;
    a.finish();
    this.#pending.clear();
    if (wasPending && !this.#sink.closed) sendRefusal(this.#sink, answer, this.#headers);
    else a.stream?.interrupt();
    this.#host.exchangeDone(this);
    this.#onDone?.();
  }

  /** The answer becomes this session's POST stream; responses buffered while undecided go first. */
  #openStream(): EventStream {
    const stream = this.#host.newPostStream([...this.#pending.keys()]);
    this.#host.countMode('sse', this.#pending.values());
    stream.watch(this);
    stream.open(this.#sink, { ...SSE_HEADERS, ...this.#headers }, this.#guard);
    // Responses buffered while undecided (a batch) go first, in arrival order.
    const buffered = this.#responses;
    this.#responses = [];
    for (const r of buffered) void stream.send(r);
    return stream;
  }

  #complete(): void {
    this.#disarmOrphan();
    const a = this.#answer;
    if (a.streaming) {
      a.finish();
      a.stream?.finish(this.#host.shared.streamGraceMs);
    } else if (a.pending) {
      const refused = this.#sink.closed ? undefined : this.#beforeAnswer?.(this.#responses);
      if (refused !== undefined) {
        a.finish();
        sendRefusal(this.#sink, refused, this.#headers);
        this.#host.exchangeDone(this);
        this.#onDone?.();
        return;
      }
      if (a.policy === 'sse' && this.#responses.length > 0 && !this.#sink.closed) {
        // A client that refused JSON gets its answer as a stream (never a type it did not accept).
        const stream = a.upgrade();
        a.finish();
        stream?.finish(this.#host.shared.streamGraceMs);
        this.#host.exchangeDone(this);
        this.#onDone?.();
        return;
      }
      const rs = this.#responses;
      if (this.#sink.closed) a.finish();
      else if (rs.length === 0) {
        // Every request was cancelled: nothing to answer (2025-11-25 utilities/cancellation).
        a.respond(202, this.#headers, '');
      } else {
        a.finish();
        this.#host.countMode('json', this.#answered);
        const body = this.#batch ? `[${rs.join(',')}]` : (rs[0] ?? '');
        const answer = (): void =>
          a.respond(200, { 'content-type': 'application/json', ...this.#headers }, body);
        const gate =
          this.#relatedSeq > 0
            ? this.#host.standaloneDelivered(this.#relatedSeq, this.#relatedBytes)
            : undefined;
        if (gate === undefined) answer();
        else void gate.then(answer);
      }
    }
    this.#host.exchangeDone(this);
    this.#onDone?.();
  }

  #onSinkClose(): void {
    // A JSON answer can never be resumed; an SSE one reports its own detach through the stream.
    if (this.#answer.pending) this.#armOrphan();
  }

  /** Its stream's connection went away with the answer pending: the orphan timer starts. */
  streamDetached(): void {
    this.#armOrphan();
  }
  /** A connection (a resume) attached to its stream: the orphan timer stops. */
  streamAttached(): void {
    this.#disarmOrphan();
  }

  #armOrphan(): void {
    if (this.#answer.done || this.#orphanTimer !== undefined) return;
    // Credited: a resume that came in while this process stalled past the timeout came in time
    // (docs/design.md, "A server's own stall is not blamed on its clients").
    this.#orphanTimer = creditedDeadline(() => {
      this.#orphanTimer = undefined;
      if (this.#answer.done) return;
      const ids = [...this.#pending.keys()];
      this.#host.orphaned(ids);
      this.#host.cancel(
        ids,
        `stream disconnected for ${this.#host.shared.orphanTimeoutMs} ms without resumption`,
      );
      for (const id of ids) this.cancelled(id);
    }, this.#host.shared.orphanTimeoutMs);
  }

  #disarmOrphan(): void {
    this.#orphanTimer?.clear();
    this.#orphanTimer = undefined;
  }
}
