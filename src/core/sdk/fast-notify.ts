/**
 * `extra.sendNotification` for SDK v1 servers, without the SDK's two async layers per event.
 *
 * The v1 Protocol builds each request's `extra.sendNotification` as an async closure that awaits the
 * async `Protocol.notification()`, which awaits `transport.send()`: two promises, three microtask
 * hops and a debounce check per progress event, before the one synchronous call that matters —
 * `transport.send(message, { relatedRequestId })`. Under the fast dispatch Sluice wraps the server's
 * request handlers once (at connect) so that each handler's `extra.sendNotification` is replaced by
 * a plain function that does what the SDK's does, in the same order, and then that same send:
 * - the request was cancelled (`extra.signal` aborted): nothing is sent, as in the SDK;
 * - the server is no longer connected to this transport: the SDK's own function runs (it rejects
 *   with "Not connected", or sends where the SDK would);
 * - `assertNotificationCapability(method)` runs, its error rejects the returned promise;
 * - the message is `{ ...notification, jsonrpc: '2.0' }` exactly as the SDK builds it, routed by the
 *   same transport send: same bytes, event ids, replay copy, coalescing key, backpressure wait and
 *   order relative to the request's other messages (the SDK's send also runs synchronously within
 *   the call). Notifications after the request finished go where they went before (routing decides).
 *   Progress, the one notification a tool sends per unit of work, is serialized without the message
 *   object (the notification's own JSON with `"jsonrpc":"2.0"` appended, which is the message's JSON
 *   when the notification is a plain object: `plain`; the common shape is put together from pieces
 *   without a generic stringify, jsonrpc/progress-json.ts, whose parts go along for the replay store
 *   to keep as a run of values) and handed to the target's `routeProgress`, which does what `route`
 *   does with that message.
 * A request that belongs to a task (`extra.taskId`: the SDK queues its notifications for
 * `tasks/result`) keeps the SDK's function. The shape relied on is checked once: a v1 Protocol whose
 * `notification` is the base class's own (a subclass that overrides it keeps its override), with a
 * `Map` of request handlers and this transport connected. SDK v2 servers are left alone: their
 * notify runs the negotiated era's codec and envelope (`_notificationViaCodec`), which Sluice does
 * not repeat, so they always take the SDK path.
 */
import { coalesceKeyOf } from '../../jsonrpc/partial.js';
import { ProgressJson } from '../../jsonrpc/progress-json.js';
import type { BridgeTransport } from './bridge-transport.js';

type Handler = (request: unknown, extra: unknown) => unknown;

export interface V1Protocol {
  _requestHandlers: Map<string, Handler>;
  _transport?: unknown;
  assertNotificationCapability(method: string): void;
}

/** The fields of the SDK's per-request `extra` read or replaced here. */
interface RequestExtra {
  signal?: unknown;
  requestId?: unknown;
  taskId?: unknown;
  sendNotification?: unknown;
}

export type Notify = (notification: { method: string; params?: unknown }) => Promise<void>;

/** Returned when nothing is awaited: one shared settled promise, as the transport's send does. */
const SENT: Promise<void> = Promise.resolve();

/** The prototype in `o`'s chain that defines `key` (undefined if none does, or `o` itself does). */
function ownerOf(o: object, key: string): object | undefined {
  if (Object.hasOwn(o, key)) return undefined;
  for (
    let p = Object.getPrototypeOf(o) as object | null;
    p !== null;
    p = Object.getPrototypeOf(p) as object | null
  )
    if (Object.hasOwn(p, key)) return p;
  return undefined;
}

function v1ProtocolOf(server: unknown, transport: BridgeTransport): V1Protocol | undefined {
  // McpServer wraps the low-level Server (which extends Protocol) as `.server`.
  const inner = ((server as { server?: unknown }).server ?? server) as Record<string, unknown> | null;
  if (typeof inner !== 'object' || inner === null) return undefined;
  // SDK v2 markers: its notify path is era-specific (see the module note).
  if (
    typeof inner['_notificationViaCodec'] === 'function' ||
    typeof inner['_envelopeOutbound'] === 'function'
  )
    return undefined;
  if (
    !(inner['_requestHandlers'] instanceof Map) ||
    typeof inner['notification'] !== 'function' ||
    typeof inner['_onrequest'] !== 'function' ||
    typeof inner['assertNotificationCapability'] !== 'function' ||
    inner['_transport'] !== transport
  )
    return undefined;
  // `notification` must be the Protocol base class's (the one that defines `_onrequest`).
  const base = ownerOf(inner, '_onrequest');
  if (base === undefined || ownerOf(inner, 'notification') !== base) return undefined;
  return inner as unknown as V1Protocol;
}

/**
 * Replaces `extra.sendNotification` of every request the server handles from now on (see the
 * module note). The server's v1 Protocol when installed (fast-request.ts runs its requests);
 * undefined when the shape is not the one relied on (nothing changed).
 */
