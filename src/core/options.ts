/**
 * Every server option, its default, and the one function that resolves and validates them.
 * Defaults are merged per field; an impossible value throws InvalidOptionError when the handler is
 * created, never per request. The README's options table lists the same for users.
 */
import { InvalidOptionError } from '../errors.js';
import type { EventStore } from '../events/event-store.js';
import {
  DEFAULT_REPLAY_BUDGET,
  DEFAULT_REPLAY_LIMITS,
  type ReplayLimits,
} from '../events/memory-event-store.js';
import { DEFAULT_JSON_LIMITS, type JsonShapeLimits } from '../jsonrpc/json-shape.js';
import type { AuthDenial, AuthResult, Logger, ResponseMode, SessionInfo } from './callbacks.js';
import type { TaskHook } from './era-2026/task-hook.js';
import type { ClientLimitOptions } from './limits/client-limits.js';
import type { TracingOptions } from './observe/operations.js';
import type { Probe } from './observe/probe.js';
import {
  allowedHostsOf,
  clientLimits,
  hibernateAfterMsOf,
  nonNegativeInt,
  positiveInt,
  sessionIdPrefixOf,
  tasksOf,
  tracingOf,
} from './option-checks.js';
import type { RequestView } from './pipeline/request-view.js';

export {
  type AuthDenial,
  type AuthResult,
  isAuthDenial,
  type Logger,
  type ResponseMode,
  type SessionContext,
  type SessionInfo,
} from './callbacks.js';

