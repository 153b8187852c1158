/**
 * What Sluice does with a server it built for one request (a 2026-07-28 request's, a stateless-mode
 * request's) once it has closed it: every `Map` and `Set` the Protocol holds in its own fields (its
 * request and notification handler tables, its response, progress and timeout tables, its logging
 * levels) is swapped for one shared table that stays empty.
 *
 * Why: a dead server must not stay reachable with its tables. Two things kept it reachable through
 * every scavenge until the next full collection, so each call promoted it:
 * - V8 pretenures allocation sites whose objects keep surviving scavenges: a server per request
 *   built with `registerTool` ended up with dead old-generation objects reaching its handler
 *   tables, whose closures reach the whole server (8.5–9.2 KB per call on Node 20; docs/benchmarks.md,
 *   "A closed server per request lets go of its tables");
 * - on Node 22 and 24, the SDK's own function literals assigned to properties (the `Server`
 *   constructor's `isMessageIgnored`, `connect`'s transport handlers) are born in the old generation
 *   and keep their context, the server itself, until a full collection (2 KB per call on Node 24
 *   once the bridge transport let go of the request; docs/benchmarks.md, "Function literals
 *   assigned to properties").
 * The server object is still kept by those closures; what it reaches no longer is. The
 * registrations (tools, prompts, resources) stay as they were: they hang off the `McpServer`, which
 * the emptied tables no longer reach.
 *
 * A server that was released cannot serve again: `createServer` must return a fresh server per call
 * (or be wrapped in `statelessSafe` to share one), and `assertDrivable` refuses a released one. The
 * shared tables read as empty and ignore what is put in them, so a released server used anyway (a
 * tool registered on it later, a late handler's cleanup) neither throws nor keeps anything.
 */

const released = new WeakSet<object>();

/** Every released server's maps: empty, and staying so (`set` keeps nothing). */
class EmptyMap extends Map<unknown, unknown> {
  override set(): this {
    return this;
  }
}

/** Every released server's sets: empty, and staying so (`add` keeps nothing). */
class EmptySet extends Set<unknown> {
  override add(): this {
    return this;
  }
}

const EMPTY_MAP = new EmptyMap();
const EMPTY_SET = new EmptySet();

/** Swaps a closed server's tables for the shared empty ones (see above). Call it only after its `close()` has resolved. */
export function releaseClosed(server: object): void {
  const outer = server as Record<string, unknown>;
  const wrapped = outer['server'];
  // An McpServer wraps the low-level Server (which extends Protocol) as `.server`.
  const inner =
    typeof wrapped === 'object' && wrapped !== null ? (wrapped as Record<string, unknown>) : outer;
  // Connected again already (a createServer that hands one server out twice): it is serving.
  if (inner['transport'] !== undefined) return;
  released.add(server);
  for (const k of Object.keys(inner)) {
    const v = inner[k];
    if (v instanceof Map) inner[k] = EMPTY_MAP;
    else if (v instanceof Set) inner[k] = EMPTY_SET;
  }
}

/**
 * Closes a server Sluice served, then (with `release`) empties its tables as above;
 * `failed` gets what a rejected close threw.
 */
export function closeServed(
  server: { close(): Promise<void> },
  release: boolean,
  failed: (error: unknown) => void,
): void {
  server
    .close()
    .then(() => {
      if (release) releaseClosed(server);
    })
    .catch(failed);
}

/** Whether Sluice has released `server` (it served a request and was closed). */
export function wasReleased(server: object): boolean {
  return released.has(server);
}
