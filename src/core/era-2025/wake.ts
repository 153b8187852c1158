/**
 * Hibernation of idle sessions (the `hibernateAfterMs` option, off by default): what a session keeps
 * so that its SDK server can be closed and dropped while nothing runs on it, and the wake that
 * rebuilds that server, in the state the client's own requests put it in, when the client sends
 * again. The session decides when it may sleep and drops its server (session.ts `hibernate`); this
 * object owns the rest: the asleep state, what is replayed, the one wake under way.
 *
 * Why: an idle session's SDK server (its Protocol's handler tables, its registrations, the client's
 * capabilities) is most of what an idle session costs (docs/benchmarks.md, "Hibernation"). What the
 * client put into it is small and known: its `initialize` (2025-11-25 basic/lifecycle: capabilities,
 * client info, the revision) and its last `logging/setLevel` (server/utilities/logging). A fresh
 * server from `createServer` that is handed those again answers as the dropped one did, provided the
 * application keeps no per-session state of its own in the server and sends nothing through it
 * outside its handlers: that is the contract the option asks for (README, docs/dual-era.md).
 *
 * What cannot be replayed pins the session (it is never hibernated): a `resources/subscribe`
 * (server/resources §Subscriptions: the server remembers it and sends updates on its own), and any
 * message the server sent that no request caused (a sign the application uses the server outside
 * its handlers).
 */