export interface ServerOptions {
  /** How a POST carrying requests is answered. 'auto' answers JSON unless the handler streams. @defaultValue 'auto' */
  mode?: ResponseMode;
  /** In 'auto' mode, a request not answered within this many ms switches to SSE. @defaultValue 1000 */
  streamAfterMs?: number;
  /** An SSE comment is sent on a stream silent for this long; 0 disables. @defaultValue 15000 */
  keepaliveMs?: number;
  /** The SSE `retry:` hint (ms) sent in priming events and before a server-side close. @defaultValue 1000 */
  retryMs?: number;
  /** Largest accepted POST body in bytes (413 above). @defaultValue 4 MiB */
  maxBodyBytes?: number;
  /**
   * Shape bounds of a POST body, checked before it is parsed (400 above; jsonrpc/json-shape.ts):
   * nesting depth, object members, and values (containers and elements) in the whole body.
   * @defaultValue { maxDepth: 64, maxKeys: 10000, maxValues: 100000 }
   */
  jsonLimits?: Partial<JsonShapeLimits>;
  /** Sessions held at once; a new initialize beyond it gets 503 + Retry-After. @defaultValue 10000 */
  maxSessions?: number;
  /**
   * Limits per client (a client is the authenticated principal, else the remote address, IPv6 by
   * /64): sessions held, and a token bucket on initialize (2025 era; not in stateless mode), and
   * 2026-07-28 requests in flight at once (`maxConcurrentRequests`, also in stateless mode). Beyond
   * any, 429 + Retry-After. `false` turns them all off (e.g. behind a proxy without authentication,
   * where every client has the proxy's address).
   * @defaultValue { maxSessions: 1000, initializePerSecond: 20, initializeBurst: 100, maxTracked: 10000, maxConcurrentRequests: 128 }
   */
  clientLimits?: Partial<ClientLimitOptions> | false;
  /** A session with no live request or stream for this long ends. @defaultValue 600000 (10 min) */
  sessionIdleMs?: number;
  /**
   * Hibernation (2025-era sessions; not with `stateless`): a session that has run nothing for this
   * long has its SDK server closed and dropped, and the next message it sends is answered by a fresh
   * server from `createServer`, handed the client's `initialize` and last `logging/setLevel` again.
   * Saves most of an idle session's memory (docs/benchmarks.md "Hibernation"). Only for a
   * `createServer` whose servers keep no per-session state and send nothing outside their handlers;
   * a session that subscribed to a resource, or whose server sent a message no request caused, is
   * never hibernated. `0`: as soon as nothing runs (after every answer; each request then builds a
   * server, as a 2026-07-28 request does). @defaultValue undefined (off)
   */
  hibernateAfterMs?: number;
  /** Requests in flight per session; more gets 429. @defaultValue 128 */
  maxInflightPerSession?: number;
  /** Open SSE streams and pending POST exchanges per session; more gets 429. @defaultValue 64 */
  maxStreamsPerSession?: number;
  /** Bytes one SSE connection may queue while its socket is not writable. @defaultValue 1 MiB */
  maxQueueBytes?: number;
  /** Queue bytes above which a non-coalescible send waits for 'drain'. @defaultValue 64 KiB */
  highWaterMark?: number;
  /**
   * Replay buffer bounds per stream. A stream's count and byte bounds grow to what it produces at
   * its peak rate during `tolerableDisconnectMs` (0: fixed), up to a quarter of
   * `replayBudget.maxTotalBytes`. @defaultValue { maxCount: 1024, maxBytes: 1 MiB, maxAgeMs: 300000, tolerableDisconnectMs: 30000 }
   */
  replay?: Partial<ReplayLimits>;
  /**
   * Budget of the default in-memory store as a whole: beyond it, the oldest finished streams are
   * freed before their grace ends (live streams never are). @defaultValue { maxTotalBytes: 64 MiB, maxFinishedStreams: 10000 }
   */
  replayBudget?: { maxTotalBytes?: number; maxFinishedStreams?: number };
  /** Where events are kept for replay. @defaultValue an in-memory store with `replay` bounds */
  eventStore?: EventStore;
  /** A finished POST stream stays resumable this long. @defaultValue 60000 */
  streamGraceMs?: number;
  /**
   * While a stream cannot take bytes (no connection attached, or a blocked socket for progress),
   * sends resolve on a shared tick of this many ms instead of at once, so a flooding handler does
   * not spin a core for a consumer that is stalled or gone; 0 turns pacing off. @defaultValue 50
   */
  pacingMs?: number;
  /** A request whose stream stays disconnected this long is cancelled. @defaultValue 300000 (5 min) */
  orphanTimeoutMs?: number;
  /** No sessions: a fresh server per request; GET and DELETE get 405. @defaultValue false */
  stateless?: boolean;
  /** Offer the standalone GET stream (405 when false). @defaultValue true */
  enableGetStream?: boolean;
  /** Let clients end sessions with DELETE (405 when false). @defaultValue true */
  enableDelete?: boolean;
  /**
   * Put before every session id this instance mints, with a dot: `<prefix>.<random>`. A balancer
   * can then send a session's requests to the instance that owns it (docs/scale-out.md,
   * "Owner-affine routing"), which spares a cluster the hop between instances. 1–32 characters of
   * `A–Z a–z 0–9 _ -`: the random part is base64url, which has no dot, so the prefix is exactly
   * what precedes the first dot. Not secret, and not trusted: a client that sends another prefix
   * only reaches another instance, which routes the request as it would any other.
   * @defaultValue none (the random part alone)
   */
  sessionIdPrefix?: string;
  /** Exact origins allowed (e.g. 'https://app.example.com'). @defaultValue same-origin with the Host header */
  allowedOrigins?: string[];
  /**
   * Host names allowed on a loopback bind: names only, no port or scheme, IPv6 in brackets (any
   * other entry throws InvalidOptionError). @defaultValue ['localhost', '127.0.0.1', '[::1]']
   */
  allowedHosts?: string[];
  /**
   * Authenticates every request before any session lookup; null means 401, an `AuthDenial` is sent
   * as it is (its status, reason and headers). It receives the runtime-neutral RequestView:
   * `req.headers.authorization` reads as on node:http; the Node binding's view adds the
   * IncomingMessage itself (`nodeObjectsOf(req)?.req`, server/node-view.ts).
   */
  authenticate?: (
    req: RequestView,
  ) => AuthResult | AuthDenial | null | Promise<AuthResult | AuthDenial | null>;
  /** Re-run `authenticate` this often during a long stream and close it on refusal; 0 = never. @defaultValue 0 */
  revalidateMs?: number;
  /** Sent as `resource_metadata` in WWW-Authenticate on 401 (RFC 9728). */
  resourceMetadataUrl?: string;
  onSessionStart?: (info: SessionInfo) => void;
  onSessionEnd?: (info: SessionInfo & { reason: string }) => void;
  logger?: Logger;
  /** Per-method mode counters and duration histograms (cheap; off only to measure their cost). @defaultValue true */
  metrics?: boolean;
  /** Lifecycle observer; the node:http binding wires node:diagnostics_channel here. */
  probe?: Probe;
  /**
   * OpenTelemetry tracing (docs/tracing.md): pass your `@opentelemetry/api` module
   * (`{ api }`, an optional peer Sluice never imports itself) and optionally a tracer. A server span
   * per JSON-RPC request; with no tracer provider registered it does nothing. @defaultValue off
   */
  tracing?: TracingOptions | false;
  /**
   * Dispatch to the SDK Protocol's internal handlers directly instead of through `onmessage`,
   * skipping type guards that fail (and build zod errors) on every request, and give an SDK v1
   * server's handlers a direct `extra.sendNotification` (core/sdk/fast-notify.ts), and close a served
   * server with nothing pending without the stack trace nobody sees (core/sdk/quiet-close.ts). Falls
   * back to `onmessage`, the SDK's function and its close when the internals are not found.
   * @defaultValue true
   */
  fastDispatch?: boolean;
  /** Clock, for tests. @defaultValue Date.now */
  now?: () => number;
  /**
   * The tasks extension (`io.modelcontextprotocol/tasks`): `createTasks()` of `sluice/server`
   * (docs/tasks.md). @defaultValue none: no request becomes a task
   */
  tasks?: TaskHook;
}