export function fastNotifyOn(server: unknown, transport: BridgeTransport): V1Protocol | undefined {
  const p = v1ProtocolOf(server, transport);
  if (p === undefined) return undefined;
  // A server closed and connected again (to another session's transport) is wrapped once.
  if (p._requestHandlers instanceof FastHandlers) p._requestHandlers.retarget(transport);
  else p._requestHandlers = new FastHandlers(p, transport, p._requestHandlers);
  return p;
}

/**
 * The handlers FastHandlers made (one per method a server was asked for, never per request), each
 * to the handler it wraps.
 */
const ORIGINAL = new WeakMap<Handler, Handler>();

/** The handler the server registered for `method`, unwrapped (undefined: none). */
export function handlerOf(p: V1Protocol, method: string): Handler | undefined {
  // Read past FastHandlers.get, which would wrap the entry for the SDK's path (a closure per method,
  // per request for a server built per request) only for fast-request.ts to unwrap it again.
  const h = Map.prototype.get.call(p._requestHandlers, method) as Handler | undefined;
  return h === undefined ? undefined : (ORIGINAL.get(h) ?? h);
}

/**
 * The server's request handler table; each handler is wrapped so that its `extra` gets the fast
 * `sendNotification`. Handlers registered later (a tool added after connect) are wrapped too. A
 * handler is wrapped the first time the Protocol looks it up (`_onrequest` reads the table with
 * `get`), not when stored: an idle session has been asked for `initialize` alone, and a closure
 * and its context for each of the other methods would be about 100 bytes each on every session
 * (docs/benchmarks.md, idle memory).
 */
class FastHandlers extends Map<string, Handler> {
  readonly #p: V1Protocol;
  /** The transport the server is connected to now. */
  #t: BridgeTransport;

  constructor(p: V1Protocol, t: BridgeTransport, handlers: Map<string, Handler>) {
    super();
    this.#p = p;
    this.#t = t;
    for (const [method, h] of handlers) this.set(method, h);
  }

  /** The server was connected to another transport. */
  retarget(t: BridgeTransport): void {
    this.#t = t;
  }

  override get(method: string): Handler | undefined {
    const handler = super.get(method);
    if (handler === undefined || ORIGINAL.has(handler)) return handler;
    const wrapped: Handler = (request, extra) => {
      fasten(this.#p, this.#t, extra as RequestExtra);
      return handler(request, extra);
    };
    ORIGINAL.set(wrapped, handler);
    super.set(method, wrapped);
    return wrapped;
  }
}

/**
 * Whether `{ ...n, jsonrpc: '2.0' }` (the SDK's message) serializes as `n` does with `jsonrpc` added
 * last: both read `n`'s own enumerable properties in the same order, unless `n` has a `toJSON`, or
 * its own `jsonrpc` (which keeps its place in the spread), or an `id` (then it is no notification
 * to route as one).
 */
function plain(n: object): boolean {
  return (
    (n as { toJSON?: unknown }).toJSON === undefined &&
    !Object.hasOwn(n, 'jsonrpc') &&
    !Object.hasOwn(n, 'id')
  );
}

/** The SDK's message text for a plain notification (see `plain`), without building the message. */
function serialized(n: object): string {
  const json = JSON.stringify(n);
  return `${json.slice(0, -1)},"jsonrpc":"2.0"}`;
}

function fasten(p: V1Protocol, t: BridgeTransport, extra: RequestExtra): void {
  const original = extra.sendNotification;
  const signal = extra.signal;
  const id = extra.requestId;
  if (
    typeof original !== 'function' ||
    !(signal instanceof AbortSignal) ||
    extra.taskId !== undefined ||
    (typeof id !== 'string' && typeof id !== 'number')
  )
    return;
  extra.sendNotification = notifier(p, t, id, signal, original as Notify);
}

/**
 * The fast `sendNotification` of request `id` (see the module note): `request.aborted` says whether
 * it was cancelled; `original` is the SDK's function, for a server no longer connected to `t`.
 */
export function notifier(
  p: V1Protocol,
  t: BridgeTransport,
  id: string | number,
  request: { readonly aborted: boolean },
  original: Notify,
): Notify {
  // One options object per request, made at its first message other than progress (most requests
  // send none): the transport only reads it.
  let options: Readonly<{ relatedRequestId: string | number }> | undefined;
  // Made on the request's first progress: most requests send none.
  let pj: ProgressJson | undefined;
  return (notification) => {
    if (request.aborted) return SENT;
    if (p._transport !== t) return original(notification);
    try {
      p.assertNotificationCapability(notification.method);
      if (notification.method === 'notifications/progress' && plain(notification)) {
        // The common shape without a generic stringify; its parts let the replay store keep a run.
        pj ??= new ProgressJson();
        const e = pj.read(notification);
        const sent =
          e !== undefined
            ? t.sendProgress(e.json, e.key, id, e)
            : t.sendProgress(serialized(notification), coalesceKeyOf(notification as never), id);
        if (sent !== false) return sent;
      }
      options ??= Object.freeze({ relatedRequestId: id });
      return t.send({ ...notification, jsonrpc: '2.0' } as never, options);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}
