/**
 * Closing a served SDK server without the stack trace nobody can see. When its transport closes,
 * the SDK's Protocol (`_onclose`, SDK v1 and v2 alike) builds a ConnectionClosed error for the
 * response handlers still pending, then calls the application's `onclose`, then rejects those
 * handlers with the error. With no handler pending the error is dropped unseen, yet capturing its
 * stack trace costs about 6 µs — most of the close of a server, which a 2026-07-28 era request with
 * a server per request pays on every call (docs/benchmarks.md, section (h)).
 *
 * So when the Protocol has no response handler pending and no request handler in flight (whose
 * abort listeners would run), does not override `_onclose`, and keeps `onclose` as a plain data
 * property, the transport's close runs with `Error.stackTraceLimit = 0` until the application's
 * `onclose`, which runs with the application's limit back in place (the limit and the property are
 * restored before it is called; a close that never reaches it restores them when it returns).
 * Anything else closes as before. Only the Protocol's own code runs between the two points: what
 * the transport's `onclose` is, BridgeTransport checks (only the Protocol's `connect` set it).
 */

/** The Protocol internals this relies on (SDK v1 `shared/protocol.js`, SDK v2 likewise). */
interface ProtocolState {
  _responseHandlers: unknown;
  _requestHandlerAbortControllers: unknown;
  _onclose: unknown;
  onclose: unknown;
}

const isEmptyMap = (v: unknown): boolean => v instanceof Map && v.size === 0;

/** Whether `_onclose` is the base class's own (no subclass of the Protocol overrides it). */
function baseOnclose(p: object): boolean {
  if (Object.hasOwn(p, '_onclose')) return false;
  let base: object | undefined;
  for (let o: object | null = Object.getPrototypeOf(p); o !== null; o = Object.getPrototypeOf(o)) {
    if (Object.hasOwn(o, '_onclose')) base = o;
  }
  return base !== undefined && (p as ProtocolState)._onclose === (base as ProtocolState)._onclose;
}

/** Whether `onclose` can be swapped and put back exactly: a writable own data property, or none at all. */
function plainOnclose(p: object): boolean {
  const own = Object.getOwnPropertyDescriptor(p, 'onclose');
  if (own !== undefined) return own.writable === true && own.configurable === true;
  if (!Object.isExtensible(p)) return false;
  for (let o: object | null = Object.getPrototypeOf(p); o !== null; o = Object.getPrototypeOf(o)) {
    if (Object.hasOwn(o, 'onclose')) return false;
  }
  return true;
}

/** Whether the close of `protocol` can run without stack traces up to its `onclose` (see above). */
export function canCloseQuietly(protocol: object): boolean {
  const p = protocol as Partial<ProtocolState>;
  return (
    isEmptyMap(p._responseHandlers) &&
    isEmptyMap(p._requestHandlerAbortControllers) &&
    typeof p._onclose === 'function' &&
    baseOnclose(protocol) &&
    plainOnclose(protocol)
  );
}

/**
 * Runs `close` (the transport's `onclose`: the Protocol's teardown) without capturing stack traces
 * until the Protocol calls the application's `onclose`, when that is sound (`canCloseQuietly`);
 * otherwise just runs it.
 */
export function closeQuietly(protocol: object, close: () => void): void {
  const limit = Error.stackTraceLimit;
  if (typeof limit !== 'number' || limit === 0 || !canCloseQuietly(protocol)) {
    close();
    return;
  }
  try {
    Error.stackTraceLimit = 0;
  } catch {
    // Error made read-only by the application: close as before.
    close();
    return;
  }
  const p = protocol as ProtocolState;
  const user = p.onclose;
  if (typeof user !== 'function') {
    // No application handler to hand the limit back to first: the Protocol's teardown is all that
    // runs, and `onclose` is left as it is (a wrapper deleted afterwards would have turned the
    // Protocol's properties into a dictionary, about 1.3 KB per close).
    try {
      close();
    } finally {
      Error.stackTraceLimit = limit;
    }
    return;
  }
  // A function here is the Protocol's own property: canCloseQuietly (plainOnclose) refused any
  // `onclose` up its prototype chain, so putting it back restores the property exactly.
  let restored = false;
  const restore = (): void => {
    if (restored) return;
    restored = true;
    Error.stackTraceLimit = limit;
    p.onclose = user;
  };
  // The application's handler, called as the Protocol calls it (`this` the Protocol), after the
  // restore: it sees its own limit and its own property (and may replace it). Made before it is
  // assigned: a function literal assigned to a property is born in V8's old generation and keeps
  // its context (this close's) alive until the next full collection (bridge-transport.ts, DETACHED).
  const wrapped = function (this: unknown): unknown {
    restore();
    return Reflect.apply(user, this, []);
  };
  p.onclose = wrapped;
  try {
    close();
  } finally {
    restore();
  }
}