export type ResolvedOptions = Required<
  Omit<
    ServerOptions,
    | 'eventStore'
    | 'authenticate'
    | 'resourceMetadataUrl'
    | 'onSessionStart'
    | 'onSessionEnd'
    | 'logger'
    | 'allowedOrigins'
    | 'replay'
    | 'jsonLimits'
    | 'probe'
    | 'clientLimits'
    | 'tracing'
    | 'tasks'
    | 'sessionIdPrefix'
    | 'hibernateAfterMs'
  >
> & {
  clientLimits: ClientLimitOptions | undefined;
  hibernateAfterMs: number | undefined;
  replay: ReplayLimits;
  jsonLimits: JsonShapeLimits;
  replayBudget: { maxTotalBytes: number; maxFinishedStreams: number };
  eventStore: EventStore | undefined;
  authenticate: ServerOptions['authenticate'];
  resourceMetadataUrl: string | undefined;
  onSessionStart: ServerOptions['onSessionStart'];
  onSessionEnd: ServerOptions['onSessionEnd'];
  logger: Logger | undefined;
  allowedOrigins: ReadonlySet<string> | undefined;
  probe: Probe | undefined;
  tracing: TracingOptions | undefined;
  tasks: TaskHook | undefined;
  sessionIdPrefix: string | undefined;
};

export const DEFAULTS = {
  mode: 'auto',
  streamAfterMs: 1000,
  keepaliveMs: 15_000,
  retryMs: 1000,
  maxBodyBytes: 4 * 1024 * 1024,
  maxSessions: 10_000,
  sessionIdleMs: 10 * 60_000,
  maxInflightPerSession: 128,
  maxStreamsPerSession: 64,
  maxQueueBytes: 1024 * 1024,
  highWaterMark: 64 * 1024,
  streamGraceMs: 60_000,
  orphanTimeoutMs: 5 * 60_000,
  pacingMs: 50,
  stateless: false,
  enableGetStream: true,
  enableDelete: true,
  allowedHosts: ['localhost', '127.0.0.1', '[::1]'],
  revalidateMs: 0,
  fastDispatch: true,
  metrics: true,
} as const;