import type { MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { SessionWakeError } from '../../errors.js';
import { flat } from '../../flow/flat.js';
import { JsonRpcCode } from '../../jsonrpc/codes.js';
import {
  errorResponse,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../jsonrpc/message.js';
import type { Logger } from '../callbacks.js';
import type { Counters } from '../observe/counters.js';
import { type Refusal, Refusals } from '../pipeline/refusal.js';

/** Ids of the replayed requests: no client request is in flight while a session wakes. */
const WAKE_INIT_ID = 'sluice-wake:initialize';
const WAKE_LEVEL_ID = 'sluice-wake:setLevel';

/** How long a replayed request may take before the wake is given up. */
export const WAKE_DEADLINE_MS = 10_000;

/**
 * Notifications a sleeping session takes without waking: `notifications/initialized` is replayed by
 * the wake (if the client sent it), and a `notifications/cancelled` can only name a request that is
 * not running (none is while the session sleeps) or has not arrived yet, which the session itself
 * remembers (early-cancel.ts); the SDK would ignore it either way.
 */
export const NO_WAKE: ReadonlySet<string> = new Set(['notifications/initialized', 'notifications/cancelled']);

/** How a wake ended: 'failed' means the server could not be rebuilt (the session has then ended). */
export type WakeOutcome = 'woke' | 'ended' | 'failed';

/** What a wake needs of its session (session.ts). */
export interface Sleeper {
  readonly ended: boolean;
  readonly sessionHash: string;
  /** Connects a fresh server from `createServer` (throws what `createServer` or `connect` threw). */
  reconnect(): Promise<void>;
  dispatchRequest(m: JsonRpcRequest, extra: MessageExtraInfo): void;
  dispatchNotification(m: JsonRpcNotification): void;
  /** Ends the session (its server could not be rebuilt). */
  end(reason: 'closed'): void;
}

const INITIALIZED: JsonRpcNotification = { jsonrpc: '2.0', method: 'notifications/initialized' };

export class Hibernation {
  /** The client's initialize params, as JSON (one flat string: the smallest thing to keep). */
  readonly #init: string;
  #level: string | undefined;
  /** The client sent `notifications/initialized` (2025-11-25 basic/lifecycle): the wake sends it too. */
  #initialized = false;
  /** Client notifications whose handlers may still be running (sawNotification). */
  #notifying = 0;
  #pinned = false;
  #asleep = false;
  #waking: Promise<WakeOutcome> | undefined;
  /** Replayed requests awaiting their answer while a wake runs, by id. */
  #replies: Map<RequestId, (m: JsonRpcResponse) => void> | undefined;
  readonly #counters: Counters;
  readonly #logger: Logger | undefined;

  constructor(initParams: unknown, counters: Counters, logger: Logger | undefined) {
    // JSON.stringify may build a long result as a tree of pieces: flatten it (flow/flat.ts).
    this.#init = flat(JSON.stringify(initParams ?? {}));
    this.#counters = counters;
    this.#logger = logger;
  }

  /** The server was dropped and is not rebuilt yet (a wake under way included). */
  get asleep(): boolean {
    return this.#asleep;
  }

  /** Whether the session may sleep now as far as hibernation knows (not pinned, not asleep). */
  get mayHibernate(): boolean {
    return !this.#pinned && !this.#asleep;
  }

  /** A request of the client's, about to be dispatched: remembers what a wake must replay. */
  saw(m: JsonRpcRequest): void {
    if (m.method === 'logging/setLevel') this.#level = JSON.stringify(m.params ?? {});
    else if (m.method === 'resources/subscribe') this.#pinned = true;
  }

  /** A notification of the client's (dispatched, or taken while asleep: NO_WAKE). */
  sawNotification(method: string): void {
    if (method === 'notifications/initialized') this.#initialized = true;
    // The SDK runs a notification's handler in a microtask; what it sends before the event loop
    // turns (an `oninitialized` asking for the client's roots, say) is taken for the handler's.
    this.#notifying++;
    setImmediate(() => {
      this.#notifying--;
    });
  }

  /**
   * A message the server sends (`running`: while a request of the session's is in flight): an answer
   * to a replayed request is taken here (true: kept from the client); a message sent while no
   * request and no notification's handler runs pins the session. A message sent while one runs,
   * related or not (a handler's `sendLoggingMessage` is not), is taken for the handler's.
   */
  intercept(m: JsonRpcMessage, related: RequestId | undefined, running: boolean): boolean {
    if ('method' in m) {
      if (related === undefined && !running && this.#notifying === 0 && !this.#asleep) this.#pinned = true;
      return false;
    }
    const id = m.id;
    const answered = id === undefined || id === null ? undefined : this.#replies?.get(id);
    if (answered === undefined) return false;
    this.#replies?.delete(id as RequestId);
    answered(m as JsonRpcResponse);
    return true;
  }

  /** The session dropped its server. */
  slept(): void {
    this.#asleep = true;
  }

  /** The session ended: a wake under way stops waiting. */
  ended(): void {
    this.#asleep = false;
    const replies = this.#replies;
    this.#replies = undefined;
    if (replies !== undefined)
      for (const [id, settle] of replies)
        settle(errorResponse(id, JsonRpcCode.InternalError, 'session ended'));
  }

  /** Undefined when awake; else the one wake under way (started now if none is). */
  wake(s: Sleeper): Promise<WakeOutcome> | undefined {
    if (!this.#asleep) return undefined;
    this.#waking ??= this.#rebuild(s).finally(() => {
      this.#waking = undefined;
    });
    return this.#waking;
  }

  async #rebuild(s: Sleeper): Promise<WakeOutcome> {
    try {
      if (s.ended) return 'ended';
      await s.reconnect();
      const init = await this.#replay(s, WAKE_INIT_ID, 'initialize', this.#init);
      if (!('result' in init))
        throw new Error(`it refused the replayed initialize: ${JSON.stringify(init.error)}`);
      if (this.#initialized) s.dispatchNotification(INITIALIZED);
      // Its answer is not checked: the client had the same answer when it sent it.
      if (this.#level !== undefined) await this.#replay(s, WAKE_LEVEL_ID, 'logging/setLevel', this.#level);
      if (s.ended) return 'ended';
      this.#asleep = false;
      this.#counters.add('sessionWakes');
      return 'woke';
    } catch (error) {
      if (s.ended) return 'ended';
      this.#counters.add('wakeFailures');
      const e = new SessionWakeError(error);
      this.#logger?.error('session.wake_failed', { session: s.sessionHash, code: e.code, error: e.message });
      s.end('closed');
      return 'failed';
    } finally {
      this.#replies = undefined;
    }
  }

  /** Dispatches a replayed request (its params kept as JSON) to the fresh server; resolves with its answer. */
  #replay(s: Sleeper, id: string, method: string, params: string): Promise<JsonRpcResponse> {
    const m: JsonRpcRequest = { jsonrpc: '2.0', id, method, params: JSON.parse(params) };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#replies?.delete(m.id);
        reject(new Error(`no answer to the replayed ${m.method} within ${WAKE_DEADLINE_MS} ms`));
      }, WAKE_DEADLINE_MS);
      this.#replies ??= new Map();
      this.#replies.set(m.id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      s.dispatchRequest(m, {});
    });
  }
}

/** What answers a message whose session did not wake: 500 naming the code when the rebuild failed, else 404. */
export function wakeRefusal(outcome: Exclude<WakeOutcome, 'woke'>): Refusal {
  return outcome === 'failed' ? Refusals.internalError('SLUICE_SESSION_WAKE') : Refusals.sessionNotFound();
}