export function resolveOptions(o: ServerOptions): ResolvedOptions {
  const mode = o.mode ?? DEFAULTS.mode;
  if (mode !== 'auto' && mode !== 'json' && mode !== 'sse') {
    throw new InvalidOptionError(`mode must be 'auto', 'json' or 'sse', got ${String(mode)}`);
  }
  const maxQueueBytes = positiveInt('maxQueueBytes', o.maxQueueBytes ?? DEFAULTS.maxQueueBytes);
  const highWaterMark = positiveInt('highWaterMark', o.highWaterMark ?? DEFAULTS.highWaterMark);
  if (highWaterMark > maxQueueBytes) {
    throw new InvalidOptionError(
      `highWaterMark (${highWaterMark}) must not exceed maxQueueBytes (${maxQueueBytes})`,
    );
  }
  const replay: ReplayLimits = {
    maxCount: positiveInt('replay.maxCount', o.replay?.maxCount ?? DEFAULT_REPLAY_LIMITS.maxCount),
    maxBytes: positiveInt('replay.maxBytes', o.replay?.maxBytes ?? DEFAULT_REPLAY_LIMITS.maxBytes),
    maxAgeMs: positiveInt('replay.maxAgeMs', o.replay?.maxAgeMs ?? DEFAULT_REPLAY_LIMITS.maxAgeMs),
    tolerableDisconnectMs: nonNegativeInt(
      'replay.tolerableDisconnectMs',
      o.replay?.tolerableDisconnectMs ?? DEFAULT_REPLAY_LIMITS.tolerableDisconnectMs,
    ),
  };
  let allowedOrigins: Set<string> | undefined;
  if (o.allowedOrigins !== undefined) {
    allowedOrigins = new Set();
    for (const origin of o.allowedOrigins) {
      let url: URL;
      try {
        url = new URL(origin);
      } catch {
        throw new InvalidOptionError(
          `allowedOrigins: '${origin}' is not an origin such as 'https://app.example.com'`,
        );
      }
      if (url.origin === 'null' || url.origin !== origin.replace(/\/$/, '').toLowerCase()) {
        throw new InvalidOptionError(
          `allowedOrigins: '${origin}' is not an exact origin (scheme://host[:port])`,
        );
      }
      allowedOrigins.add(url.origin);
    }
  }
  const stateless = o.stateless ?? DEFAULTS.stateless;
  if (o.authenticate !== undefined && typeof o.authenticate !== 'function') {
    throw new InvalidOptionError('authenticate must be a function (req) => { principal, expiresAt? } | null');
  }
  return {
    mode,
    streamAfterMs: nonNegativeInt('streamAfterMs', o.streamAfterMs ?? DEFAULTS.streamAfterMs),
    keepaliveMs: nonNegativeInt('keepaliveMs', o.keepaliveMs ?? DEFAULTS.keepaliveMs),
    retryMs: nonNegativeInt('retryMs', o.retryMs ?? DEFAULTS.retryMs),
    maxBodyBytes: positiveInt('maxBodyBytes', o.maxBodyBytes ?? DEFAULTS.maxBodyBytes),
    jsonLimits: {
      maxDepth: positiveInt('jsonLimits.maxDepth', o.jsonLimits?.maxDepth ?? DEFAULT_JSON_LIMITS.maxDepth),
      maxKeys: positiveInt('jsonLimits.maxKeys', o.jsonLimits?.maxKeys ?? DEFAULT_JSON_LIMITS.maxKeys),
      maxValues: positiveInt(
        'jsonLimits.maxValues',
        o.jsonLimits?.maxValues ?? DEFAULT_JSON_LIMITS.maxValues,
      ),
    },
    maxSessions: positiveInt('maxSessions', o.maxSessions ?? DEFAULTS.maxSessions),
    sessionIdleMs: positiveInt('sessionIdleMs', o.sessionIdleMs ?? DEFAULTS.sessionIdleMs),
    hibernateAfterMs: hibernateAfterMsOf(o.hibernateAfterMs, stateless),
    clientLimits: clientLimits(o.clientLimits),
    maxInflightPerSession: positiveInt(
      'maxInflightPerSession',
      o.maxInflightPerSession ?? DEFAULTS.maxInflightPerSession,
    ),
    maxStreamsPerSession: positiveInt(
      'maxStreamsPerSession',
      o.maxStreamsPerSession ?? DEFAULTS.maxStreamsPerSession,
    ),
    maxQueueBytes,
    highWaterMark,
    replay,
    replayBudget: {
      maxTotalBytes: positiveInt(
        'replayBudget.maxTotalBytes',
        o.replayBudget?.maxTotalBytes ?? DEFAULT_REPLAY_BUDGET.maxTotalBytes,
      ),
      maxFinishedStreams: positiveInt(
        'replayBudget.maxFinishedStreams',
        o.replayBudget?.maxFinishedStreams ?? DEFAULT_REPLAY_BUDGET.maxFinishedStreams,
      ),
    },
    eventStore: o.eventStore,
    streamGraceMs: nonNegativeInt('streamGraceMs', o.streamGraceMs ?? DEFAULTS.streamGraceMs),
    orphanTimeoutMs: positiveInt('orphanTimeoutMs', o.orphanTimeoutMs ?? DEFAULTS.orphanTimeoutMs),
    pacingMs: nonNegativeInt('pacingMs', o.pacingMs ?? DEFAULTS.pacingMs),
    stateless,
    enableGetStream: !stateless && (o.enableGetStream ?? DEFAULTS.enableGetStream),
    enableDelete: !stateless && (o.enableDelete ?? DEFAULTS.enableDelete),
    sessionIdPrefix: sessionIdPrefixOf(o.sessionIdPrefix),
    allowedOrigins,
    allowedHosts: allowedHostsOf(o.allowedHosts ?? DEFAULTS.allowedHosts),
    authenticate: o.authenticate,
    revalidateMs: nonNegativeInt('revalidateMs', o.revalidateMs ?? DEFAULTS.revalidateMs),
    resourceMetadataUrl: o.resourceMetadataUrl,
    onSessionStart: o.onSessionStart,
    onSessionEnd: o.onSessionEnd,
    logger: o.logger,
    metrics: o.metrics ?? DEFAULTS.metrics,
    probe: o.probe,
    tracing: tracingOf(o.tracing),
    fastDispatch: o.fastDispatch ?? DEFAULTS.fastDispatch,
    now: o.now ?? Date.now,
    tasks: tasksOf(o.tasks),
  };
}
